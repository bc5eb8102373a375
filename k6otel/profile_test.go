package k6otel

import (
	"context"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime/pprof"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/k6labels/k6labels"
	"github.com/k6labels/k6labels/internal/profiletest"
	"go.opentelemetry.io/otel/trace"
)

// spin is how much CPU each piece of handler work burns: about 0.1 s (see
// profiletest.Burn).
const spin = 80_000_000

// The CPU work of the handlers, each in its own function so that its samples
// can be told apart.

//go:noinline
func handlerWork() { profiletest.Burn(spin) }

//go:noinline
func childSpanWork() { profiletest.Burn(spin) }

//go:noinline
func afterChildWork() { profiletest.Burn(spin) }

//go:noinline
func afterRequestWork() { profiletest.Burn(spin) }

//go:noinline
func consumerWork() { profiletest.Burn(spin) }

// checkSamples fails t unless p has samples in fn and each carries want.
func checkSamples(t *testing.T, p *profile.Profile, fn string, want map[string]string) {
	t.Helper()
	samples := profiletest.Samples(p, fn)
	if len(samples) == 0 {
		t.Fatalf("no CPU samples in %s", fn)
	}
	for _, s := range samples {
		if got := profiletest.Labels(s); !maps.Equal(got, want) {
			t.Fatalf("a sample in %s has labels %v, want %v", fn, got, want)
		}
	}
}

// TestSpanProfilerOverHTTP serves a k6 request through a real server on
// 127.0.0.1 with otelhttp, the otel-profiling-go span profiler and k6labels
// in both orders, and checks a real CPU profile: the handler's samples carry
// the span's labels and the k6 labels, and so do samples in a child span and
// after the child span ended (otel-profiling-go resets the goroutine's labels
// when a span ends). A label of the server's BaseContext is there too: the
// three sources of labels compose.
func TestSpanProfilerOverHTTP(t *testing.T) {
	for _, o := range orders {
		t.Run(o.name, func(t *testing.T) {
			tr := newTracing(t)
			tracer := tr.tp.Tracer("k6otel-test")
			ids := make(chan string, 1) // the handler's span id
			h := o.wrap(tr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				ids <- trace.SpanContextFromContext(r.Context()).SpanID().String()
				handlerWork()
				_, child := tracer.Start(r.Context(), "child")
				childSpanWork()
				child.End()
				afterChildWork()
			}))
			srv := httptest.NewUnstartedServer(h)
			srv.Config.BaseContext = func(net.Listener) context.Context {
				return pprof.WithLabels(context.Background(), pprof.Labels("service", "bikes"))
			}
			srv.Start()
			defer srv.Close()

			p := profiletest.Record(t, func() {
				get(t, srv.URL+"/bike", k6Header)
			})
			rootID := <-ids
			root := tr.span(t, rootID)
			if root.Name() != serverSpan || root.Parent().IsValid() {
				t.Fatalf("the handler's span is %q (parent %v), want the server span", root.Name(), root.Parent())
			}
			want := map[string]string{
				"service":        "bikes",
				"k6_test_run_id": "123",
				"k6_scenario":    "checkout",
				"k6_name":        "GET bike",
				// otel-profiling-go labels every span with its local root's
				// name and id (its default scope), and the root with the
				// trace id.
				"span_id":   rootID,
				"span_name": serverSpan,
				"trace_id":  root.SpanContext().TraceID().String(),
			}
			checkSamples(t, p, "handlerWork", want)
			checkSamples(t, p, "childSpanWork", want)
			checkSamples(t, p, "afterChildWork", want)
			profiletest.CheckLabels(t, p, k6labels.DefaultMaxValueBytes)
		})
	}
}

// TestSpanProfilerGoroutineAfterRequest serves a request on a goroutine that
// has labels of its own (as a connection goroutine inherits the labels of
// the goroutine that started the server) and checks what it has afterwards.
// With k6labels outside otelhttp they are all back: k6labels restores what
// the goroutine had. With k6labels inside, they are gone: when its span ends,
// otel-profiling-go sets the labels of the request context, which never had
// them. This is why the README recommends k6labels outside otelhttp (or
// labels in the server's BaseContext, which every order keeps).
func TestSpanProfilerGoroutineAfterRequest(t *testing.T) {
	goroutineOnly := map[string]string{"service": "bikes"}
	for _, o := range orders {
		t.Run(o.name, func(t *testing.T) {
			tr := newTracing(t)
			h := o.wrap(tr, http.HandlerFunc(func(http.ResponseWriter, *http.Request) { handlerWork() }))
			p := profiletest.Record(t, func() {
				done := make(chan struct{})
				go func() {
					defer close(done)
					pprof.SetGoroutineLabels(pprof.WithLabels(context.Background(), pprof.Labels("service", "bikes")))
					r := httptest.NewRequest("GET", "/bike", nil)
					r.Header.Set("Baggage", k6Header)
					h.ServeHTTP(httptest.NewRecorder(), r)
					afterRequestWork()
				}()
				<-done
			})
			// During the request, both set the goroutine's labels from the
			// request context: the goroutine-only label is not there.
			hw := profiletest.Samples(p, "handlerWork")
			if len(hw) == 0 {
				t.Fatal("no CPU samples in handlerWork")
			}
			for _, s := range hw {
				l := profiletest.Labels(s)
				if l["k6_scenario"] != "checkout" || l["span_name"] != serverSpan || l["service"] != "" {
					t.Fatalf("handler sample labels %v", l)
				}
			}
			want := goroutineOnly
			if o.name == "k6labels inside otelhttp" {
				want = map[string]string{}
			}
			checkSamples(t, p, "afterRequestWork", want)
		})
	}
}

// TestContextInConsumerOverHTTP is a service with otelhttp but no k6labels
// middleware, like a consumer that only gets the OTel baggage: Context and
// k6labels.Do label its work, together with the span's labels.
func TestContextInConsumerOverHTTP(t *testing.T) {
	tr := newTracing(t)
	ids := make(chan string, 1) // the handler's span id
	srv := httptest.NewServer(tr.handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ids <- trace.SpanContextFromContext(r.Context()).SpanID().String()
		k6labels.Do(Context(r.Context(), nil), func(context.Context) { consumerWork() })
	})))
	defer srv.Close()
	p := profiletest.Record(t, func() {
		// OpenTelemetry's parser drops the name with a space; the one on the
		// second line arrives and is cleaned by the middleware's rules (the
		// query string goes).
		get(t, srv.URL, "k6.test_run_id=123, k6.scenario=checkout, k6.name=GET bike",
			"k6.name=http://127.0.0.1/bike?id=3")
	})
	rootID := <-ids
	root := tr.span(t, rootID)
	checkSamples(t, p, "consumerWork", map[string]string{
		"k6_test_run_id": "123",
		"k6_scenario":    "checkout",
		"k6_name":        "http://127.0.0.1/bike",
		"span_id":        rootID,
		"span_name":      serverSpan,
		"trace_id":       root.SpanContext().TraceID().String(),
	})
}
