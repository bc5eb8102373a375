package main

import (
	"net/http"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/k6labels/k6labels"
	"github.com/k6labels/k6labels/examples/internal/servetest"
	"github.com/k6labels/k6labels/examples/internal/show"
)

// Both recipes name k6 requests by the route pattern, mounted subrouters
// included, whatever ids the URL carries.
func TestNamedByRoutePattern(t *testing.T) {
	for name, newRouter := range map[string]func(http.HandlerFunc) *chi.Mux{
		"Group":   newNamedRouter,
		"wrapped": newNamedWrappedRouter,
	} {
		t.Run(name, func(t *testing.T) {
			base := servetest.Start(t, newRouter(show.Handler))
			servetest.CheckNamed(t, base, "/bike/%d", "/bike/{id}")
			servetest.CheckNamed(t, base, "/api/car/%d", "/api/car/{id}")
		})
	}
}

// On chi versions that do not set Request.Pattern, a hook reading the
// route context does the same, in the same place.
func TestNamedByRouteContext(t *testing.T) {
	r := chi.NewRouter()
	r.Group(func(r chi.Router) {
		r.Use(k6labels.Middleware(k6labels.WithNameFormatter(func(r *http.Request, name string) string {
			if p := chi.RouteContext(r.Context()).RoutePattern(); p != "" {
				return p
			}
			return name
		})))
		r.Get("/bike/{id}", show.Handler)
	})
	servetest.CheckNamed(t, servetest.Start(t, r), "/bike/%d", "/bike/{id}")
}

// The labels of the named request are on the handler's goroutine: every CPU
// sample of its work carries the pattern.
func TestNamedProfile(t *testing.T) {
	base := servetest.Start(t, newNamedRouter(servetest.Spin))
	servetest.CheckNamedProfile(t, base+"/api/car/7?x=1", "/api/car/{id}")
}

// Why the recipe needs a Group: the top-level r.Use runs before routing, and
// so does the Group of a parent for a mounted subrouter's routes. There,
// WithRoutePattern sees no pattern, or only the mount point's.
func TestRoutePatternBeforeRouting(t *testing.T) {
	label := k6labels.Middleware(k6labels.WithRoutePattern())
	r := chi.NewRouter()
	r.Use(label)
	r.Get("/bike/{id}", show.Handler)
	mounted := chi.NewRouter()
	mounted.Group(func(r chi.Router) {
		r.Use(label)
		r.Route("/api", func(r chi.Router) { r.Get("/car/{id}", show.Handler) })
	})
	base, mbase := servetest.Start(t, r), servetest.Start(t, mounted)
	url := base + "/bike/42?x=1"
	if got := servetest.Get(t, url, servetest.NamedBaggage(url))["k6_name"]; got != base+"/bike/42" {
		t.Errorf("top-level r.Use: k6_name %q, want the URL k6 sent, without its query", got)
	}
	url = mbase + "/api/car/7"
	if got := servetest.Get(t, url, servetest.NamedBaggage(url))["k6_name"]; got != "/api/*" {
		t.Errorf("parent's Group over a mounted subrouter: k6_name %q, want the mount point /api/*", got)
	}
}

// BenchmarkNaming compares a k6 request named by its route pattern with an
// unnamed one (k6_name the URL k6 sent), through the whole router, for the
// URLs with ids that k6 sends by default. The ratio is read with benchstat;
// see docs/frameworks.md.
func BenchmarkNaming(b *testing.B) {
	nop := func(http.ResponseWriter, *http.Request) {}
	unnamed := chi.NewRouter()
	unnamed.Use(k6labels.Middleware())
	unnamed.Get("/bike/{id}", nop)
	servetest.BenchNaming(b, "http://127.0.0.1:8081",
		servetest.Variant{Name: "unnamed", Handler: unnamed},
		servetest.Variant{Name: "Group", Handler: newNamedRouter(nop)},
		servetest.Variant{Name: "wrapped", Handler: newNamedWrappedRouter(nop)})
}
