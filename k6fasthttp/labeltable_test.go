package k6fasthttp_test

import (
	"fmt"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/k6labels/k6labels/internal/labeltable"
	"github.com/k6labels/k6labels/k6fasthttp"
)

// The shared table through a real fasthttp server: the handler makes the
// labels the net/http handler makes of the same header lines.
func TestLabelTable(t *testing.T) {
	addr := serve(t, k6fasthttp.NewHandler(func(ctx *fasthttp.RequestCtx) {
		ctx.SetBodyString(labels(k6fasthttp.Context(ctx)))
	}))
	c := dial(t, addr)
	defer c.close()
	for _, tc := range labeltable.Cases() {
		if got, want := c.get("/", tc.Lines...), fmt.Sprint(tc.Want); got != want {
			t.Errorf("%s: labels %s, want %s", tc.Name, got, want)
		}
	}
}
