package main

import (
	"net/http"
	"testing"

	echo4 "github.com/labstack/echo/v4"
	"github.com/labstack/echo/v5"

	"github.com/k6labels/k6labels/examples/internal/servetest"
	"github.com/k6labels/k6labels/examples/internal/show"
)

// k6 requests are named by the route path, a group's prefix included,
// whatever ids the URL carries; every CPU sample of the named request's work
// carries the route path.
func TestNamedByRoutePath(t *testing.T) {
	for _, v := range versions {
		t.Run(v.name, func(t *testing.T) {
			base := servetest.Start(t, v.app(http.HandlerFunc(show.Handler), true))
			servetest.CheckNamed(t, base, "/bike/%d", "/bike/:id")
			servetest.CheckNamed(t, base, "/api/car/%d", "/api/car/:id")
			spin := servetest.Start(t, v.app(http.HandlerFunc(servetest.Spin), true))
			servetest.CheckNamedProfile(t, spin+"/bike/7?x=1", "/bike/:id")
		})
	}
}

// Why the recipes need e.Use: e.Pre runs before routing, where the route
// path is not known yet, and the request keeps the name k6 sent.
func TestRoutePathBeforeRouting(t *testing.T) {
	for _, v := range versions {
		t.Run(v.name, func(t *testing.T) {
			base := servetest.Start(t, v.pre(http.HandlerFunc(show.Handler)))
			url := base + "/bike/42?x=1"
			if got := servetest.Get(t, url, servetest.NamedBaggage(url))["k6_name"]; got != base+"/bike/42" {
				t.Errorf("e.Pre: k6_name %q, want the URL k6 sent, without its query", got)
			}
		})
	}
}

// BenchmarkNaming compares a k6 request named by its route path with an
// unnamed one (k6_name the URL k6 sent), through the whole application, on
// each Echo major version, for the URLs with ids that k6 sends by default.
// The ratio is read with benchstat; see docs/frameworks.md.
func BenchmarkNaming(b *testing.B) {
	const base = "http://127.0.0.1:8083"
	nop := func(*echo.Context) error { return nil }
	b.Run("echo=v5", func(b *testing.B) {
		servetest.BenchNaming(b, base, servetest.Variant{Name: "unnamed", Handler: newEcho(nop)},
			servetest.Variant{Name: "named", Handler: newNamedEcho(nop)})
	})
	nopV4 := func(echo4.Context) error { return nil }
	b.Run("echo=v4", func(b *testing.B) {
		servetest.BenchNaming(b, base, servetest.Variant{Name: "unnamed", Handler: newEchoV4(nopV4)},
			servetest.Variant{Name: "named", Handler: newNamedEchoV4(nopV4)})
	})
}
