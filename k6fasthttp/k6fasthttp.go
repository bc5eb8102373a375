// Package k6fasthttp labels fasthttp requests that carry k6 baggage with the
// same pprof labels as k6labels' net/http middleware, through the same
// [k6labels.Labeler]. fasthttp serves requests from a pool of reused worker
// goroutines, so the labels are set only while the handler runs and the
// worker's own labels are put back exactly afterwards, also on panic.
package k6fasthttp

import (
	"context"
	"net"
	"sync"
	"unsafe"

	"github.com/valyala/fasthttp"

	"github.com/k6labels/k6labels"
)

// maxLines is how many baggage header lines are read; the Labeler examines
// no more than that either.
const maxLines = 64

// LabelsFromBaggageHandler wraps h so that each request carrying k6 baggage
// runs with pprof labels k6_test_run_id, k6_scenario, k6_name (and any other
// "k6." member) on its goroutine, with the defaults of k6labels'
// LabelsFromBaggageHandler.
func LabelsFromBaggageHandler(h fasthttp.RequestHandler) fasthttp.RequestHandler {
	return NewHandler(h)
}

// NewHandler is [LabelsFromBaggageHandler] with the options of the net/http
// middleware but its naming options: like k6labels.NewLabeler, it panics with
// k6labels.WithNameFormatter, WithRoutePattern or WithServeMux, which need an
// *http.Request. The ctx that [k6labels.WithNameFunc] gets is the request's
// *fasthttp.RequestCtx. h reads the labelled context with [Context]. A
// request with no usable k6 member is passed on as it came, at no cost.
func NewHandler(h fasthttp.RequestHandler, opts ...k6labels.Option) fasthttp.RequestHandler {
	l := k6labels.NewLabeler(opts...)
	return func(ctx *fasthttp.RequestCtx) {
		Serve(l, ctx, h)
	}
}

// Serve runs next(ctx) with the k6 labels that l finds in ctx's baggage
// header lines, for middleware built on fasthttp (such as Fiber's). The
// labelled context is stored in ctx for [Context] before next runs, and the
// goroutine's labels are restored exactly when next returns or panics.
func Serve(l *k6labels.Labeler, ctx *fasthttp.RequestCtx, next fasthttp.RequestHandler) {
	lctx, ok := Labels(l, ctx)
	if !ok {
		next(ctx)
		return
	}
	k6labels.DoRequest(lctx, func(context.Context) { next(ctx) })
}

// Labels returns the context labelled by l for ctx's baggage header lines
// and stores it in ctx for [Context]; ok is false, and ctx returned as it
// is, when the request has no usable k6 member. It does not touch the
// goroutine's labels: run the handler inside [k6labels.Do].
func Labels(l *k6labels.Labeler, ctx *fasthttp.RequestCtx) (_ context.Context, ok bool) {
	h := &ctx.Request.Header
	raw := h.PeekAll("Baggage")
	if len(raw) == 0 {
		// With DisableHeaderNamesNormalizing (Fiber's
		// DisableHeaderNormalizing), keys stay as sent and PeekAll matches
		// them exactly; a proxy that lowercases them, as every HTTP/2 hop
		// does, sends "baggage". (Header.All would find any case, but parses
		// the cookies of every request.)
		raw = h.PeekAll("baggage")
	}
	if len(raw) == 0 {
		return ctx, false
	}
	// The lines are only read during the call, and the Labeler copies all
	// it keeps, so they are viewed in place rather than copied. The array
	// comes from a pool because the compiler moves a local one to the heap.
	// 1,940 vs 2,266 instructions and 1 vs 2 allocations (1,152 B) per k6 request without the pool (BenchmarkHandler/jslib, Valgrind)
	buf := linePool.Get().(*[maxLines]string)
	lines := buf[:0]
	for _, b := range raw[:min(len(raw), maxLines)] {
		// 1,940 vs 2,182 instructions and 1 vs 2 allocations per k6 request with string(b) (BenchmarkHandler/jslib, Valgrind)
		lines = append(lines, unsafe.String(unsafe.SliceData(b), len(b)))
	}
	lctx, ok := l.Labels(ctx, lines)
	clear(lines) // drop the views of the header buffer
	linePool.Put(buf)
	if !ok {
		return ctx, false
	}
	ctx.SetUserValue(contextKey{}, lctx)
	return lctx, true
}

// Hijack is ctx.Hijack(handler) with the request's k6 labels (see [Context])
// on the goroutine that runs handler. fasthttp runs it on a new goroutine
// once the request's handler has returned, after [Serve] put back the
// worker's labels, so with ctx.Hijack a WebSocket session runs unlabelled.
// An upgrader that calls ctx.Hijack itself can do the same: take
// Context(ctx) before upgrading and run the session in [k6labels.Do].
func Hijack(ctx *fasthttp.RequestCtx, handler fasthttp.HijackHandler) {
	lctx := Context(ctx)
	if lctx == context.Context(ctx) {
		ctx.Hijack(handler)
		return
	}
	ctx.Hijack(func(c net.Conn) {
		k6labels.Do(lctx, func(context.Context) { handler(c) })
	})
}

var linePool = sync.Pool{New: func() any { return new([maxLines]string) }}

type contextKey struct{}

// Context returns the context carrying the k6 labels and members of the
// request ctx is serving, or ctx itself when it has none. fasthttp drops it
// with the other user values when the request ends; do not keep it longer.
func Context(ctx *fasthttp.RequestCtx) context.Context {
	if c, ok := ctx.UserValue(contextKey{}).(context.Context); ok {
		return c
	}
	return ctx
}
