package k6otel

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/k6labels/k6labels"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/propagation"
)

// received is what the downstream service saw of one request.
type received struct {
	lines  []string          // the baggage header lines
	labels map[string]string // the pprof labels of its request context
}

// downstream starts a real service on 127.0.0.1 that runs k6labels behind
// otelhttp, as the next service of a chain would, and reports each request.
func downstream(t *testing.T, tr *tracing) (url string, got <-chan received) {
	ch := make(chan received, 1)
	h := tr.handler(k6labels.NewHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ch <- received{lines: r.Header.Values("Baggage"), labels: ctxLabels(r.Context())}
	})))
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL, ch
}

// A client is how the middle service calls the downstream one.
type client struct {
	name string
	rt   func(tr *tracing) http.RoundTripper
	// loses is the k6 key the downstream service does not get, "" if none:
	// the combinations without Propagator that the README warns about.
	loses string
}

// get sends a GET to url with the given baggage header lines, as k6 would,
// and fails t if the request does not go through.
func get(t *testing.T, url string, baggage ...string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	for _, b := range baggage {
		req.Header.Add("Baggage", b)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}

func otelTransport(tr *tracing, base http.RoundTripper, p propagation.TextMapPropagator) http.RoundTripper {
	return otelhttp.NewTransport(base, otelhttp.WithTracerProvider(tr.tp), otelhttp.WithPropagators(p))
}

var clients = []client{
	{name: "otelhttp with Propagator", rt: func(tr *tracing) http.RoundTripper {
		return otelTransport(tr, http.DefaultTransport, Propagator(w3c))
	}},
	{name: "otelhttp with Propagator around k6labels.NewTransport", rt: func(tr *tracing) http.RoundTripper {
		return otelTransport(tr, k6labels.NewTransport(http.DefaultTransport), Propagator(w3c))
	}},
	{name: "k6labels.NewTransport around otelhttp with Propagator", rt: func(tr *tracing) http.RoundTripper {
		return k6labels.NewTransport(otelTransport(tr, http.DefaultTransport, Propagator(w3c)))
	}},
	{name: "otelhttp around k6labels.NewTransport", rt: func(tr *tracing) http.RoundTripper {
		return otelTransport(tr, k6labels.NewTransport(http.DefaultTransport), w3c)
	}},
	// OpenTelemetry's baggage propagator replaces the header that
	// k6labels.NewTransport wrote with the OTel baggage, which lacks the
	// member its parser rejected.
	{name: "k6labels.NewTransport around otelhttp", loses: "k6.name", rt: func(tr *tracing) http.RoundTripper {
		return k6labels.NewTransport(otelTransport(tr, http.DefaultTransport, w3c))
	}},
	{name: "otelhttp only", loses: "k6.name", rt: func(tr *tracing) http.RoundTripper {
		return otelTransport(tr, http.DefaultTransport, w3c)
	}},
}

// TestDownstreamOverHTTP sends k6's baggage, plus a member of the
// application's own, to a real service on 127.0.0.1 that runs k6labels and
// otelhttp in either order and calls a second real service through otelhttp's
// transport. The second service must get each k6 key once, the application's
// member as it was, and label its request like the first; the first service's
// OTel baggage must be what OpenTelemetry extracted, before and after the
// call.
func TestDownstreamOverHTTP(t *testing.T) {
	const incoming = k6Header + ", tenant=acme"
	// What OpenTelemetry itself makes of the header: everything but the
	// k6.name with a space.
	wantOTel := otelMembers(baggage.FromContext(w3c.Extract(context.Background(),
		propagation.HeaderCarrier{"Baggage": {incoming}})))
	if _, ok := wantOTel["k6.name"]; ok || len(wantOTel) != 3 {
		t.Fatalf("OpenTelemetry extracted %v; this test assumes it rejects the k6.name with a space", wantOTel)
	}
	wantDown := map[string]string{"k6.test_run_id": "123", "k6.scenario": "checkout", "k6.name": "GET bike", "tenant": "acme"}
	wantLabels := map[string]string{"k6_test_run_id": "123", "k6_scenario": "checkout", "k6_name": "GET bike"}

	for _, o := range orders {
		for _, c := range clients {
			t.Run(o.name+"/"+c.name, func(t *testing.T) {
				tr := newTracing(t)
				downURL, got := downstream(t, tr)
				out := &http.Client{Transport: c.rt(tr)}
				var mu sync.Mutex
				var errs []string
				fail := func(f string, a ...any) {
					mu.Lock()
					errs = append(errs, fmt.Sprintf(f, a...))
					mu.Unlock()
				}
				mid := httptest.NewServer(o.wrap(tr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if m := otelMembers(baggage.FromContext(r.Context())); !maps.Equal(m, wantOTel) {
						fail("middle service: OTel baggage %v, want %v", m, wantOTel)
					}
					if m := ctxLabels(r.Context()); !maps.Equal(pick(m, "k6_"), wantLabels) {
						fail("middle service: labels %v, want %v", m, wantLabels)
					}
					req, _ := http.NewRequestWithContext(r.Context(), "GET", downURL, nil)
					resp, err := out.Do(req)
					if err != nil {
						fail("call downstream: %v", err)
						return
					}
					resp.Body.Close()
					if m := otelMembers(baggage.FromContext(r.Context())); !maps.Equal(m, wantOTel) {
						fail("middle service: OTel baggage after the call %v, want %v", m, wantOTel)
					}
				})))
				defer mid.Close()

				get(t, mid.URL, incoming)
				for _, e := range errs {
					t.Error(e)
				}
				d := <-got

				want, wantL := wantDown, wantLabels
				if c.loses != "" {
					want, wantL = without(wantDown, c.loses), without(wantLabels, "k6_name")
				}
				for k, n := range keyCounts(d.lines...) {
					if n != 1 {
						t.Errorf("downstream got key %s %d times: %q", k, n, d.lines)
					}
				}
				if v := values(d.lines...); !maps.Equal(v, want) {
					t.Errorf("downstream got %v (%q), want %v", v, d.lines, want)
				}
				if l := pick(d.labels, "k6_"); !maps.Equal(l, wantL) {
					t.Errorf("downstream labels %v, want %v", l, wantL)
				}
			})
		}
	}
}

func pick(m map[string]string, prefix string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		if len(k) >= len(prefix) && k[:len(prefix)] == prefix {
			out[k] = v
		}
	}
	return out
}

func without(m map[string]string, key string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		if k != key {
			out[k] = v
		}
	}
	return out
}
