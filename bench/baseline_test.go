package bench

import (
	"net/http"
	"runtime/pprof"
	"strings"

	"go.opentelemetry.io/otel/baggage"
)

// baselineHandler does per request what pyroscope-go's x/k6 middleware does,
// so that k6labels is measured against the package users migrate from:
// parse the first baggage line with OpenTelemetry, store the baggage in the
// request context, keep the "k6." members as labels (dots to underscores),
// set them on the goroutine with pprof.WithLabels, and reset the goroutine to
// the request context's labels afterwards.
func baselineHandler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		header := r.Header.Get("Baggage")
		if header == "" {
			next.ServeHTTP(w, r)
			return
		}
		b, err := baggage.Parse(header)
		if err != nil {
			next.ServeHTTP(w, r)
			return
		}
		r = r.WithContext(baggage.ContextWithBaggage(r.Context(), b))
		kv := make([]string, 0, 2*b.Len())
		for _, m := range b.Members() {
			if strings.HasPrefix(m.Key(), "k6.") && m.Value() != "" {
				kv = append(kv, strings.ReplaceAll(m.Key(), ".", "_"), m.Value())
			}
		}
		if len(kv) == 0 {
			next.ServeHTTP(w, r)
			return
		}
		ctx := r.Context()
		defer pprof.SetGoroutineLabels(ctx)
		ctx = pprof.WithLabels(ctx, pprof.Labels(kv...))
		pprof.SetGoroutineLabels(ctx)
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}
