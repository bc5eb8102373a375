package k6labels

import (
	"net/http"
	"reflect"
)

// routePattern is the naming hook of WithRoutePattern.
func routePattern(r *http.Request, name string) string {
	if r.Pattern != "" {
		return r.Pattern
	}
	return name
}

// redirectType is the type of the handler ServeMux routes a request to when
// it redirects it.
var redirectType = reflect.TypeOf(http.RedirectHandler("/", http.StatusTemporaryRedirect))

// muxPattern is the naming hook of WithServeMux: the pattern mux has matched,
// or will match, for r, or name if none. A request the mux redirects to add
// a trailing slash is named by the pattern it is redirected to; mux.Handler
// reports that pattern for every method but CONNECT, where it reports the
// path, so CONNECT asks again with the path it is redirected to.
func muxPattern(mux *http.ServeMux, r *http.Request, name string) string {
	if r.Pattern != "" {
		return r.Pattern
	}
	h, p := mux.Handler(r)
	if p != "" && r.Method == http.MethodConnect && reflect.TypeOf(h) == redirectType {
		r2, u := *r, *r.URL
		u.Path, u.RawPath = p, ""
		r2.URL = &u
		if h, p = mux.Handler(&r2); reflect.TypeOf(h) == redirectType {
			p = ""
		}
	}
	if p == "" {
		return name
	}
	return p
}
