package k6otel_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime/pprof"

	otelpyroscope "github.com/grafana/otel-profiling-go"
	"github.com/k6labels/k6labels"
	"github.com/k6labels/k6labels/k6otel"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// A service labelled by k6labels calls the next one through otelhttp. The
// propagator given to otelhttp (or set with otel.SetTextMapPropagator) is
// wrapped, so the next service gets the k6 members once, including the
// k6.name that OpenTelemetry's own parser rejected for its space.
func ExamplePropagator() {
	p := k6otel.Propagator(propagation.NewCompositeTextMapPropagator(
		propagation.TraceContext{}, propagation.Baggage{}))
	client := &http.Client{Transport: otelhttp.NewTransport(http.DefaultTransport, otelhttp.WithPropagators(p))}
	_ = client // use it with the incoming request's context

	// What the client's transport does with such a context: here, one built
	// as the k6labels middleware builds it, with OTel baggage of the
	// application's own.
	ctx := k6labels.NewLabeler().Context(context.Background(),
		[]string{"k6.test_run_id=123, k6.scenario=checkout, k6.name=GET bike"})
	bag, _ := baggage.Parse("tenant=acme")
	ctx = baggage.ContextWithBaggage(ctx, bag)

	h := http.Header{}
	p.Inject(ctx, propagation.HeaderCarrier(h))
	fmt.Println(h.Get("Baggage"))
	// Output: tenant=acme,k6.name=GET%20bike,k6.scenario=checkout,k6.test_run_id=123
}

// A consumer gets a message whose headers carry OTel baggage (a producer
// injected it with a propagator). Context labels its work with the k6
// members of that baggage.
func ExampleContext() {
	headers := propagation.MapCarrier{"baggage": "k6.test_run_id=123,k6.scenario=checkout,k6.name=GET%20bike,tenant=acme"}
	ctx := propagation.Baggage{}.Extract(context.Background(), headers)

	k6labels.Do(k6otel.Context(ctx, nil), func(ctx context.Context) {
		// The CPU profile samples of this function carry these labels.
		pprof.ForLabels(ctx, func(k, v string) bool {
			fmt.Printf("%s=%s\n", k, v)
			return true
		})
	})
	// Output:
	// k6_name=GET bike
	// k6_scenario=checkout
	// k6_test_run_id=123
}

// The recommended setup with a span profiler: otel-profiling-go wraps the
// tracer provider, otelhttp makes the server spans, and the k6labels
// middleware goes outside otelhttp. The handler's CPU samples carry both the
// span's labels and the k6 labels.
func Example_spanProfiler() {
	tp := otelpyroscope.NewTracerProvider(sdktrace.NewTracerProvider())
	app := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pprof.ForLabels(r.Context(), func(k, v string) bool {
			if k == "span_id" || k == "trace_id" {
				v = fmt.Sprintf("<%d hex digits>", len(v))
			}
			fmt.Printf("%s=%s\n", k, v)
			return true
		})
	})
	h := k6labels.NewHandler(otelhttp.NewHandler(app, "bikes",
		otelhttp.WithTracerProvider(tp),
		otelhttp.WithSpanNameFormatter(func(string, *http.Request) string { return "GET /bike" })))

	srv := httptest.NewServer(h)
	defer srv.Close()
	req, _ := http.NewRequest("GET", srv.URL+"/bike", nil)
	req.Header.Set("Baggage", "k6.test_run_id=123, k6.scenario=checkout, k6.name=bike")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	// Output:
	// k6_name=bike
	// k6_scenario=checkout
	// k6_test_run_id=123
	// span_id=<16 hex digits>
	// span_name=GET /bike
	// trace_id=<32 hex digits>
}
