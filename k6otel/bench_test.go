package k6otel

import (
	"context"
	"net/http"
	"testing"

	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/propagation"
)

// BenchmarkInject measures what Propagator adds to OpenTelemetry's own
// injection, on the outgoing request of a service labelled from k6's header
// with one member of OTel baggage of the application's own.
func BenchmarkInject(b *testing.B) {
	bag, _ := baggage.Parse("tenant=acme")
	otelOnly := baggage.ContextWithBaggage(context.Background(), bag)
	withK6 := k6Context(b, otelOnly, k6Header)
	for _, bc := range []struct {
		name string
		p    propagation.TextMapPropagator
		ctx  context.Context
	}{
		{"w3c", w3c, withK6},
		{"Propagator(w3c)", Propagator(w3c), withK6},
		{"Propagator(w3c)/no-k6", Propagator(w3c), otelOnly},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				h := make(http.Header, 2)
				bc.p.Inject(bc.ctx, propagation.HeaderCarrier(h))
			}
		})
	}
}
