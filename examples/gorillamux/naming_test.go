package main

import (
	"net/http"
	"testing"

	"github.com/gorilla/mux"

	"github.com/k6labels/k6labels"
	"github.com/k6labels/k6labels/examples/internal/servetest"
	"github.com/k6labels/k6labels/examples/internal/show"
)

// k6 requests are named by the route's path template, a subrouter's prefix
// included, whatever ids the URL carries.
func TestNamedByPathTemplate(t *testing.T) {
	base := servetest.Start(t, newNamedRouter(show.Handler))
	servetest.CheckNamed(t, base, "/bike/%d", "/bike/{id}")
	servetest.CheckNamed(t, base, "/api/car/%d", "/api/car/{id}")
}

// A route without a path template keeps the name k6 sent.
func TestNamedWithoutTemplate(t *testing.T) {
	r := mux.NewRouter()
	r.Use(k6labels.Middleware(k6labels.WithNameFormatter(pathTemplate)))
	r.Methods(http.MethodGet).HandlerFunc(show.Handler)
	base := servetest.Start(t, r)
	url := base + "/anything/7?x=1"
	if got := servetest.Get(t, url, servetest.NamedBaggage(url))["k6_name"]; got != base+"/anything/7" {
		t.Errorf("k6_name %q, want the URL k6 sent, without its query", got)
	}
}

// BenchmarkNaming compares a k6 request named by its path template with an
// unnamed one (k6_name the URL k6 sent), through the whole router, for the
// URLs with ids that k6 sends by default. The ratio is read with benchstat;
// see docs/frameworks.md.
func BenchmarkNaming(b *testing.B) {
	nop := func(http.ResponseWriter, *http.Request) {}
	unnamed := mux.NewRouter()
	unnamed.Use(k6labels.Middleware())
	unnamed.HandleFunc("/bike/{id}", nop).Methods(http.MethodGet)
	servetest.BenchNaming(b, "http://127.0.0.1:8082",
		servetest.Variant{Name: "unnamed", Handler: unnamed},
		servetest.Variant{Name: "named", Handler: newNamedRouter(nop)})
}
