package main

import (
	"net/http"
	"testing"

	echo4 "github.com/labstack/echo/v4"
	"github.com/labstack/echo/v5"

	"github.com/k6labels/k6labels"
	"github.com/k6labels/k6labels/examples/internal/servetest"
	"github.com/k6labels/k6labels/examples/internal/show"
)

// versions builds the application on each Echo major version, every route
// (and POST /upload) served by the net/http handler h: named names k6
// requests by route path; pre puts that naming middleware in e.Pre instead.
var versions = []struct {
	name string
	app  func(h http.Handler, named bool) http.Handler
	pre  func(h http.Handler) http.Handler
}{
	{"v5", appV5, func(h http.Handler) http.Handler {
		e := echo.New()
		e.Pre(k6Labels(k6labels.WithRoutePattern()))
		e.GET("/bike/:id", echo.WrapHandler(h))
		return e
	}},
	{"v4", appV4, func(h http.Handler) http.Handler {
		e := echo4.New()
		e.Pre(k6LabelsV4(k6labels.WithRoutePattern()))
		e.GET("/bike/:id", echo4.WrapHandler(h))
		return e
	}},
}

func appV5(h http.Handler, named bool) http.Handler {
	var opts []k6labels.Option
	if named {
		opts = append(opts, k6labels.WithRoutePattern())
	}
	e := newEcho(echo.WrapHandler(h), opts...)
	e.POST("/upload", echo.WrapHandler(h))
	return e
}

func appV4(h http.Handler, named bool) http.Handler {
	e := newEchoV4(echo4.WrapHandler(h), named)
	e.POST("/upload", echo4.WrapHandler(h))
	return e
}

// The handlers of main (bike, bikeV4) see the k6 labels.
func TestLabels(t *testing.T) {
	servetest.CheckLabels(t, servetest.Start(t, newEcho(bike))+"/bike/42")
	servetest.CheckLabels(t, servetest.Start(t, newEchoV4(bikeV4, false))+"/bike/42")
}

func TestProfile(t *testing.T) {
	for _, v := range versions {
		t.Run(v.name, func(t *testing.T) {
			servetest.CheckProfile(t, servetest.Start(t, v.app(http.HandlerFunc(servetest.Spin), false))+"/bike/1")
		})
	}
}

// Uploads of several MB parsed with a small maxMemory by an Echo handler
// under the wrapped middleware leave no temp file, with and without k6
// baggage, also when the handler panics with no recovery middleware: the
// net/http handler inside k6Labels removes the files of the request copy it
// handed on.
func TestMultipartFilesRemoved(t *testing.T) {
	for _, v := range versions {
		t.Run(v.name, func(t *testing.T) {
			servetest.CheckUploadsLeaveNoFiles(t, func(route http.Handler) http.Handler { return v.app(route, false) })
		})
	}
}

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
			servetest.Variant{Name: "named", Handler: newEcho(nop, k6labels.WithRoutePattern())})
	})
	nopV4 := func(echo4.Context) error { return nil }
	b.Run("echo=v4", func(b *testing.B) {
		servetest.BenchNaming(b, base, servetest.Variant{Name: "unnamed", Handler: newEchoV4(nopV4, false)},
			servetest.Variant{Name: "named", Handler: newEchoV4(nopV4, true)})
	})
}
