package k6otel

import (
	"context"
	"maps"
	"regexp"
	"runtime/pprof"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/k6labels/k6labels"
	"go.opentelemetry.io/otel/baggage"
)

func ctxLabels(ctx context.Context) map[string]string {
	m := map[string]string{}
	pprof.ForLabels(ctx, func(k, v string) bool {
		m[k] = v
		return true
	})
	return m
}

func TestContextFromOTelBaggage(t *testing.T) {
	for _, tc := range []struct {
		name string
		bag  string
		want map[string]string // pprof labels; nil: ctx returned as is
	}{
		{name: "no baggage"},
		{name: "no k6 member", bag: "tenant=acme,k6=x,k6_name=y"},
		{
			name: "k6 members",
			bag:  "k6.test_run_id=123,k6.scenario=checkout,k6.name=GET%20bike,tenant=acme",
			want: map[string]string{"k6_test_run_id": "123", "k6_scenario": "checkout", "k6_name": "GET bike"},
		},
		{
			// The same rules as the middleware: the query string goes,
			// "undefined" is no test run id, properties are ignored.
			name: "middleware rules",
			bag:  "k6.test_run_id=undefined,k6.scenario=s;p=1,k6.name=http://h/bike?id=3",
			want: map[string]string{"k6_scenario": "s", "k6_name": "http://h/bike"},
		},
		{
			name: "value capped",
			bag:  "k6.name=" + strings.Repeat("n", 300),
			want: map[string]string{"k6_name": strings.Repeat("n", k6labels.DefaultMaxValueBytes)},
		},
		{
			// Keys that make the same label name: the result does not depend
			// on the baggage's map order.
			name: "same label name",
			bag:  "k6.a-b=1,k6.a_b=2",
			want: map[string]string{"k6_a_b": "2"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parent := context.Background()
			if tc.bag != "" {
				b, err := baggage.Parse(tc.bag)
				if err != nil {
					t.Fatal(err)
				}
				parent = baggage.ContextWithBaggage(parent, b)
			}
			for range 20 { // baggage iterates a map: repeat to vary the order
				ctx := Context(parent, nil)
				if tc.want == nil {
					if ctx != parent {
						t.Fatalf("got a new context, want the parent")
					}
					return
				}
				if got := ctxLabels(ctx); !maps.Equal(got, tc.want) {
					t.Fatalf("labels %v, want %v", got, tc.want)
				}
				if got := otelMembers(baggage.FromContext(ctx)); !maps.Equal(got, otelMembers(baggage.FromContext(parent))) {
					t.Fatalf("OTel baggage changed: %v", got)
				}
			}
		})
	}
}

func TestContextKeepsOtherLabelsAndUsesLabeler(t *testing.T) {
	b, _ := baggage.Parse("k6.scenario=s,k6.name=n")
	parent := pprof.WithLabels(baggage.ContextWithBaggage(context.Background(), b), pprof.Labels("span_id", "abc"))
	ctx := Context(parent, k6labels.NewLabeler(k6labels.WithMaxValueBytes(1)))
	want := map[string]string{"span_id": "abc", "k6_scenario": "s", "k6_name": "n"}
	if got := ctxLabels(ctx); !maps.Equal(got, want) {
		t.Fatalf("labels %v, want %v", got, want)
	}
	if got := k6labels.Baggage(ctx); got != "k6.name=n,k6.scenario=s" {
		t.Fatalf("Baggage = %q", got)
	}
}

func TestContextAlreadyLabelled(t *testing.T) {
	// The middleware ran: it saw the whole header, OTel only what it could
	// parse. Context must not relabel from the poorer source.
	b, _ := baggage.Parse("k6.scenario=other")
	parent := baggage.ContextWithBaggage(context.Background(), b)
	labelled := k6Context(t, parent, k6Header)
	if ctx := Context(labelled, nil); ctx != labelled {
		t.Fatalf("Context relabelled a labelled context: %v", ctxLabels(ctx))
	}
}

var validLabelName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

// FuzzContext checks, for any baggage OpenTelemetry accepts, that Context
// does not panic, keeps the labels the context already had, and makes only
// labels Pyroscope accepts, as the middleware would.
func FuzzContext(f *testing.F) {
	f.Add("k6.test_run_id=123,k6.scenario=checkout,k6.name=GET%20bike")
	f.Add("k6.name=%E2%82%AC%FF,k6.a-b=1,k6.a_b=2,k6.=x,k6.span_id=evil")
	f.Add("k6.x=" + strings.Repeat("%00", 100) + ";p=1,other=1")
	f.Fuzz(func(t *testing.T, s string) {
		b, _ := baggage.Parse(s) // keeps the members it accepts
		parent := pprof.WithLabels(baggage.ContextWithBaggage(context.Background(), b), pprof.Labels("span_id", "abc"))
		ctx := Context(parent, nil)
		got := ctxLabels(ctx)
		if got["span_id"] != "abc" {
			t.Fatalf("span_id lost: %v", got)
		}
		for k, v := range got {
			if !validLabelName.MatchString(k) || !utf8.ValidString(v) || len(v) > k6labels.DefaultMaxValueBytes {
				t.Fatalf("invalid label %q=%q", k, v)
			}
		}
		if m := otelMembers(baggage.FromContext(ctx)); !maps.Equal(m, otelMembers(b)) {
			t.Fatalf("OTel baggage changed: %v", m)
		}
	})
}
