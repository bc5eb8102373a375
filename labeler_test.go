package k6labels

import (
	"context"
	"maps"
	"regexp"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/k6labels/k6labels/internal/linecache"
)

// resetState gives a test a fresh process-wide registry and counters, and
// puts the previous one back when the test ends. Only tests of the
// process-wide defaults need it, and they cannot run in parallel; every
// other test uses a Registry of its own (WithRegistry(NewRegistry(0))).
func resetState(t *testing.T) {
	t.Helper()
	prev := defaultRegistry
	defaultRegistry = NewRegistry(0)
	t.Cleanup(func() { defaultRegistry = prev })
}

// A Labeler with a Registry of its own counts and caches there and leaves
// the process-wide one alone; without one it uses the process-wide one. This
// is what lets the other tests run in parallel.
func TestWithRegistryIsolates(t *testing.T) {
	resetState(t)
	own := NewRegistry(0)
	line := []string{"k6.scenario=s, k6.name=n, k6.other=x"}
	NewLabeler(WithRegistry(own)).Context(context.Background(), line)
	if s := Stats(); s != (Counters{}) {
		t.Errorf("process-wide Stats() = %+v after a Labeler with its own Registry, want zero", s)
	}
	if s := own.Stats(); s.Labelled != 1 {
		t.Errorf("own Registry's Stats() = %+v, want 1 labelled", s)
	}
	if _, ok := defaultRegistry.caps.names["k6_other"]; ok {
		t.Error("the process-wide registry recorded a name of a Labeler with its own Registry")
	}
	NewLabeler().Context(context.Background(), line)
	if s := Stats(); s.Labelled != 1 {
		t.Errorf("process-wide Stats() = %+v after a default Labeler, want 1 labelled", s)
	}
}

func labelsOf(ctx context.Context) map[string]string {
	m := map[string]string{}
	pprof.ForLabels(ctx, func(k, v string) bool {
		m[k] = v
		return true
	})
	return m
}

func contextLabels(l *Labeler, lines ...string) map[string]string {
	return labelsOf(l.Context(context.Background(), lines))
}

var validName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

func TestContextLabels(t *testing.T) {
	long := strings.Repeat("x", 300)
	var members64 []string
	for i := range 70 {
		members64 = append(members64, "m"+strconv.Itoa(i)+"=v")
	}
	tests := []struct {
		name  string
		lines []string
		want  map[string]string
	}{
		{"k6 local run (captured)", []string{"k6.test_run_id=undefined, k6.scenario=default, k6.name=http://127.0.0.1:18080/jslib"},
			map[string]string{"k6_scenario": "default", "k6_name": "http://127.0.0.1:18080/jslib"}},
		{"k6 named request (captured)", []string{"k6.test_run_id=run42, k6.scenario=checkout, k6.name=named-get"},
			map[string]string{"k6_test_run_id": "run42", "k6_scenario": "checkout", "k6_name": "named-get"}},
		{"jslib header drops the query", []string{"k6.test_run_id=123456, k6.scenario=default, k6.name=http://localhost:5000/bike?id=3"},
			map[string]string{"k6_test_run_id": "123456", "k6_scenario": "default", "k6_name": "http://localhost:5000/bike"}},
		{"fragment and query", []string{"k6.name=/bike#top?x"}, map[string]string{"k6_name": "/bike"}},
		{"non-URL name keeps '?'", []string{"k6.name=what?"}, map[string]string{"k6_name": "what?"}},
		{"escaped '?' is path", []string{"k6.name=/a%3Fb?c"}, map[string]string{"k6_name": "/a?b"}},
		{"bad escape kept literally, others survive", []string{"k6.scenario=s1, k6.name=100%zz, k6.test_run_id=7"},
			map[string]string{"k6_scenario": "s1", "k6_name": "100%zz", "k6_test_run_id": "7"}},
		{"truncated escape", []string{"k6.name=a%4"}, map[string]string{"k6_name": "a%4"}},
		{"space inside a tags.name", []string{"k6.scenario=s, k6.name=get my bike"},
			map[string]string{"k6_scenario": "s", "k6_name": "get my bike"}},
		{"percent-encoded space", []string{"k6.name=get%20my%20bike"}, map[string]string{"k6_name": "get my bike"}},
		{"key with '-'", []string{"k6.my-tag=x"}, map[string]string{"k6_my_tag": "x"}},
		{"key with other characters", []string{"k6.a.b/c é=x"}, map[string]string{"k6_a_b_c___": "x"}},
		{"non-k6 members ignored", []string{"userId=alice, k6.scenario=s, serverNode=DF%2028, K6.name=upper"},
			map[string]string{"k6_scenario": "s"}},
		{"duplicate key: last wins", []string{"k6.scenario=first, k6.scenario=second"}, map[string]string{"k6_scenario": "second"}},
		{"duplicate across lines: last wins", []string{"k6.scenario=first", "k6.scenario=second"}, map[string]string{"k6_scenario": "second"}},
		{"names that collide: last wins", []string{"k6.a-b=1, k6.a_b=2"}, map[string]string{"k6_a_b": "2"}},
		{"several header lines", []string{"k6.test_run_id=r1", "other=1, k6.scenario=s", "k6.name=n"},
			map[string]string{"k6_test_run_id": "r1", "k6_scenario": "s", "k6_name": "n"}},
		{"properties ignored", []string{"k6.scenario=s;prop=1;flag, k6.name = n ; x"}, map[string]string{"k6_scenario": "s", "k6_name": "n"}},
		{"OWS and tabs", []string{"  k6.scenario \t=\t s ,\tk6.name=n\t"}, map[string]string{"k6_scenario": "s", "k6_name": "n"}},
		{"value with '='", []string{"k6.name=a=b=c"}, map[string]string{"k6_name": "a=b=c"}},
		{"malformed members skipped", []string{"garbage, =novalue, k6.scenario=s, ,,, k6.name"}, map[string]string{"k6_scenario": "s"}},
		{"empty values and undefined are no labels", []string{"k6.scenario=, k6.test_run_id=undefined, k6.name=n"},
			map[string]string{"k6_name": "n"}},
		{"empty value clears an earlier one", []string{"k6.scenario=a, k6.scenario="}, map[string]string{}},
		{"key 'k6.' alone", []string{"k6.=x, k6.name=n"}, map[string]string{"k6_name": "n"}},
		{"invalid UTF-8 becomes U+FFFD", []string{"k6.name=a%FFb, k6.scenario=c\xffd"},
			map[string]string{"k6_name": "a\uFFFDb", "k6_scenario": "c\uFFFDd"}},
		{"control characters become U+FFFD", []string{"k6.name=a%0Ab%7F"}, map[string]string{"k6_name": "a\uFFFDb\uFFFD"}},
		{"UTF-8 kept", []string{"k6.name=%C3%A9t%C3%A9"}, map[string]string{"k6_name": "été"}},
		{"value capped at 256 bytes", []string{"k6.name=" + long}, map[string]string{"k6_name": long[:256]}},
		{"cap on a rune boundary", []string{"k6.name=" + strings.Repeat("%C3%A9", 200)},
			map[string]string{"k6_name": strings.Repeat("é", 128)}},
		{"no k6 members", []string{"a=1,b=2"}, map[string]string{}},
		{"empty header", []string{""}, map[string]string{}},
		{"k6 member after 64 members is not examined", []string{strings.Join(members64, ",") + ",k6.scenario=late"},
			map[string]string{}},
		{"k6 member within 64 members", []string{"k6.scenario=early," + strings.Join(members64, ",")},
			map[string]string{"k6_scenario": "early"}},
		{"member past 8192 bytes dropped whole", []string{"k6.scenario=s, pad=" + strings.Repeat("p", 8170) + ", k6.name=abcdefghij"},
			map[string]string{"k6_scenario": "s"}},
		{"no more than 64 lines examined", append(make([]string, 64), "k6.scenario=late"), map[string]string{}},
		{"65 lines, the k6 member within 64", append([]string{"k6.scenario=early"}, make([]string, 64)...),
			map[string]string{"k6_scenario": "early"}},
		{"line past the budget dropped", []string{"k6.scenario=s, pad=" + strings.Repeat("p", 8180), "k6.name=n"},
			map[string]string{"k6_scenario": "s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			reg := NewRegistry(0)
			got := contextLabels(NewLabeler(WithRegistry(reg)), tt.lines...)
			if !maps.Equal(got, tt.want) {
				t.Errorf("labels = %q, want %q", got, tt.want)
			}
			for k, v := range got {
				if !validName.MatchString(k) || !utf8.ValidString(v) || len(v) > DefaultMaxValueBytes {
					t.Errorf("invalid label %q=%q", k, v)
				}
			}
		})
	}
}

func TestMaxLabels(t *testing.T) {
	t.Parallel()
	reg := NewRegistry(0)
	var members []string
	for i := range 12 {
		members = append(members, "k6.m"+strconv.Itoa(10+i)+"=v")
	}
	got := contextLabels(NewLabeler(WithRegistry(reg)), strings.Join(members, ","))
	if len(got) != DefaultMaxLabels {
		t.Fatalf("got %d labels, want %d: %v", len(got), DefaultMaxLabels, got)
	}
	for i := range DefaultMaxLabels {
		if _, ok := got["k6_m"+strconv.Itoa(10+i)]; !ok {
			t.Errorf("the first %d members should be kept; missing k6_m%d", DefaultMaxLabels, 10+i)
		}
	}
	if s := reg.Stats(); s.Skipped != 4 {
		t.Errorf("Skipped = %d, want 4", s.Skipped)
	}
	if got := contextLabels(NewLabeler(WithRegistry(reg), WithMaxLabels(2)), strings.Join(members, ",")); len(got) != 2 {
		t.Errorf("WithMaxLabels(2): got %v", got)
	}
}

func TestOptions(t *testing.T) {
	t.Parallel()
	reg := NewRegistry(0)
	got := contextLabels(NewLabeler(WithRegistry(reg), WithQueryStrings(true), WithMaxValueBytes(16)), "k6.name=/bike?id=3&x=y&z=1234567")
	if got["k6_name"] != "/bike?id=3&x=y&z" {
		t.Errorf("k6_name = %q, want the query kept and cut at 16 bytes", got["k6_name"])
	}
	if c := newConfig([]Option{WithMaxValueBytes(3)}); c.maxValueBytes != minValueBytes {
		t.Errorf("maxValueBytes = %d, want the floor %d", c.maxValueBytes, minValueBytes)
	}
	c := newConfig([]Option{WithMaxValueBytes(-1), WithMaxLabels(1000), WithMaxValuesPerLabel(0), nil})
	if c.maxValueBytes != DefaultMaxValueBytes || c.maxLabels != maxLabelsLimit || c.maxValues != DefaultMaxValuesPerLabel {
		t.Errorf("out-of-range options not clamped: %+v", c)
	}
	if c := newConfig([]Option{WithMaxValueBytes(1 << 20)}); c.maxValueBytes != maxValueBytesLimit {
		t.Errorf("maxValueBytes = %d, want Pyroscope's limit %d", c.maxValueBytes, maxValueBytesLimit)
	}
}

func TestCardinalityCap(t *testing.T) {
	t.Parallel()
	reg := NewRegistry(0)
	l := NewLabeler(WithRegistry(reg), WithMaxValuesPerLabel(3))
	seen := map[string]bool{}
	for i := range 10 {
		got := contextLabels(l, "k6.scenario=s, k6.name=/user/"+strconv.Itoa(i))
		if got["k6_scenario"] != "s" {
			t.Fatalf("request %d lost its other label: %v", i, got)
		}
		seen[got["k6_name"]] = true
	}
	want := map[string]bool{"/user/0": true, "/user/1": true, "/user/2": true, OverflowValue: true}
	if !maps.Equal(seen, want) {
		t.Errorf("values = %v, want %v", seen, want)
	}
	// A value admitted before the cap was reached keeps working.
	if got := contextLabels(l, "k6.name=/user/1"); got["k6_name"] != "/user/1" {
		t.Errorf("admitted value replaced: %v", got)
	}
	if s := reg.Stats(); s.Overflowed != 7 {
		t.Errorf("Overflowed = %d, want 7", s.Overflowed)
	}
}

func TestLabelNameCap(t *testing.T) {
	t.Parallel()
	reg := NewRegistry(0)
	l := NewLabeler(WithRegistry(reg))
	const junk = maxNames + 10
	for i := range junk {
		contextLabels(l, "k6.n"+strconv.Itoa(i)+"=v")
	}
	if n := len(reg.caps.names); n != maxNames {
		t.Errorf("registry holds %d names, want the cap %d", n, maxNames)
	}
	// The names k6 sends were reserved: the flood of other names did not
	// take their places.
	want := map[string]string{"k6_test_run_id": "r", "k6_scenario": "s", "k6_name": "n"}
	if got := contextLabels(l, "k6.test_run_id=r, k6.scenario=s, k6.name=n"); !maps.Equal(got, want) {
		t.Errorf("labels = %v, want %v", got, want)
	}
	if got := contextLabels(l, "k6.brandnew=v, k6.n0=v"); !maps.Equal(got, map[string]string{"k6_n0": "v"}) {
		t.Errorf("labels = %v, want only the known name", got)
	}
	// A dropped name before a new value of a known name: the labels that
	// stay are each kept once.
	want = map[string]string{"k6_n0": "v", "k6_n1": "fresh"}
	if got := contextLabels(l, "k6.aaa=v, k6.n0=v, k6.n1=fresh"); !maps.Equal(got, want) {
		t.Errorf("labels = %v, want %v", got, want)
	}
	admitted := maxNames - 3
	if s, want := reg.Stats().Skipped, uint64(junk-admitted+2); s != want {
		t.Errorf("Skipped = %d, want %d", s, want)
	}
}

func TestLabelSetCacheBounded(t *testing.T) {
	t.Parallel()
	reg := NewRegistry(0)
	l := NewLabeler(WithRegistry(reg), WithMaxValuesPerLabel(maxValuesLimit))
	for i := range 3 * setSlots {
		contextLabels(l, "k6.name=n"+strconv.Itoa(i)+strings.Repeat("x", i%200))
		if b := reg.sets.bytes.Load(); b > setBudget {
			t.Fatalf("set cache holds %d bytes, want at most %d", b, setBudget)
		}
	}
	// A set built again after the cache started over still labels correctly.
	if got := contextLabels(l, "k6.name=n0"); got["k6_name"] != "n0" {
		t.Errorf("labels = %v", got)
	}
}

func TestLongKeySkipped(t *testing.T) {
	t.Parallel()
	reg := NewRegistry(0)
	got := contextLabels(NewLabeler(WithRegistry(reg)), "k6."+strings.Repeat("k", maxNameBytes)+"=v, k6.scenario=s")
	if !maps.Equal(got, map[string]string{"k6_scenario": "s"}) {
		t.Errorf("labels = %v", got)
	}
	if s := reg.Stats(); s.Skipped != 1 {
		t.Errorf("Skipped = %d, want 1", s.Skipped)
	}
}

func TestStatsCounters(t *testing.T) {
	t.Parallel()
	reg := NewRegistry(0)
	l := NewLabeler(WithRegistry(reg))
	l.Context(context.Background(), []string{"k6.scenario=s, broken"})
	l.Context(context.Background(), []string{"no=k6"})
	l.Context(context.Background(), []string{"k6.scenario=s, pad=" + strings.Repeat("p", 9000)})
	s := reg.Stats()
	want := Counters{Labelled: 2, Skipped: 1, Truncated: 1}
	if s != want {
		t.Errorf("Stats() = %+v, want %+v", s, want)
	}
}

func TestContextMergesParentLabels(t *testing.T) {
	t.Parallel()
	reg := NewRegistry(0)
	parent := pprof.WithLabels(context.Background(), pprof.Labels("service", "api", "k6_scenario", "old"))
	ctx := NewLabeler(WithRegistry(reg)).Context(parent, []string{"k6.scenario=new, k6.name=n"})
	want := map[string]string{"service": "api", "k6_scenario": "new", "k6_name": "n"}
	if got := labelsOf(ctx); !maps.Equal(got, want) {
		t.Errorf("labels = %v, want %v", got, want)
	}
	if v, _ := pprof.Label(ctx, "service"); v != "api" {
		t.Errorf("pprof.Label(service) = %q", v)
	}
	// Do sets the merged labels, not the k6 ones alone.
	Do(ctx, func(ctx context.Context) {
		if getProfLabel() != profLabelOf(ctx) {
			t.Error("Do did not set the context's merged labels on the goroutine")
		}
	})
}

func TestContextWithoutK6ReturnsParent(t *testing.T) {
	t.Parallel()
	reg := NewRegistry(0)
	parent := context.WithValue(context.Background(), struct{}{}, 1)
	for _, lines := range [][]string{nil, {}, {""}, {"a=1"}, {"k6.scenario="}} {
		if ctx := NewLabeler(WithRegistry(reg)).Context(parent, lines); ctx != parent {
			t.Errorf("Context(%q) returned a new context", lines)
		}
	}
}

func TestContextKeepsParentValuesAndCancel(t *testing.T) {
	t.Parallel()
	reg := NewRegistry(0)
	type key struct{}
	parent, cancel := context.WithCancel(context.WithValue(context.Background(), key{}, "v"))
	ctx := NewLabeler(WithRegistry(reg)).Context(parent, []string{"k6.scenario=s"})
	if ctx.Value(key{}) != "v" {
		t.Error("parent value lost")
	}
	child, cancelChild := context.WithCancel(ctx)
	defer cancelChild()
	cancel()
	<-child.Done() // would hang if cancellation did not propagate
	if v, _ := pprof.Label(child, "k6_scenario"); v != "s" {
		t.Errorf("child context lost the label: %q", v)
	}
}

func TestMembersAndBaggage(t *testing.T) {
	t.Parallel()
	reg := NewRegistry(0)
	ctx := NewLabeler(WithRegistry(reg)).Context(context.Background(), []string{"k6.test_run_id=r1, other=x, k6.scenario=s, k6.name=get my bike, k6.test_run_id=r2"})
	want := []Member{{"k6.name", "get my bike"}, {"k6.scenario", "s"}, {"k6.test_run_id", "r2"}}
	got := Members(ctx)
	if len(got) != len(want) {
		t.Fatalf("Members = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("Members[%d] = %v, want %v", i, got[i], want[i])
		}
	}
	if b := Baggage(ctx); b != "k6.name=get%20my%20bike,k6.scenario=s,k6.test_run_id=r2" {
		t.Errorf("Baggage = %q", b)
	}
	// What Baggage encodes parses back to the same members.
	back := ParseBaggage(Baggage(ctx))
	for i := range want {
		if back[i] != want[i] {
			t.Errorf("round trip [%d] = %v, want %v", i, back[i], want[i])
		}
	}
	// A key that is not a valid baggage key goes downstream as the key its
	// label name stands for, so the next service makes the same label.
	odd := NewLabeler(WithRegistry(reg)).Context(context.Background(), []string{`k6.bad key=1, k6.x"y=2, k6.ok-key=3`})
	if b := Baggage(odd); b != "k6.bad_key=1,k6.ok_key=3,k6.x_y=2" {
		t.Errorf("Baggage = %q", b)
	}
	if got, want := contextLabels(NewLabeler(WithRegistry(reg)), Baggage(odd)), labelsOf(odd); !maps.Equal(got, want) {
		t.Errorf("labels downstream = %v, want %v", got, want)
	}
	if Members(context.Background()) != nil || Baggage(context.Background()) != "" {
		t.Error("a context without k6 members has members")
	}
}

func TestParseBaggage(t *testing.T) {
	got := ParseBaggage("a=1, b = x%20y ;p=q", "bad, c=%zz,d=", "a=2")
	want := []Member{{"a", "1"}, {"b", "x y"}, {"c", "%zz"}, {"d", ""}, {"a", "2"}}
	if len(got) != len(want) {
		t.Fatalf("ParseBaggage = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("[%d] = %v, want %v", i, got[i], want[i])
		}
	}
}

// A header line served from the line cache counts like a parsed one, and
// each Labeler keeps its own options.
func TestLineCache(t *testing.T) {
	t.Parallel()
	reg := NewRegistry(0)
	line := "k6.scenario=s, broken, k6.name=/bike?id=1"
	keep, drop := NewLabeler(WithRegistry(reg), WithQueryStrings(true)), NewLabeler(WithRegistry(reg))
	for range 3 {
		if got := contextLabels(keep, line)["k6_name"]; got != "/bike?id=1" {
			t.Fatalf("WithQueryStrings(true): k6_name = %q", got)
		}
		if got := contextLabels(drop, line)["k6_name"]; got != "/bike" {
			t.Fatalf("default: k6_name = %q", got)
		}
	}
	if s := reg.Stats(); s.Labelled != 6 || s.Skipped != 6 {
		t.Errorf("Stats() = %+v, want 6 labelled and 6 skipped", s)
	}
	// Lines that collide in the cache replace each other and stay right.
	wide := NewLabeler(WithRegistry(reg), WithMaxValuesPerLabel(maxValuesLimit))
	for i := range 4 * linecache.Slots {
		v := strconv.Itoa(i % (2 * linecache.Slots))
		if got := contextLabels(wide, "k6.name="+v)["k6_name"]; got != v {
			t.Fatalf("k6_name = %q, want %q", got, v)
		}
	}
}

func TestZeroLabelerUsesDefaults(t *testing.T) {
	resetState(t)
	var l Labeler
	if got := contextLabels(&l, "k6.scenario=s, k6.name=/a?id=1"); !maps.Equal(got, map[string]string{"k6_scenario": "s", "k6_name": "/a"}) {
		t.Errorf("zero Labeler made labels %v", got)
	}
}
