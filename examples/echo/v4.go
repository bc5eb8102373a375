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

// newEchoV4 is newEcho on Echo v4; named names k6 requests by route path
// with k6labels.WithRoutePattern().
func newEchoV4(h echo4.HandlerFunc, named bool) *echo4.Echo {
	var opts []k6labels.Option
	if named {
		opts = append(opts, k6labels.WithRoutePattern())
	}
	e := echo4.New()
	e.Use(k6LabelsV4(opts...))
	e.GET("/bike/:id", h)
	e.Group("/api").GET("/car/:id", h)
	return e
}

// k6LabelsV4 is k6Labels for Echo v4: the chain runs with the k6 labels,
// the route path c.Path() ("/bike/:id") is in Request.Pattern for
// WithRoutePattern (Echo v4 does not set it; e.Use runs after routing, e.Pre
// before, with no path yet), and c gets back the request it had when the
// chain returns or panics, so that no form is parsed into the labelled copy
// after k6labels removed its files.
func k6LabelsV4(opts ...k6labels.Option) echo4.MiddlewareFunc {
	label := k6labels.Middleware(opts...)
	return func(next echo4.HandlerFunc) echo4.HandlerFunc {
		return func(c echo4.Context) (err error) {
			r := c.Request()
			defer c.SetRequest(r)
			r.Pattern = c.Path()
			label(http.HandlerFunc(func(_ http.ResponseWriter, labelled *http.Request) {
				c.SetRequest(labelled)
				err = next(c)
			})).ServeHTTP(c.Response(), r)
			return err
		}
	}
}

func bikeV4(c echo4.Context) error {
	return c.JSON(http.StatusOK, show.Labels(c.Request().Context()))
}
