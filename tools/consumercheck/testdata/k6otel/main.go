// Command k6otel serves one request with k6 baggage through the k6labels
// handler on 127.0.0.1; the handler calls a second server there through the
// k6otel propagator, which labels its request from the OpenTelemetry baggage
// it extracts. It prints the baggage sent on and the labels the second saw.
package main

import (
	"fmt"
	"log"
	"net/http"
	"strings"

	"github.com/k6labels/k6labels"
	"github.com/k6labels/k6labels/k6otel"
	"go.opentelemetry.io/otel/propagation"
)

// OpenTelemetry's baggage parser drops a value with a space: k6.name is a
// tags.name without one.
const baggage = "k6.test_run_id=4242,k6.scenario=rush_hour,k6.name=order_bike"

func main() {
	prop := k6otel.Propagator(propagation.Baggage{})
	seen := make(chan string, 2)
	downstream := serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- "baggage sent on: " + strings.Join(r.Header.Values("baggage"), " | ")
		ctx := prop.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		seen <- "labels: " + labels(k6otel.Context(ctx, nil))
	}))
	front := serve(k6labels.NewHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		out, err := http.NewRequestWithContext(r.Context(), http.MethodGet, downstream+"/price", nil)
		if err != nil {
			log.Fatal(err)
		}
		prop.Inject(r.Context(), propagation.HeaderCarrier(out.Header))
		get(out)
	})))

	getBaggage(front+"/car", baggage)
	fmt.Println(<-seen)
	fmt.Println(<-seen)
}
