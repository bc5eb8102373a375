package k6otel

import (
	"context"
	"maps"
	"net/http"
	"testing"

	"go.opentelemetry.io/otel/propagation"

	"github.com/k6labels/k6labels/internal/labeltable"
)

// The shared table through OpenTelemetry's baggage propagator, then
// Context: the labels the net/http handler makes of the same header,
// although the OTel baggage has lost the members' order.
func TestLabelTable(t *testing.T) {
	for _, tc := range labeltable.Cases() {
		h := http.Header{}
		for _, l := range tc.Lines {
			h.Add("Baggage", l)
		}
		ctx := propagation.Baggage{}.Extract(context.Background(), propagation.HeaderCarrier(h))
		for range 20 { // the baggage is a map: vary its order
			if got := ctxLabels(Context(ctx, nil)); !maps.Equal(got, tc.Want) {
				t.Fatalf("%s: labels %v, want %v", tc.Name, got, tc.Want)
			}
		}
	}
}
