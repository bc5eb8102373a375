package k6grpc_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/k6labels/k6labels"
	"github.com/k6labels/k6labels/k6grpc"
)

// The naming options of the HTTP handler see no *http.Request in gRPC: the
// interceptors refuse them at construction instead of ignoring them.
func TestHTTPOnlyOptionsRejected(t *testing.T) {
	opts := map[string]k6labels.Option{
		"WithNameFormatter": k6labels.WithNameFormatter(func(*http.Request, string) string { return "x" }),
		"WithRoutePattern":  k6labels.WithRoutePattern(),
		"WithServeMux":      k6labels.WithServeMux(http.NewServeMux()),
	}
	for name, opt := range opts {
		for kind, build := range map[string]func(){
			"unary":  func() { k6grpc.UnaryServerInterceptor(opt) },
			"stream": func() { k6grpc.StreamServerInterceptor(opt) },
		} {
			msg := func() (msg string) {
				defer func() { msg, _ = recover().(string) }()
				build()
				return ""
			}()
			if !strings.Contains(msg, name) {
				t.Errorf("%s interceptor with %s: panic %q, want one naming the option", kind, name, msg)
			}
		}
	}
}
