package k6fasthttp_test

import (
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/k6labels/k6labels/k6fasthttp"
)

// BenchmarkHandler measures the wrapper around a handler that does nothing,
// beside BenchmarkHandler of the net/http middleware; "bare" is the handler
// alone, the cost to compare with.
func BenchmarkHandler(b *testing.B) {
	noop := func(*fasthttp.RequestCtx) {}
	for _, bc := range []struct {
		name, baggage string
		h             fasthttp.RequestHandler
	}{
		{"bare", "k6.test_run_id=123456,k6.scenario=checkout,k6.name=http://shop/cart", noop},
		{"jslib", "k6.test_run_id=123456,k6.scenario=checkout,k6.name=http://shop/cart", k6fasthttp.NewHandler(noop)},
		{"non-k6", "tenant=acme,userId=alice", k6fasthttp.NewHandler(noop)},
		{"none", "", k6fasthttp.NewHandler(noop)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var ctx fasthttp.RequestCtx
			ctx.Request.Header.SetRequestURI("/cart")
			if bc.baggage != "" {
				ctx.Request.Header.Set("Baggage", bc.baggage)
			}
			b.ReportAllocs()
			for b.Loop() {
				bc.h(&ctx)
				ctx.ResetUserValues() // as fasthttp does between requests
			}
		})
	}
}

func TestNoAllocsWithoutK6(t *testing.T) {
	h := k6fasthttp.NewHandler(func(*fasthttp.RequestCtx) {})
	for _, baggage := range []string{"", "tenant=acme,userId=alice", "k6.name="} {
		var ctx fasthttp.RequestCtx
		if baggage != "" {
			ctx.Request.Header.Set("Baggage", baggage)
		}
		if n := testing.AllocsPerRun(100, func() { h(&ctx) }); n != 0 {
			t.Errorf("baggage %q: %v allocations per request, want 0", baggage, n)
		}
	}
}
