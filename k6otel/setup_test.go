package k6otel

import (
	"context"
	"net/http"
	"os"
	"testing"

	otelpyroscope "github.com/grafana/otel-profiling-go"
	"github.com/k6labels/k6labels"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// w3c is the propagator most OpenTelemetry setups install.
var w3c = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

// tracing is a real OpenTelemetry SDK tracer provider, wrapped by the
// otel-profiling-go span profiler, with a recorder to read the spans back.
type tracing struct {
	rec *tracetest.SpanRecorder
	tp  trace.TracerProvider // the span profiler around the SDK provider
}

func newTracing(t testing.TB) *tracing {
	rec := tracetest.NewSpanRecorder()
	sdk := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = sdk.Shutdown(context.Background()) })
	return &tracing{rec: rec, tp: otelpyroscope.NewTracerProvider(sdk)}
}

// serverSpan is the name otelhttp gives the server spans in these tests.
const serverSpan = "bike-server"

// handler wraps h in otelhttp's server handler with the span profiler.
func (tr *tracing) handler(h http.Handler) http.Handler {
	return otelhttp.NewHandler(h, "bike",
		otelhttp.WithTracerProvider(tr.tp),
		otelhttp.WithPropagators(w3c),
		otelhttp.WithSpanNameFormatter(func(string, *http.Request) string { return serverSpan }))
}

// span returns the ended span with the given id.
func (tr *tracing) span(t testing.TB, id string) sdktrace.ReadOnlySpan {
	t.Helper()
	for _, s := range tr.rec.Ended() {
		if s.SpanContext().SpanID().String() == id {
			return s
		}
	}
	t.Fatalf("no ended span with id %s", id)
	return nil
}

// An order puts k6labels' middleware and otelhttp's handler around h.
type order struct {
	name string
	wrap func(tr *tracing, h http.Handler) http.Handler
}

var orders = []order{
	{"k6labels outside otelhttp", func(tr *tracing, h http.Handler) http.Handler {
		return k6labels.NewHandler(tr.handler(h))
	}},
	{"k6labels inside otelhttp", func(tr *tracing, h http.Handler) http.Handler {
		return tr.handler(k6labels.NewHandler(h))
	}},
}

// TestMain silences OpenTelemetry's global error handler, which logs the
// baggage member with a space that these tests send on purpose.
func TestMain(m *testing.M) {
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(error) {}))
	os.Exit(m.Run())
}
