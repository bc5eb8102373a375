package main

import (
	"github.com/labstack/echo/v5"

	"github.com/k6labels/k6labels"
)

// newNamedEcho is the application, h serving each route, with every k6
// request named by its Echo route path ("/bike/:id"), not by the URL k6
// sent. Echo v5 puts c.Path() in Request.Pattern when it routes, so the
// middleware in e.Use (after routing; e.Pre is before) needs only
// WithRoutePattern.
func newNamedEcho(h echo.HandlerFunc) *echo.Echo {
	e := echo.New()
	e.Use(echo.WrapMiddleware(k6labels.Middleware(k6labels.WithRoutePattern())))
	e.GET("/bike/:id", h)
	e.Group("/api").GET("/car/:id", h)
	return e
}
