package main

import (
	"net/http"
	"testing"

	"github.com/labstack/echo/v5"

	"github.com/k6labels/k6labels"
	"github.com/k6labels/k6labels/examples/internal/servetest"
)

// k6 requests are named by the route path, a group's prefix included,
// whatever ids the URL carries.
func TestNamedByRoutePath(t *testing.T) {
	base := servetest.Start(t, newNamedEcho(bike))
	servetest.CheckNamed(t, base, "/bike/%d", "/bike/:id")
	servetest.CheckNamed(t, base, "/api/car/%d", "/api/car/:id")
}

// Why the recipe needs e.Use: e.Pre runs before routing, where the request
// has no pattern yet, and the request keeps the name k6 sent.
func TestRoutePathBeforeRouting(t *testing.T) {
	e := echo.New()
	e.Pre(echo.WrapMiddleware(k6labels.Middleware(k6labels.WithRoutePattern())))
	e.GET("/bike/:id", bike)
	base := servetest.Start(t, e)
	url := base + "/bike/42?x=1"
	if got := servetest.Get(t, url, servetest.NamedBaggage(url))["k6_name"]; got != base+"/bike/42" {
		t.Errorf("e.Pre: k6_name %q, want the URL k6 sent, without its query", got)
	}
}

// BenchmarkNaming compares a k6 request named by its route path with an
// unnamed one (k6_name the URL k6 sent), through the whole application, for
// the URLs with ids that k6 sends by default. The ratio is read with
// benchstat; see docs/frameworks.md.
func BenchmarkNaming(b *testing.B) {
	nop := func(*echo.Context) error { return nil }
	unnamed := echo.New()
	unnamed.Use(echo.WrapMiddleware(k6labels.Middleware()))
	unnamed.GET("/bike/:id", nop)
	for _, bc := range []struct {
		name string
		h    http.Handler
	}{
		{"unnamed", unnamed},
		{"named", newNamedEcho(nop)},
	} {
		b.Run("naming="+bc.name, func(b *testing.B) {
			servetest.BenchServe(b, bc.h, servetest.K6Requests("http://127.0.0.1:8089", "/bike/%d", 100))
		})
	}
}
