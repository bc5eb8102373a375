package k6labels

import (
	"context"
	"maps"
	"strconv"
	"strings"
	"testing"

	"github.com/k6labels/k6labels/internal/linecache"
	"github.com/k6labels/k6labels/internal/w3c"
)

// A line and its form without queries make the same labels, skip the same
// members and are cut by the same limits: they may share a cache entry.
func FuzzWithoutQueries(f *testing.F) {
	for _, s := range []string{
		"k6.test_run_id=1,k6.scenario=s,k6.name=http://h:1/car?vehicle_id=7&city=berlin",
		"k6.name = /a ?x, k6.name=/b?y;p=1",
		"x=k6.name=/a?b, k6.names=/c?d",
		"k6.name=a%3A%2F%2Fb%3Fc?x=://",
		"k6.name=/a#b?c, bad, k6.name=http://h/?",
		"k6.name=foo?u=http://x",
		"k6.name=/a;p?x=1",
		"k6.name=,k6.name=/x?y",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if len(line) > linecache.MaxLine {
			return
		}
		norm, cut := w3c.WithoutQueries(line, nil)
		if !cut {
			return
		}
		sameLabels(t, line, norm)
	})
}

// A cached line whose last member is a URL name (urlTail) serves that line
// with a query string or fragment appended: both make the same labels, skip
// the same members and are cut by the same limits. This is the rule that
// lets the cache answer k6's default traffic without cutting each line.
func FuzzURLTail(f *testing.F) {
	for _, s := range [][2]string{
		{"k6.test_run_id=1,k6.scenario=s,k6.name=http://h:1/car", "vehicle_id=7&city=berlin"},
		{"k6.name = /a#b", "c;p=1"},
		{"k6.name=/a ", "x"},
		{"k6.name=/a;p", "x"},
		{"k6.name=a%3A%2F%2Fb", "x=://"},
		{"x=1, k6.name=http://h/%3F", " ;q"},
		{"k6.name=/x,k6.name=/y", "\"\x00"},
	} {
		f.Add(s[0], s[1], false)
	}
	f.Fuzz(func(t *testing.T, line, tail string, fragment bool) {
		mark := "?"
		if fragment {
			mark = "#"
		}
		long := line + mark + tail
		if len(long) > linecache.MaxLine || strings.Contains(tail, ",") || !w3c.EndsInURLName(line[w3c.LastComma(line)+1:]) {
			return
		}
		want := sameLabels(t, long, line)
		// And through the cache: line's entry serves long.
		l := NewLabeler(WithRegistry(NewRegistry(0)))
		l.Context(t.Context(), []string{line})
		wantLabels := map[string]string{}
		for _, lb := range want {
			wantLabels[lb.name] = lb.value
		}
		if got := contextLabels(l, long); !maps.Equal(got, wantLabels) {
			t.Fatalf("%q after %q: labels %v, want %v", long, line, got, wantLabels)
		}
	})
}

// sameLabels fails t unless lines a and b make the same labels, skip the
// same members and are cut by the same limits; it returns a's labels.
func sameLabels(t *testing.T, a, b string) []label {
	t.Helper()
	var arenaA, arenaB w3c.Arena
	listA, skipA, cutA := collect([]string{a}, &defaultConfig, &arenaA)
	listB, skipB, cutB := collect([]string{b}, &defaultConfig, &arenaB)
	la, lb := listA.l[:listA.n], listB.l[:listB.n]
	if !labelsEqual(la, lb) || skipA != skipB || cutA != cutB {
		t.Fatalf("%q: labels %v (skipped %d, cut %v); %q: %v (skipped %d, cut %v)", a, la, skipA, cutA, b, lb, skipB, cutB)
	}
	return la
}

func labelsEqual(a, b []label) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestWithoutQueries(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ line, want string }{
		{"k6.test_run_id=1,k6.scenario=s,k6.name=http://h/car?id=7", "k6.test_run_id=1,k6.scenario=s,k6.name=http://h/car"},
		{"k6.name=/a?x, k6.scenario=s, k6.name = /b#f ;p", "k6.name=/a, k6.scenario=s, k6.name = /b"},
		{"k6.name=order?bike", ""},     // not a URL: the query is part of the name
		{"x=k6.name=/a?b", ""},         // a value, not a key
		{"k6.name=foo?u=http://x", ""}, // a URL only through its query
		{"k6.name=/a ?x", ""},          // what is left ends in a space
		{"k6.name=/a;p?x", ""},         // the '?' is in a property
		{"k6.name=http://h/a", ""},     // nothing to cut
	} {
		got, cut := w3c.WithoutQueries(c.line, nil)
		if c.want == "" {
			if cut {
				t.Errorf("%q: cut to %q, want no cut", c.line, got)
			}
			continue
		}
		if !cut || got != c.want {
			t.Errorf("%q: got %q (cut %v), want %q", c.line, got, cut, c.want)
		}
	}
}

// k6's default traffic, a URL with a new id in every query string, is served
// from one cache entry: no allocation beyond the labelled context.
func TestNewQueryEachRequestHitsCache(t *testing.T) {
	for _, c := range []struct{ name, before, after string }{
		{"k6.name last", "k6.test_run_id=1,k6.scenario=s,k6.name=http://h/car?id=", ""},
		{"k6.name first", "k6.name=http://h/car?id=", ",k6.scenario=s,k6.test_run_id=1"},
	} {
		t.Run(c.name, func(t *testing.T) { testNewQueryHitsCache(t, c.before, c.after) })
	}
}

func testNewQueryHitsCache(t *testing.T, before, after string) {
	l := NewLabeler(WithRegistry(NewRegistry(0)))
	var lines [][]string
	for i := range 200 {
		lines = append(lines, []string{before + strings.Repeat("9", i) + after})
	}
	line := func(i int) []string { return lines[i%len(lines)] }
	l.Context(t.Context(), line(0))
	i := 0
	if n := testing.AllocsPerRun(200, func() { i++; l.Context(t.Context(), line(i)) }); n != 1 {
		t.Errorf("a new query string costs %v allocations, want 1 (the context)", n)
	}
	want := map[string]string{"k6_test_run_id": "1", "k6_scenario": "s", "k6_name": "http://h/car"}
	if got := contextLabels(l, line(7)...); !maps.Equal(got, want) {
		t.Errorf("labels = %v, want %v", got, want)
	}
}

// A line's query string is dropped through the cache only where the labels
// drop it: each line here follows a line that is cached, and would be served
// from that entry, wrongly, if the cache ignored the rule.
func TestQueryThroughCache(t *testing.T) {
	for _, c := range []struct {
		cached, line string
		want         map[string]string
	}{
		{"k6.name=order", "k6.name=order?bike", map[string]string{"k6_name": "order?bike"}},
		{"k6.name=/a;p", "k6.name=/a;p?x", map[string]string{"k6_name": "/a"}},
		{"k6.name=/a", "k6.name=/a?x,k6.scenario=s", map[string]string{"k6_name": "/a", "k6_scenario": "s"}},
		{"k6.name=/a", "k6.name=/a#x", map[string]string{"k6_name": "/a"}},
		{"k6.scenario=s,k6.name=/a", "k6.scenario=s,k6.name=/a?x", map[string]string{"k6_name": "/a", "k6_scenario": "s"}},
	} {
		l := NewLabeler(WithRegistry(NewRegistry(0)))
		l.Context(t.Context(), []string{c.cached})
		for range 2 { // the first request may cache the line itself
			if got := contextLabels(l, c.line); !maps.Equal(got, c.want) {
				t.Errorf("%q after %q: labels %v, want %v", c.line, c.cached, got, c.want)
			}
		}
	}
}

// isValidBaggage reports whether s is W3C baggage: key=value members,
// tokens for keys, baggage-octets (with '%' only in escapes) for values.
func isValidBaggage(s string) bool {
	if s == "" {
		return true
	}
	for _, m := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(m, "=")
		if !ok || !w3c.IsKey(k) {
			return false
		}
		for i := 0; i < len(v); i++ {
			c := v[i]
			switch {
			case c == '%':
				if i+2 >= len(v) || !isHexDigit(v[i+1]) || !isHexDigit(v[i+2]) {
					return false
				}
			case w3c.NeedsEscape(c):
				return false
			}
		}
	}
	return true
}

func isHexDigit(c byte) bool {
	return strings.IndexByte("0123456789abcdefABCDEF", c) >= 0
}

// Whatever the options and the input, Baggage is valid W3C baggage within
// its limits, and MergeBaggage keeps every k6 member it holds.
func FuzzBaggageFits(f *testing.F) {
	f.Add(30, 2048, 200, "k6.a=\x80\x80\x80", uint8(3))
	f.Add(8, 256, 1, "k6.name=http://h/x?y", uint8(0))
	f.Fuzz(func(t *testing.T, maxLabels, maxValueBytes, repeat int, member string, shape uint8) {
		l := NewLabeler(WithRegistry(NewRegistry(0)), WithMaxLabels(maxLabels), WithMaxValueBytes(maxValueBytes))
		var parts []string
		for i := range 30 {
			v := strings.Repeat(member, min(max(repeat, 0)%400, 2048/max(len(member), 1)))
			if shape&1 == 1 {
				v = strings.Repeat("\x80", 2048) // each byte becomes U+FFFD, encoded as %EF%BF%BD
			}
			parts = append(parts, "k6.m"+strconv.Itoa(i)+"="+v)
		}
		ctx := l.Context(t.Context(), []string{strings.Join(parts, ",")})
		b := Baggage(ctx)
		if len(b) > MaxBaggageBytes || strings.Count(b, ",") >= MaxBaggageMembers || !isValidBaggage(b) {
			t.Fatalf("Baggage: %d bytes, %d members, valid %v", len(b), strings.Count(b, ",")+1, isValidBaggage(b))
		}
		merged := MergeBaggage([]string{strings.Repeat("x", 100) + "=1,other=2"}, b)
		for _, m := range Members(ctx) {
			if !strings.Contains(merged, m.Key+"=") {
				t.Fatalf("MergeBaggage dropped %s", m.Key)
			}
		}
	})
}

// The line cache holds every line of traffic that cycles through as many
// distinct names as the cardinality cap allows and more: each line may take
// either of two sets, so a few crowded sets do not make their lines miss.
func TestLineCacheHoldsManyNames(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1000, 1500} {
		lines := names(n)
		for range pick(5, 20) { // a new hash seed each time; K6LABELS_SOAK: 20
			l := NewLabeler(WithRegistry(NewRegistry(0)), WithMaxValuesPerLabel(maxValuesLimit))
			for range 2 {
				for _, line := range lines {
					l.Labels(context.Background(), []string{line})
				}
			}
			if missed := uncached(l, lines); missed > 0 {
				t.Fatalf("%d names cycling: %d of them not cached", n, missed)
			}
		}
	}
}

// A set that leaves labels out to fit a baggage header is found in the set
// cache like any other: a header that makes it, too long for the line cache,
// is not built and admitted again (under the registry's lock) each time.
func TestOversizedSetCached(t *testing.T) {
	l := NewLabeler(WithRegistry(NewRegistry(0)), WithMaxValueBytes(2048))
	big := strings.Repeat("%FF", 700) // 2100 bytes once made valid UTF-8, 6300 encoded
	lines := []string{"k6.scenario=" + big, "k6.name=" + big}
	first := setFrom(l.Context(context.Background(), lines))
	if first == nil || first.dropped == 0 {
		t.Fatalf("set %+v: the test needs a set that leaves a label out", first)
	}
	if again := setFrom(l.Context(context.Background(), lines)); again != first {
		t.Error("the same header made a new set")
	}
	// The context, and room for the decoded values once the parse's arena
	// is full; a set built again costs ten.
	if n := testing.AllocsPerRun(100, func() { l.Context(context.Background(), lines) }); n > 2 {
		t.Errorf("%.0f allocations per request, want 2", n)
	}
}
