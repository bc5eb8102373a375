package bench

import (
	"context"
	"net/http"
	"runtime/pprof"
	"strings"

	"go.opentelemetry.io/otel/baggage"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// BaselineHandler does per request what pyroscope-go's x/k6 middleware does,
// step for step, so that k6labels is measured against the package users
// migrate from: parse the first baggage line with OpenTelemetry, store the
// baggage in the request context, read it back, keep the "k6." members as
// labels (dots to underscores) in a LabelSet returned by pointer, set them on
// the goroutine with pprof.WithLabels, and reset the goroutine to the request
// context's labels afterwards.
func BaselineHandler(next http.Handler) http.Handler {
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
		ctx := r.Context()
		labels := baselineLabels(ctx)
		if labels == nil {
			next.ServeHTTP(w, r)
			return
		}
		defer pprof.SetGoroutineLabels(ctx)
		ctx = pprof.WithLabels(ctx, *labels)
		pprof.SetGoroutineLabels(ctx)
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// baselineLabels reads the baggage back from ctx and builds the label set, as
// x/k6 does: Members is called once to size the list and once to walk it.
func baselineLabels(ctx context.Context) *pprof.LabelSet {
	b := baggage.FromContext(ctx)
	if b.Len() == 0 {
		return nil
	}
	kv := make([]string, 0, 2*len(b.Members()))
	for _, m := range b.Members() {
		if strings.HasPrefix(m.Key(), "k6.") && m.Value() != "" {
			kv = append(kv, strings.ReplaceAll(m.Key(), ".", "_"), m.Value())
		}
	}
	if len(kv) == 0 {
		return nil
	}
	labels := pprof.Labels(kv...)
	return &labels
}

// BaselineUnary does per call what x/k6's unary interceptor does: copy the
// incoming metadata, parse its first baggage value with OpenTelemetry, store
// the baggage in the context, read it back into a label set, set the labels
// on the goroutine and reset it to the call's context afterwards.
func BaselineUnary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	md, ok := metadata.FromIncomingContext(ctx)
	if !ok {
		return handler(ctx, req)
	}
	values := md.Get("Baggage")
	if len(values) == 0 {
		return handler(ctx, req)
	}
	b, err := baggage.Parse(values[0])
	if err != nil {
		return handler(ctx, req)
	}
	ctx = baggage.ContextWithBaggage(ctx, b)
	labels := baselineLabels(ctx)
	if labels == nil {
		return handler(ctx, req)
	}
	defer pprof.SetGoroutineLabels(ctx)
	ctx = pprof.WithLabels(ctx, *labels)
	pprof.SetGoroutineLabels(ctx)
	return handler(ctx, req)
}
