package main

import (
	"net/http"

	"github.com/gorilla/mux"

	"github.com/k6labels/k6labels"
)

// newNamedRouter is the application, h serving each route, with every k6
// request named by its gorilla/mux path template ("/bike/{id}"), not by the
// URL k6 sent. gorilla/mux runs r.Use middleware after matching, so the
// hook finds the route with mux.CurrentRoute; a subrouter's template
// includes its prefix ("/api/car/{id}").
func newNamedRouter(h http.HandlerFunc) *mux.Router {
	r := mux.NewRouter()
	r.Use(k6labels.Middleware(k6labels.WithNameFormatter(pathTemplate)))
	r.HandleFunc("/bike/{id}", h).Methods(http.MethodGet)
	r.PathPrefix("/api").Subrouter().HandleFunc("/car/{id}", h).Methods(http.MethodGet)
	return r
}

// pathTemplate is a naming hook: the path template of the route that
// matched r, or name (the name k6 sent) if there is none.
func pathTemplate(r *http.Request, name string) string {
	if route := mux.CurrentRoute(r); route != nil {
		if t, err := route.GetPathTemplate(); err == nil {
			return t
		}
	}
	return name
}
