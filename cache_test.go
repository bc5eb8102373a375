package k6labels

import (
	"maps"
	"strings"
	"testing"
)

// collected returns the labels collect makes of line under the defaults.
func collected(line string) []label {
	labels, _, _ := collect([]string{line}, &defaultConfig, nil)
	return labels
}

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
		if len(line) > maxCachedLine {
			return
		}
		norm, cut := withoutQueries(line, nil)
		if !cut {
			return
		}
		want, wantSkip, wantCut := collect([]string{line}, &defaultConfig, nil)
		got, gotSkip, gotCut := collect([]string{string(norm)}, &defaultConfig, nil)
		if !labelsEqual(got, want) || gotSkip != wantSkip || gotCut != wantCut {
			t.Errorf("%q: labels %v (skipped %d, cut %v); without queries %q: %v (skipped %d, cut %v)",
				line, want, wantSkip, wantCut, norm, got, gotSkip, gotCut)
		}
	})
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
		got, cut := withoutQueries(c.line, nil)
		if c.want == "" {
			if cut {
				t.Errorf("%q: cut to %q, want no cut", c.line, got)
			}
			continue
		}
		if !cut || string(got) != c.want {
			t.Errorf("%q: got %q (cut %v), want %q", c.line, got, cut, c.want)
		}
	}
}

// k6's default traffic, a URL with a new id in every query string, is served
// from one cache entry: no allocation beyond the labelled context.
func TestNewQueryEachRequestHitsCache(t *testing.T) {
	l := NewLabeler(WithRegistry(NewRegistry(0)))
	var lines [][]string
	for i := range 200 {
		lines = append(lines, []string{"k6.test_run_id=1,k6.scenario=s,k6.name=http://h/car?id=" + strings.Repeat("9", i)})
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
