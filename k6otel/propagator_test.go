package k6otel

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"runtime/pprof"
	"slices"
	"strings"
	"testing"

	"github.com/k6labels/k6labels"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/propagation"
)

// k6Header is what k6's http-instrumentation-pyroscope sends; the name has a
// space, which OpenTelemetry's baggage parser rejects.
const k6Header = "k6.test_run_id=123, k6.scenario=checkout, k6.name=GET bike"

// k6Context returns a context labelled from the baggage lines, as the
// k6labels middleware would hand it to a handler.
func k6Context(t testing.TB, parent context.Context, lines ...string) context.Context {
	t.Helper()
	ctx := k6labels.NewLabeler().Context(parent, lines)
	if k6labels.Baggage(ctx) == "" {
		t.Fatalf("no k6 members in %q", lines)
	}
	return ctx
}

// keyCounts counts the keys of all baggage lines with the k6labels parser.
func keyCounts(lines ...string) map[string]int {
	n := map[string]int{}
	for _, m := range k6labels.ParseBaggage(lines...) {
		n[m.Key]++
	}
	return n
}

func values(lines ...string) map[string]string {
	v := map[string]string{}
	for _, m := range k6labels.ParseBaggage(lines...) {
		v[m.Key] = m.Value
	}
	return v
}

func otelBaggage(t testing.TB, s string) baggage.Baggage {
	t.Helper()
	b, err := baggage.Parse(s)
	if err != nil {
		t.Fatalf("baggage.Parse(%q): %v", s, err)
	}
	return b
}

func TestPropagatorMergesK6MembersOnce(t *testing.T) {
	w3c := propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
	for _, tc := range []struct {
		name   string
		otel   string // the OTel baggage of the context
		before []string
		want   map[string]string
	}{
		{
			name: "no OTel baggage",
			want: map[string]string{"k6.test_run_id": "123", "k6.scenario": "checkout", "k6.name": "GET bike"},
		},
		{
			name: "OTel baggage without k6 members",
			otel: "tenant=acme",
			want: map[string]string{"tenant": "acme", "k6.test_run_id": "123", "k6.scenario": "checkout", "k6.name": "GET bike"},
		},
		{
			// What otelhttp's handler extracts from k6's header: everything
			// but the name with a space. k6labels' values replace OTel's for
			// k6 keys, as k6labels.NewTransport does.
			name: "OTel baggage with k6 members",
			otel: "k6.test_run_id=123,k6.scenario=from-otel,tenant=acme",
			want: map[string]string{"tenant": "acme", "k6.test_run_id": "123", "k6.scenario": "checkout", "k6.name": "GET bike"},
		},
		{
			// k6labels.NewTransport (or anything else) wrote the header
			// before the propagator: OTel's propagator replaces it, then the
			// k6 members come back once.
			name:   "header written before",
			otel:   "tenant=acme",
			before: []string{"k6.test_run_id=123,k6.scenario=checkout,k6.name=GET%20bike", "k6.name=GET%20bike"},
			want:   map[string]string{"tenant": "acme", "k6.test_run_id": "123", "k6.scenario": "checkout", "k6.name": "GET bike"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			if tc.otel != "" {
				ctx = baggage.ContextWithBaggage(ctx, otelBaggage(t, tc.otel))
			}
			ctx = k6Context(t, ctx, k6Header)
			before := otelMembers(baggage.FromContext(ctx))

			h := http.Header{}
			for _, l := range tc.before {
				h.Add("Baggage", l)
			}
			Propagator(w3c).Inject(ctx, propagation.HeaderCarrier(h))

			lines := h.Values("Baggage")
			for k, n := range keyCounts(lines...) {
				if n != 1 {
					t.Errorf("key %s appears %d times in %q", k, n, lines)
				}
			}
			if got := values(lines...); !maps.Equal(got, tc.want) {
				t.Errorf("header %q carries %v, want %v", lines, got, tc.want)
			}
			// The result must be valid baggage for OpenTelemetry too: every
			// member survives its strict parser.
			if b, err := baggage.Parse(strings.Join(lines, ",")); err != nil || b.Len() != len(tc.want) {
				t.Errorf("OTel parses %q into %d members, err %v; want %d", lines, b.Len(), err, len(tc.want))
			}
			if after := otelMembers(baggage.FromContext(ctx)); !maps.Equal(after, before) {
				t.Errorf("OTel baggage changed from %v to %v", before, after)
			}
		})
	}
}

// otelMembers returns the members of b as a map: Baggage.String lists them
// in map order, which changes from call to call.
func otelMembers(b baggage.Baggage) map[string]string {
	m := map[string]string{}
	for _, mb := range b.Members() {
		m[mb.Key()] = mb.Value()
	}
	return m
}

func TestPropagatorWithoutK6LeavesCarrierAlone(t *testing.T) {
	ctx := baggage.ContextWithBaggage(context.Background(), otelBaggage(t, "tenant=acme"))
	c := setCounter{MapCarrier: propagation.MapCarrier{"baggage": "tenant=acme"}}
	Propagator(nil).Inject(ctx, &c)
	if c.sets != 0 || c.MapCarrier["baggage"] != "tenant=acme" {
		t.Fatalf("carrier touched without k6 members: %d sets, %v", c.sets, c.MapCarrier)
	}
	// With next, the carrier holds exactly what next wrote.
	c = setCounter{MapCarrier: propagation.MapCarrier{}}
	Propagator(propagation.Baggage{}).Inject(ctx, &c)
	if c.sets != 1 || c.MapCarrier["baggage"] != "tenant=acme" {
		t.Fatalf("carrier %v after %d sets, want only OTel's baggage", c.MapCarrier, c.sets)
	}
}

// setCounter is a carrier without ValuesGetter that counts writes.
type setCounter struct {
	propagation.MapCarrier
	sets int
}

func (c *setCounter) Set(k, v string) { c.sets++; c.MapCarrier.Set(k, v) }

func TestPropagatorSingleValueCarrier(t *testing.T) {
	ctx := k6Context(t, context.Background(), k6Header)
	c := propagation.MapCarrier{"baggage": "k6.scenario=other, tenant=acme;p=1"}
	Propagator(nil).Inject(ctx, c)
	// Other members first, as written; then the k6 members, each once.
	if got, want := c["baggage"], "tenant=acme;p=1,"+k6labels.Baggage(ctx); got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestPropagatorKeepsW3CLimits(t *testing.T) {
	ctx := k6Context(t, context.Background(), k6Header)
	k6 := k6labels.Baggage(ctx)
	for _, tc := range []struct {
		name     string
		existing string
		want     string
	}{
		{
			// The k6 members go through; an existing member that no longer
			// fits is dropped whole.
			name:     "bytes",
			existing: "a=1,pad=" + strings.Repeat("x", k6labels.MaxBaggageBytes-len("a=1,pad=")-len(k6)),
			want:     "a=1," + k6,
		},
		{
			name:     "members",
			existing: strings.Repeat("m=1,", k6labels.MaxBaggageMembers-1) + "m=1",
			want:     strings.Repeat("m=1,", k6labels.MaxBaggageMembers-3) + k6,
		},
		{
			name:     "one huge member",
			existing: "pad=" + strings.Repeat("x", k6labels.MaxBaggageBytes),
			want:     k6,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := propagation.MapCarrier{"baggage": tc.existing}
			Propagator(nil).Inject(ctx, c)
			got := c["baggage"]
			if got != tc.want {
				t.Errorf("got %.80q... (%d bytes), want %.80q... (%d bytes)", got, len(got), tc.want, len(tc.want))
			}
			if len(got) > k6labels.MaxBaggageBytes || strings.Count(got, ",")+1 > k6labels.MaxBaggageMembers {
				t.Errorf("header past the W3C limits: %d bytes, %d members", len(got), strings.Count(got, ",")+1)
			}
		})
	}
}

func TestPropagatorSendsValidKeys(t *testing.T) {
	// The k6labels parser accepts any key text; such a member labels the
	// request and goes downstream under the key its label name stands for,
	// never as an invalid baggage key.
	ctx := k6Context(t, context.Background(), "k6.bad key=1, k6.scenario=s")
	c := propagation.MapCarrier{}
	Propagator(nil).Inject(ctx, c)
	if got := c["baggage"]; got != "k6.bad_key=1,k6.scenario=s" {
		t.Fatalf("got %q, want the odd key sent as k6.bad_key", got)
	}
	if _, err := baggage.Parse(c["baggage"]); err != nil {
		t.Fatal(err)
	}
}

func TestPropagatorFieldsAndExtract(t *testing.T) {
	w3c := propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
	got := Propagator(w3c).Fields()
	slices.Sort(got)
	if want := []string{"baggage", "traceparent", "tracestate"}; !slices.Equal(got, want) {
		t.Fatalf("Fields() = %v, want %v", got, want)
	}
	if got := Propagator(nil).Fields(); !slices.Equal(got, []string{"baggage"}) {
		t.Fatalf("Fields() = %v", got)
	}
	// Extract is next's: it yields the OTel baggage, and no labels.
	h := propagation.HeaderCarrier{"Baggage": {k6Header + ", tenant=acme"}}
	ctx := Propagator(w3c).Extract(context.Background(), h)
	if v := baggage.FromContext(ctx).Member("tenant").Value(); v != "acme" {
		t.Fatalf("Extract lost the OTel baggage: %q", baggage.FromContext(ctx))
	}
	if k6labels.Baggage(ctx) != "" {
		t.Fatal("Extract labelled the context")
	}
	if ctx := Propagator(nil).Extract(context.Background(), h); ctx != context.Background() {
		t.Fatal("Extract without next changed the context")
	}
}

// FuzzPropagatorInject checks, for any header already present and any k6
// baggage received, that each k6 key the context carries is sent exactly
// once, with a key OpenTelemetry accepts, within the W3C limits, and that
// the rest of the header is not touched without k6 members.
func FuzzPropagatorInject(f *testing.F) {
	f.Add("tenant=acme", k6Header)
	f.Add("", "k6.test_run_id=undefined, k6.scenario=default, k6.name=http://localhost:5000/bike?id=3")
	f.Add("k6.name=x,,k6.name=y", "k6.name=z,k6.name=w, k6.a=%zz")
	f.Add(" , ", "k6.x=1;p=2, k6.y==, bad, k6.a b=1")
	f.Fuzz(func(t *testing.T, existing, incoming string) {
		ctx := k6labels.NewLabeler().Context(context.Background(), []string{incoming})
		c := propagation.MapCarrier{}
		if existing != "" {
			c["baggage"] = existing
		}
		Propagator(nil).Inject(ctx, c)
		got := c["baggage"]
		if k6labels.Baggage(ctx) == "" {
			if got != existing {
				t.Fatalf("header changed without k6 members: %q", got)
			}
			return
		}
		if len(got) > k6labels.MaxBaggageBytes {
			t.Fatalf("header grew past the limit: %d bytes", len(got))
		}
		sent := keyCounts(got)
		for _, m := range k6labels.ParseBaggage(k6labels.Baggage(ctx)) {
			if sent[m.Key] != 1 {
				t.Fatalf("k6 key %q sent %d times: %q", m.Key, sent[m.Key], got)
			}
		}
	})
}

// multiCarrier is a carrier with several values per key that is not an
// http.Header, like a message's headers.
type multiCarrier map[string][]string

func (c multiCarrier) Get(k string) string {
	if v := c[k]; len(v) > 0 {
		return v[0]
	}
	return ""
}
func (c multiCarrier) Set(k, v string)          { c[k] = []string{v} }
func (c multiCarrier) Keys() []string           { return nil }
func (c multiCarrier) Values(k string) []string { return c[k] }

func TestPropagatorReadsEveryValue(t *testing.T) {
	ctx := k6Context(t, context.Background(), k6Header)
	c := multiCarrier{"baggage": {"a=1", "k6.name=old, b=2"}}
	Propagator(nil).Inject(ctx, c)
	if got, want := c["baggage"], []string{"a=1,b=2," + k6labels.Baggage(ctx)}; !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	h := http.Header{"Baggage": {"a=1", "k6.name=old, b=2"}}
	Propagator(nil).Inject(ctx, propagation.HeaderCarrier(h))
	if got, want := h["Baggage"], []string{"a=1,b=2," + k6labels.Baggage(ctx)}; !slices.Equal(got, want) {
		t.Fatalf("header: got %q, want %q", got, want)
	}
}

// A header set by map assignment under a key in another case ("baggage",
// copied from gRPC metadata) is sent as well: Inject folds it into the one
// merged line, so the next service, which takes the last value of a key,
// sees the current k6 members and not the stale ones.
func TestPropagatorFoldsNonCanonicalKey(t *testing.T) {
	next := httptest.NewServer(k6labels.NewHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, _ := pprof.Label(r.Context(), "k6_name")
		fmt.Fprint(w, v)
	})))
	defer next.Close()
	ctx := k6Context(t, context.Background(), "k6.test_run_id=123,k6.scenario=checkout,k6.name=current")
	req, _ := http.NewRequestWithContext(ctx, "GET", next.URL, nil)
	req.Header["baggage"] = []string{"k6.name=stale,tenant=acme"}
	Propagator(propagation.Baggage{}).Inject(ctx, propagation.HeaderCarrier(req.Header))
	if want := "k6.name=current,k6.scenario=checkout,k6.test_run_id=123,tenant=acme"; len(req.Header) != 1 || sortedMembers(req.Header["Baggage"]) != want {
		t.Errorf("header %q, want one Baggage line with %s", req.Header, want)
	}
	resp, err := next.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "current" {
		t.Errorf("the next service labelled k6_name=%q, want current", body)
	}
}

// sortedMembers returns the members of lines as key=value, sorted, joined by ",".
func sortedMembers(lines []string) string {
	var out []string
	for _, m := range k6labels.ParseBaggage(lines...) {
		out = append(out, m.Key+"="+m.Value)
	}
	slices.Sort(out)
	return strings.Join(out, ",")
}

// A k6 tag whose key is not its label name ("k6.my-tag", label k6_my_tag)
// arrives in the OTel baggage as sent and in k6labels' members as
// "k6.my_tag": the header carries it once, as k6labels sends it, through
// the propagator and through k6labels.NewTransport after it.
func TestPropagatorOneMemberPerLabel(t *testing.T) {
	const incoming = "k6.test_run_id=123,k6.scenario=checkout,k6.name=bike,k6.my-tag=a"
	h := http.Header{"Baggage": {incoming}}
	ctx := propagation.Baggage{}.Extract(context.Background(), propagation.HeaderCarrier(h))
	ctx = k6Context(t, ctx, incoming)
	out := http.Header{}
	Propagator(propagation.Baggage{}).Inject(ctx, propagation.HeaderCarrier(out))
	lines := out.Values("Baggage")
	names := map[string]int{}
	for _, m := range k6labels.ParseBaggage(lines...) {
		if name, ok := k6labels.LabelName(m.Key); ok {
			names[name]++
		}
	}
	want := map[string]int{"k6_test_run_id": 1, "k6_scenario": 1, "k6_name": 1, "k6_my_tag": 1}
	if !maps.Equal(names, want) {
		t.Errorf("header %q: label names %v, want each once: %v", lines, names, want)
	}
	if got := values(lines...)["k6.my_tag"]; got != "a" {
		t.Errorf("header %q: k6.my_tag = %q, want a", lines, got)
	}
	// k6labels.NewTransport merges the same way into what the propagator wrote.
	k6labels.MergeBaggageHeader(out, k6labels.Baggage(ctx))
	if again := out.Values("Baggage"); !slices.Equal(again, lines) {
		t.Errorf("merged again: %q, want %q", again, lines)
	}
}
