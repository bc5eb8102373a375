package main

import (
	"net/http"

	echo4 "github.com/labstack/echo/v4"

	"github.com/k6labels/k6labels"
	"github.com/k6labels/k6labels/examples/internal/show"
)

// startV4 serves the application on Echo v4 at addr.
func startV4(addr string) error {
	e := newEchoV4(bikeV4, false)
	e.HideBanner = true
	return e.Start(addr)
}

// newEchoV4 is newEcho on Echo v4, which does not set Request.Pattern:
// named uses routeLabelsV4, which does, to name k6 requests by route.
func newEchoV4(h echo4.HandlerFunc, named bool) *echo4.Echo {
	e := echo4.New()
	if named {
		e.Use(routeLabelsV4())
	} else {
		e.Use(echo4.WrapMiddleware(k6labels.Middleware()))
	}
	e.GET("/bike/:id", h)
	e.Group("/api").GET("/car/:id", h)
	return e
}

// routeLabelsV4 is echo.WrapMiddleware(k6labels.Middleware(opts...)) with
// k6_name the route path c.Path() ("/bike/:id"). e.Use runs it after routing
// (e.Pre would run it before, with no path yet). It puts the path in
// Request.Pattern, as Echo v5, chi and http.ServeMux do themselves, where
// WithRoutePattern reads it.
func routeLabelsV4(opts ...k6labels.Option) echo4.MiddlewareFunc {
	label := k6labels.Middleware(append(opts, k6labels.WithRoutePattern())...)
	return func(next echo4.HandlerFunc) echo4.HandlerFunc {
		return func(c echo4.Context) (err error) {
			r := c.Request()
			r.Pattern = c.Path()
			label(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				c.SetRequest(r)
				c.SetResponse(echo4.NewResponse(w, c.Echo()))
				err = next(c)
			})).ServeHTTP(c.Response(), r)
			return err
		}
	}
}

func bikeV4(c echo4.Context) error {
	return c.JSON(http.StatusOK, show.Labels(c.Request().Context()))
}
