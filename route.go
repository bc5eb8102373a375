package k6labels

import (
	"net/http"
	"unicode/utf8"
)

// routeName returns the k6_name value for r under the route pattern options:
// the pattern the mux matched (or, with WithServeMux, will match), cleaned
// like any label value, or name, the value k6 sent, when there is none.
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

// cleanValue makes s a valid label value without decoding it: valid UTF-8
// without control characters (each becomes U+FFFD), at most maxBytes long and
// cut on a character boundary. A pattern is text from the program, not a
// baggage value, so a '%' in it is kept as written.
func cleanValue(s string, maxBytes int) string {
	if isPlain(s) {
		return s[:min(len(s), maxBytes)]
	}
	b := make([]byte, 0, min(len(s), maxBytes))
	for _, r := range s {
		if r < 0x20 || 0x7f <= r && r < 0xa0 {
			r = utf8.RuneError
		}
		if len(b)+utf8.RuneLen(r) > maxBytes {
			break
		}
		b = utf8.AppendRune(b, r)
	}
	return string(b)
}
