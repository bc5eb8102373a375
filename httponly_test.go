package k6labels

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The naming options of the HTTP handler are never silently ignored: the
// handler takes them, NewLabeler (which the gRPC interceptors and k6fasthttp
// build on) panics with a message that names the option and the way out.
func TestHTTPOnlyOptionsRejected(t *testing.T) {
	t.Parallel()
	for name, opt := range map[string]Option{
		"WithNameFormatter": WithNameFormatter(func(*http.Request, string) string { return "x" }),
		"WithRoutePattern":  WithRoutePattern(),
		"WithServeMux":      WithServeMux(http.NewServeMux()),
	} {
		for _, mux := range []*http.ServeMux{nil, http.NewServeMux()} {
			if name != "WithServeMux" && mux != nil {
				continue
			}
			if name == "WithServeMux" {
				opt = WithServeMux(mux)
			}
			msg := func() (msg string) {
				defer func() { msg, _ = recover().(string) }()
				NewLabeler(WithMaxLabels(3), opt)
				return ""
			}()
			if !strings.Contains(msg, name) || !strings.Contains(msg, "WithNameFunc") {
				t.Errorf("NewLabeler(%s): panic %q, want one naming the option and WithNameFunc", name, msg)
			}
			// The HTTP handler and Middleware take it.
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			NewHandler(http.NotFoundHandler(), opt).ServeHTTP(httptest.NewRecorder(), r)
			Middleware(opt)(http.NotFoundHandler()).ServeHTTP(httptest.NewRecorder(), r)
		}
	}
	// The other options still make a Labeler.
	NewLabeler(WithNameFunc(nil), WithQueryStrings(true), WithMaxValuesPerLabel(5))
}
