package k6otel

import (
	"strings"
	"testing"

	"github.com/k6labels/k6labels"
	"go.opentelemetry.io/otel/baggage"
)

// mergeGarbage are existing baggage lines with every kind of invalid member
// next to valid ones.
var mergeGarbage = [][]string{
	{"a=1, sp=a b, dq=\"x\", bs=a\\b, ctl=a\x01b, del=a\x7fb, pct=100%, pct1=%4, pcth=%zz"},
	{"utf8=caf\xc3\xa9, bad key=1, k\"=1, p=1;bad prop=2, q=2;=3, r=3;ok;x=%41, s= 4 ;t ,u=%2C%e9"},
	{"ok=1;;", ";", "=", "==", ",,,", "\t", "x=\xff", "é=1", "k=v;p=\"q\"", "m=1;p=a b", "n=%FF%FE"},
	{strings.Repeat("v=%zz,", 100) + "last=1"},
	{strings.Repeat("k="+strings.Repeat("x", 100)+",", 100)},
	{"k6.name=old value, k6.scenario=x\x00"},
}

// checkAcceptedWhole fails t unless OpenTelemetry's baggage.Parse accepts
// merged with no error and keeps every member of it.
func checkAcceptedWhole(t *testing.T, merged string) {
	t.Helper()
	b, err := baggage.Parse(merged)
	if err != nil {
		t.Fatalf("baggage.Parse(%q): %v", merged, err)
	}
	keys := map[string]bool{}
	if merged != "" {
		for _, m := range strings.Split(merged, ",") {
			k, _, _ := strings.Cut(m, "=")
			keys[strings.TrimSpace(k)] = true
		}
	}
	if b.Len() != len(keys) {
		t.Fatalf("baggage.Parse kept %d of the %d keys of %q", b.Len(), len(keys), merged)
	}
}

// TestMergeBaggageAcceptedByOpenTelemetry checks that what MergeBaggage
// sends downstream is valid W3C baggage for OpenTelemetry's parser, whatever
// the existing header held: invalid members are dropped one by one, the
// valid ones survive, the k6 members come through.
func TestMergeBaggageAcceptedByOpenTelemetry(t *testing.T) {
	const add = "k6.test_run_id=123,k6.scenario=default,k6.name=order%20bike"
	for _, lines := range mergeGarbage {
		merged := k6labels.MergeBaggage(lines, add)
		checkAcceptedWhole(t, merged)
		if !strings.HasSuffix(merged, add) {
			t.Errorf("MergeBaggage(%q) = %q: the k6 members are not all kept", lines, merged)
		}
	}
	merged := k6labels.MergeBaggage(mergeGarbage[0], add)
	for _, want := range []string{"a=1", "k6.name=order%20bike"} {
		if !strings.Contains(merged, want) {
			t.Errorf("valid member %q dropped from %q", want, merged)
		}
	}
}

// FuzzMergeBaggageOpenTelemetry checks, for any existing lines and add, that
// OpenTelemetry's parser accepts each merged member and, when re-encoding
// cannot take it past its own 8192-byte check (it re-encodes values, and
// %FF becomes %EF%BF%BD), the whole header.
func FuzzMergeBaggageOpenTelemetry(f *testing.F) {
	for _, lines := range mergeGarbage {
		f.Add(lines[0], "k6.name=n,k6.scenario=s", "b=2")
	}
	f.Fuzz(func(t *testing.T, line1, add, line2 string) {
		merged := k6labels.MergeBaggage([]string{line1, line2}, add)
		if len(merged) > k6labels.MaxBaggageBytes || strings.Count(merged, ",") >= k6labels.MaxBaggageMembers {
			t.Fatalf("%q is over the W3C limits", merged)
		}
		if merged == "" {
			return
		}
		for _, m := range strings.Split(merged, ",") {
			checkAcceptedWhole(t, m)
		}
		if len(merged) <= k6labels.MaxBaggageBytes/3 {
			checkAcceptedWhole(t, merged)
		}
	})
}
