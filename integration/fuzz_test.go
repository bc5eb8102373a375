package integration

import (
	"context"
	"regexp"
	"runtime/pprof"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/k6labels/k6labels"
	"go.opentelemetry.io/otel/baggage"
)

var labelNameRE = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

// checkLabels fails t for any pprof label of ctx that Pyroscope would reject
// or that breaks the configured caps.
func checkLabels(t testing.TB, ctx context.Context, maxValueBytes, maxLabels int, what string) {
	t.Helper()
	n := 0
	pprof.ForLabels(ctx, func(k, v string) bool {
		n++
		if !labelNameRE.MatchString(k) {
			t.Errorf("%s: invalid label name %q", what, k)
		}
		if !utf8.ValidString(v) {
			t.Errorf("%s: label %s has invalid UTF-8 %q", what, k, v)
		}
		if len(v) > maxValueBytes {
			t.Errorf("%s: label %s is %d bytes long, cap %d", what, k, len(v), maxValueBytes)
		}
		if v == "" {
			t.Errorf("%s: label %s is empty", what, k)
		}
		return true
	})
	if n > maxLabels {
		t.Errorf("%s: %d labels, cap %d", what, n, maxLabels)
	}
}

// w3cFullyValid reports whether s is a baggage header value that OpenTelemetry
// accepted with nothing dropped and that is also plain W3C syntax:
//   - otelErr is nil: OpenTelemetry reports every member it skips (malformed
//     member, bad key, bad value, bad property, bad percent escape) and every
//     limit it hits (8192 bytes, 64 distinct keys) as an error, so nil means
//     every list member was kept (duplicates aside, where the last wins);
//   - s holds only printable ASCII, spaces and tabs: the W3C grammar's
//     optional white space is SP / HTAB, while OpenTelemetry trims any
//     Unicode space (strings.TrimSpace), a leniency outside the grammar;
//   - s has at most 64 list members: OpenTelemetry's member limit counts
//     distinct keys, while the specification lets a receiver stop at 64
//     members, which k6labels does.
func w3cFullyValid(s string, otelErr error) bool {
	if otelErr != nil {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x20 || c > 0x7e) && c != '\t' {
			return false
		}
	}
	return strings.Count(s, ",")+1 <= k6labels.MaxBaggageMembers
}

// FuzzOTelDifferential compares k6labels' parser with OpenTelemetry Go's
// baggage.Parse. For every input, k6labels must not panic and must produce
// only valid labels. For inputs that OpenTelemetry accepts as fully valid
// W3C baggage (see w3cFullyValid), ParseBaggage must yield the same members
// with the same decoded values, and the labels must come from those members.
func FuzzOTelDifferential(f *testing.F) {
	for _, s := range []string{
		"k6.test_run_id=123456, k6.scenario=default, k6.name=http://localhost:5000/bike?id=3",
		"k6.test_run_id=undefined,k6.scenario=browse,k6.name=http://host/posts/${}",
		"userId=alice,serverNode=DF%2028,isProduction=false",
		"k6.name=a;prop1=1;prop2, k6.scenario = s1 ,other=x",
		"k6.name=%E2%82%AC%20euro, k6.scenario=%41%42",
		"k6.name=%FF%FE, k6.scenario=%C3%28",
		"k6.name=%E2%82, k6.scenario=%ED%A0%80",
		"k6.name=a=b=c, k6.scenario=\tx\t",
		"k6.name=first, k6.name=second",
		"k6.name=%00%0A%1B%7F",
		"k6.name=",
		"k6.name=%, k6.scenario=%zz, k6.x=%4",
		"k6.a.b-c=1, K6.upper=2, k6.=3",
		"",
	} {
		f.Add(s)
	}
	labeler := k6labels.NewLabeler(ownRegistry())
	f.Fuzz(func(t *testing.T, s string) {
		ours := k6labels.ParseBaggage(s)
		ctx := labeler.Context(context.Background(), []string{s})
		checkLabels(t, ctx, k6labels.DefaultMaxValueBytes, k6labels.DefaultMaxLabels, "labeler")
		for _, m := range ours {
			if !utf8.ValidString(m.Value) {
				t.Errorf("ParseBaggage value %q of %q is not valid UTF-8", m.Value, m.Key)
			}
		}

		// What k6labels passes on downstream is valid W3C baggage, whatever
		// came in: OpenTelemetry keeps every member of it.
		if down := k6labels.Baggage(ctx); down != "" {
			if ob, err := baggage.Parse(down); err != nil || ob.Len() != len(k6labels.Members(ctx)) {
				t.Errorf("input %q: Baggage(ctx) %q is not valid W3C baggage (OpenTelemetry keeps %d of %d members): %v",
					s, down, ob.Len(), len(k6labels.Members(ctx)), err)
			}
		}

		b, err := baggage.Parse(s)
		if !w3cFullyValid(s, err) {
			return
		}
		elements := 0
		for e := range strings.SplitSeq(s, ",") {
			if strings.Trim(e, " \t") != "" {
				elements++
			}
		}
		if len(ours) != elements {
			t.Fatalf("input %q: OpenTelemetry accepts all %d members, ParseBaggage returned %d: %q", s, elements, len(ours), ours)
		}
		last := make(map[string]string, len(ours))
		for _, m := range ours {
			last[m.Key] = m.Value // the last of duplicate keys wins, as in OpenTelemetry
		}
		if len(last) != b.Len() {
			t.Fatalf("input %q: %d distinct keys, OpenTelemetry has %d", s, len(last), b.Len())
		}
		for _, om := range b.Members() {
			v, ok := last[om.Key()]
			if !ok {
				t.Fatalf("input %q: OpenTelemetry member %q missing from ParseBaggage %q", s, om.Key(), ours)
			}
			if v != om.Value() {
				t.Fatalf("input %q: key %q: ParseBaggage value %q, OpenTelemetry %q", s, om.Key(), v, om.Value())
			}
		}
		// Every label comes from a k6 member OpenTelemetry also has (a key
		// that makes the same label name: Members reports "k6.a-b" as
		// "k6.a_b"), and a plain value (printable, short, not a URL whose
		// query is cut) of the only key that makes its name is the label
		// value as it was sent, or the overflow value once the cap is
		// reached.
		byName := map[string][]string{}
		for _, om := range b.Members() {
			if n, ok := k6labels.LabelName(om.Key()); ok {
				byName[n] = append(byName[n], om.Value())
			}
		}
		for _, m := range k6labels.Members(ctx) {
			n, _ := k6labels.LabelName(m.Key)
			vals := byName[n]
			if len(vals) == 0 || !strings.HasPrefix(m.Key, "k6.") {
				t.Fatalf("input %q: label from key %q, which no k6 member OpenTelemetry has makes", s, m.Key)
			}
			if len(vals) > 1 {
				continue // several keys make this name
			}
			ov := vals[0]
			plain := len(ov) <= k6labels.DefaultMaxValueBytes && !strings.ContainsAny(ov, "?#") && utf8.ValidString(ov)
			for _, r := range ov {
				if r < 0x20 || r >= 0x7f {
					plain = false
				}
			}
			if plain && m.Value != ov && m.Value != k6labels.OverflowValue {
				t.Fatalf("input %q: label for %q is %q, OpenTelemetry value %q", s, m.Key, m.Value, ov)
			}
		}
	})
}
