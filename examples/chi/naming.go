package main

import (
	"net/http"
	"sync"

	"github.com/go-chi/chi/v5"

	"github.com/k6labels/k6labels"
)

// newNamedRouter is the application, h serving each route, with every k6
// request named by its chi route pattern ("/bike/{id}"), not by the URL k6
// sent. chi runs r.Use middleware before routing, where the pattern is not
// known yet; a Group's middleware (or r.With's) runs at the endpoint, after
// routing, where chi has set Request.Pattern for WithRoutePattern to read.
// A mounted subrouter (r.Route, r.Mount) routes after its parent's endpoint,
// so it takes a Group of its own.
func newNamedRouter(h http.HandlerFunc) *chi.Mux {
	label := k6labels.Middleware(k6labels.WithRoutePattern())
	r := chi.NewRouter()
	r.Group(func(r chi.Router) {
		r.Use(label)
		r.Get("/bike/{id}", h)
	})
	r.Route("/api", func(r chi.Router) {
		r.Group(func(r chi.Router) {
			r.Use(label)
			r.Get("/car/{id}", h)
		})
	})
	return r
}

// newNamedWrappedRouter is the same application with the middleware in the
// top-level r.Use, before routing: the hook from routePattern asks the
// router which pattern will match, which routes each k6 request twice.
func newNamedWrappedRouter(h http.HandlerFunc) *chi.Mux {
	r := chi.NewRouter()
	r.Use(k6labels.Middleware(k6labels.WithNameFormatter(routePattern(r))))
	r.Get("/bike/{id}", h)
	r.Route("/api", func(r chi.Router) {
		r.Get("/car/{id}", h)
	})
	return r
}

// routeContexts are the scratch contexts of routePattern's hook: chi's Find
// writes the route parameters it finds into one.
var routeContexts = sync.Pool{New: func() any { return chi.NewRouteContext() }}

// routePattern returns a naming hook that names a request by the pattern mx
// will route it to, mounted subrouters included ("/api/car/{id}"), or by
// the name k6 sent if it matches no route.
func routePattern(mx *chi.Mux) func(r *http.Request, name string) string {
	return func(r *http.Request, name string) string {
		path := r.URL.RawPath
		if path == "" {
			path = r.URL.Path
		}
		rctx := routeContexts.Get().(*chi.Context)
		p := mx.Find(rctx, r.Method, path)
		rctx.Reset()
		routeContexts.Put(rctx)
		if p == "" {
			return name
		}
		return p
	}
}
