package main

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/k6labels/k6labels"
)

// newNamedEcho is the application, h serving each route, with every k6
// request named by its Echo route path ("/bike/:id"), not by the URL k6
// sent.
func newNamedEcho(h echo.HandlerFunc) *echo.Echo {
	e := echo.New()
	e.Use(routeLabels())
	e.GET("/bike/:id", h)
	e.Group("/api").GET("/car/:id", h)
	return e
}

// routeLabels is echo.WrapMiddleware(k6labels.Middleware(opts...)) with
// k6_name the route path c.Path() ("/bike/:id"). e.Use runs it after routing
// (e.Pre would run it before, with no path yet). It puts the path in
// Request.Pattern, as Echo v5, chi and http.ServeMux do themselves, where
// WithRoutePattern reads it.
func routeLabels(opts ...k6labels.Option) echo.MiddlewareFunc {
	label := k6labels.Middleware(append(opts, k6labels.WithRoutePattern())...)
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) (err error) {
			r := c.Request()
			r.Pattern = c.Path()
			label(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				c.SetRequest(r)
				c.SetResponse(echo.NewResponse(w, c.Echo()))
				err = next(c)
			})).ServeHTTP(c.Response(), r)
			return err
		}
	}
}
