package k6labels

import "net/http"

// routeName returns the k6_name value for r under the route pattern options:
// the pattern the mux matched (or, with WithServeMux, will match), cleaned
// like any label value but not percent-decoded (a pattern is the program's
// text, not a baggage value), or name, the value k6 sent, when there is none.
func (l *Labeler) routeName(r *http.Request, name string) string {
	if !l.cfg.routePattern {
		return name
	}
	p := r.Pattern
	if p == "" && l.cfg.mux != nil {
		_, p = l.cfg.mux.Handler(r)
	}
	if p == "" {
		return name
	}
	return cleanValue(p, l.cfg.maxValueBytes)
}
