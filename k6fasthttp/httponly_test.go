package k6fasthttp_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/k6labels/k6labels"
	"github.com/k6labels/k6labels/k6fasthttp"
)

// The naming options of the net/http handler see no *http.Request in
// fasthttp: NewHandler refuses them at construction instead of ignoring them.
func TestHTTPOnlyOptionsRejected(t *testing.T) {
	for name, opt := range map[string]k6labels.Option{
		"WithNameFormatter": k6labels.WithNameFormatter(func(*http.Request, string) string { return "x" }),
		"WithRoutePattern":  k6labels.WithRoutePattern(),
		"WithServeMux":      k6labels.WithServeMux(http.NewServeMux()),
	} {
		msg := func() (msg string) {
			defer func() { msg, _ = recover().(string) }()
			k6fasthttp.NewHandler(func(*fasthttp.RequestCtx) {}, opt)
			return ""
		}()
		if !strings.Contains(msg, name) {
			t.Errorf("NewHandler with %s: panic %q, want one naming the option", name, msg)
		}
	}
}
