package k6labels

import (
	"context"
	"net/http"
)

// LabelsFromBaggageHandler wraps h so that each request carrying k6 baggage is
// served with pprof labels k6_test_run_id, k6_scenario, k6_name (and any other
// "k6." member, named the same way) on its goroutine and in its context.
// It has the name, signature and defaults of the handler in pyroscope-go's
// x/k6 package, so switching is a change of import.
func LabelsFromBaggageHandler(h http.Handler) http.Handler {
	return NewHandler(h)
}

// NewHandler is [LabelsFromBaggageHandler] with options.
//
// The request handed to h has a context with the labels (so goroutines that h
// starts with that context, and span profilers, see them) and the goroutine
// has them while h runs. When h returns or panics, the goroutine gets back the
// labels it had before. A request with no usable k6 member is passed on as it
// came, at no cost.
func NewHandler(h http.Handler, opts ...Option) http.Handler {
	return &handler{next: h, labeler: NewLabeler(opts...)}
}

// Middleware returns a function that wraps a handler like [NewHandler], for
// routers that take middleware in that form, such as chi and gorilla/mux
// (router.Use(k6labels.Middleware())).
func Middleware(opts ...Option) func(http.Handler) http.Handler {
	l := NewLabeler(opts...)
	return func(h http.Handler) http.Handler {
		return &handler{next: h, labeler: l}
	}
}

type handler struct {
	next    http.Handler
	labeler *Labeler
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	lines := r.Header["Baggage"]
	if len(lines) == 0 {
		h.next.ServeHTTP(w, r)
		return
	}
	ctx, ok := h.labeler.context(r.Context(), lines, r)
	if !ok {
		h.next.ServeHTTP(w, r)
		return
	}
	Do(ctx, func(ctx context.Context) { h.next.ServeHTTP(w, r.WithContext(ctx)) })
}
