package k6labels

import (
	"strconv"
	"testing"
)

const nonK6Line = "userId=alice,serverNode=DF%2028,isProduction=false"

// A non-k6 line is cached as "no labels" from its second request on, and
// a cached one is counted as a scanned one is.
func TestNonK6LineCached(t *testing.T) {
	t.Parallel()
	reg := NewRegistry(0)
	l := NewLabeler(WithRegistry(reg))
	cfg := l.config()
	for _, line := range []string{nonK6Line, "a=1, ;;, =, b=2", "k6.name=,x=1"} {
		for i := range 3 {
			if _, ok := l.Labels(t.Context(), []string{line}); ok {
				t.Fatalf("%q: labelled", line)
			}
			e := reg.lines.Get(cfg.key, line)
			if cached := e != nil; cached != (i > 0) {
				t.Errorf("%q after %d requests: cached %v, want %v", line, i+1, cached, i > 0)
			}
			if e != nil && e.Val.set != nil {
				t.Errorf("%q: cached with labels", line)
			}
		}
	}
	// Malformed members are counted on every request, from the cache too:
	// 3 requests of "a=1, ;;, =, b=2" with 2 each.
	if s := reg.Stats(); s.Skipped != 6 || s.Labelled != 0 {
		t.Errorf("Stats = %+v, want Skipped 6, Labelled 0", s)
	}
	// A k6 line after it is labelled as ever.
	if got := contextLabels(l, "k6.name=n"); got["k6_name"] != "n" {
		t.Errorf("k6 line after: labels %v", got)
	}
}

// Baggage with a new value on every request costs no allocation and is
// never cached: only a line seen twice is.
func TestNonK6LinesOnceNotCached(t *testing.T) {
	reg := NewRegistry(0)
	l := NewLabeler(WithRegistry(reg))
	lines := make([][]string, 1000)
	for i := range lines {
		lines[i] = []string{"request.id=" + strconv.Itoa(i) + ",tenant=acme"}
	}
	i := 0
	if n := testing.AllocsPerRun(len(lines)-1, func() {
		l.Labels(t.Context(), lines[i])
		i++
	}); n != 0 {
		t.Errorf("%v allocations per request, want 0", n)
	}
	for _, line := range lines {
		if reg.lines.Get(l.config().key, line[0]) != nil {
			t.Fatalf("%q, seen once, is cached", line[0])
		}
	}
}

// BenchmarkNonK6Line: a request whose one baggage line has no k6 member,
// scanned every time (scan: a new line each time, as before the cache
// remembered "no labels"; scanQuery: one with a URL and its query) or from
// the cache (cached), against k6's line from the cache (k6). The figures
// are in internal/linecache.
func BenchmarkNonK6Line(b *testing.B) {
	const k6 = "k6.test_run_id=123456,k6.scenario=default,k6.name=http://localhost:5000/bike"
	fresh := make([]string, 1<<16)
	query := make([]string, len(fresh))
	for i := range fresh {
		fresh[i] = nonK6Line + ",n=" + strconv.Itoa(i) // one more member: about as long
		query[i] = nonK6Line + ",url=http://h/p?n=" + strconv.Itoa(i)
	}
	for _, r := range []struct {
		name  string
		lines []string
	}{
		{"line=scan", fresh},
		{"line=scanQuery", query}, // with a query string to cut
		{"line=cached", []string{nonK6Line}},
		{"line=k6", []string{k6}},
	} {
		b.Run(r.name, func(b *testing.B) {
			l := NewLabeler(WithRegistry(NewRegistry(0)))
			for _, line := range r.lines[:min(len(r.lines), 2)] { // warm the cache
				l.Labels(b.Context(), []string{line})
				l.Labels(b.Context(), []string{line})
			}
			buf := make([]string, 1)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				buf[0] = r.lines[i%len(r.lines)]
				l.Labels(b.Context(), buf)
				i++
			}
		})
	}
}
