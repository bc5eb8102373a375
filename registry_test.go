package k6labels

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// fakeClock is an injectable clock for the Registry: tests move time on
// instead of sleeping.
type fakeClock struct{ ns atomic.Int64 }

func (c *fakeClock) now() int64              { return c.ns.Load() }
func (c *fakeClock) advance(d time.Duration) { c.ns.Add(int64(d)) }

// pass moves the clock of r on by d, ticking as the Registry's timer does.
func (c *fakeClock) pass(r *Registry, d time.Duration) {
	for step := time.Duration(r.caps.sweepEvery); d > 0; d -= step {
		c.advance(min(step, d))
		r.caps.tick()
	}
}

func newTestRegistry(window time.Duration) (*Registry, *fakeClock) {
	c := new(fakeClock)
	return newRegistry(window, c.now), c
}

func labelOf(l *Labeler, name string, lines ...string) string {
	return labelsOf(l.Context(context.Background(), lines))[name]
}

// values returns how many values of name r holds.
func (r *Registry) values(name string) int {
	r.caps.mu.Lock()
	defer r.caps.mu.Unlock()
	if nr := r.caps.names[name]; nr != nil {
		return len(nr.values)
	}
	return 0
}

// Ten thousand test runs one after another against a long-lived process:
// each is labelled with its own id, and the registry never holds more than
// the runs of the last window.
func TestSequentialRunsKeepTheirIDs(t *testing.T) {
	t.Parallel()
	const window = 5 * time.Minute
	r, clock := newTestRegistry(window)
	l := NewLabeler(WithRegistry(r), WithMaxValuesPerLabel(10))
	most := 0
	for run := range 10_000 {
		id := "run-" + strconv.Itoa(run)
		for range 6 { // a 60 s run: a request every 10 s
			line := "k6.test_run_id=" + id + ",k6.scenario=s,k6.name=http://h/car?id=" + strconv.Itoa(run)
			if got := labelOf(l, "k6_test_run_id", line); got != id {
				t.Fatalf("run %d labelled %q, want %q", run, got, id)
			}
			clock.pass(r, 10*time.Second)
		}
		most = max(most, r.values("k6_test_run_id"))
	}
	// A window holds 5 one-minute runs; eviction comes within two sixteenths
	// of a window after the last request.
	if most > 7 {
		t.Errorf("the registry held %d run ids at once, want at most 7", most)
	}
	if s := r.Stats(); s.Overflowed != 0 || s.Labelled != 60_000 {
		t.Errorf("Stats() = %+v, want 60000 labelled, none overflowed", s)
	}
}

// A flood of new values inside one window still overflows the cap, while a
// value in use keeps its label; once the flood's values have aged out, new
// values are admitted again.
func TestFloodOverflowsWithinWindow(t *testing.T) {
	t.Parallel()
	const window = time.Minute
	r, clock := newTestRegistry(window)
	l := NewLabeler(WithRegistry(r), WithMaxValuesPerLabel(3))
	if got := labelOf(l, "k6_name", "k6.name=live"); got != "live" {
		t.Fatalf("k6_name = %q", got)
	}
	for i := range 600 { // ten windows of flood, one junk value a second
		clock.pass(r, time.Second)
		got := labelOf(l, "k6_name", "k6.name=junk"+strconv.Itoa(i))
		if got != OverflowValue && got != "junk"+strconv.Itoa(i) {
			t.Fatalf("junk value %d labelled %q", i, got)
		}
		if got := labelOf(l, "k6_name", "k6.name=live"); got != "live" {
			t.Fatalf("after %d junk values the live value is labelled %q", i, got)
		}
		if n := r.values("k6_name"); n > 3 {
			t.Fatalf("the registry holds %d values, over the cap of 3", n)
		}
	}
	if s := r.Stats(); s.Overflowed == 0 {
		t.Error("no junk value overflowed")
	}
	clock.pass(r, 2*window)
	for _, v := range []string{"next1", "next2"} {
		if got := labelOf(l, "k6_name", "k6.name="+v); got != v {
			t.Errorf("after the flood, %q is labelled %q", v, got)
		}
	}
}

// A value carried by requests all the time is never evicted, however long
// the process lives, while values that stop are.
func TestValueInUseIsNeverEvicted(t *testing.T) {
	t.Parallel()
	const window = time.Minute
	r, clock := newTestRegistry(window)
	l := NewLabeler(WithRegistry(r), WithMaxValuesPerLabel(2))
	labelOf(l, "k6_scenario", "k6.scenario=steady")
	labelOf(l, "k6_scenario", "k6.scenario=gone")
	for i := range 100 {
		clock.pass(r, window/4)
		// New values ask first for a place, so that one freed by a wrong
		// eviction of steady would be taken.
		labelOf(l, "k6_scenario", "k6.scenario=new"+strconv.Itoa(i))
		labelOf(l, "k6_scenario", "k6.scenario=other"+strconv.Itoa(i))
		if got := labelOf(l, "k6_scenario", "k6.scenario=steady"); got != "steady" {
			t.Fatalf("step %d: steady labelled %q", i, got)
		}
	}
	if r.values("k6_scenario") != 2 {
		t.Errorf("registry holds %d values, want 2", r.values("k6_scenario"))
	}
}

// A client sending OverflowValue gets it as its label without taking a
// value's place.
func TestOverflowLiteralTakesNoPlace(t *testing.T) {
	t.Parallel()
	r, _ := newTestRegistry(time.Minute)
	l := NewLabeler(WithRegistry(r), WithMaxValuesPerLabel(2))
	for range 3 {
		if got := labelOf(l, "k6_name", "k6.name="+OverflowValue); got != OverflowValue {
			t.Fatalf("k6_name = %q", got)
		}
	}
	for _, v := range []string{"a", "b"} {
		if got := labelOf(l, "k6_name", "k6.name="+v); got != v {
			t.Errorf("%q labelled %q: the literal took its place", v, got)
		}
	}
	if s := r.Stats(); s.Overflowed != 0 {
		t.Errorf("Overflowed = %d, want 0", s.Overflowed)
	}
}

// Label names beyond the cap are dropped within a window and admitted again
// once the flood of names has aged out.
func TestNamesAreEvicted(t *testing.T) {
	t.Parallel()
	const window = time.Minute
	r, clock := newTestRegistry(window)
	l := NewLabeler(WithRegistry(r))
	for i := range 2 * maxNames {
		labelOf(l, "", "k6.junk"+strconv.Itoa(i)+"=v")
	}
	if got := labelOf(l, "k6_fresh", "k6.fresh=v"); got != "" {
		t.Fatalf("a name over the cap was labelled %q", got)
	}
	clock.pass(r, 2*window)
	if got := labelOf(l, "k6_fresh", "k6.fresh=v"); got != "v" {
		t.Errorf("after the window, k6_fresh = %q, want v", got)
	}
	if got := labelOf(l, "k6_name", "k6.name=n"); got != "n" {
		t.Errorf("k6_name = %q, want n", got)
	}
}

// Labelers with different caps share a registry's values: a member gets one
// answer from a Labeler whatever the layout of the header that carries it,
// including from the line cache after another Labeler admitted the value.
func TestOneAnswerAcrossLabelersAndLayouts(t *testing.T) {
	t.Parallel()
	r, _ := newTestRegistry(time.Minute)
	small := NewLabeler(WithRegistry(r), WithMaxValuesPerLabel(2))
	big := NewLabeler(WithRegistry(r), WithMaxValuesPerLabel(1000))
	labelOf(small, "k6_name", "k6.name=a")
	labelOf(small, "k6_name", "k6.name=b")
	if got := labelOf(small, "k6_name", "k6.scenario=s,k6.name=c"); got != OverflowValue {
		t.Fatalf("over the small cap: %q", got)
	}
	if got := labelOf(big, "k6_name", "k6.name=c"); got != "c" {
		t.Fatalf("big Labeler: %q", got)
	}
	for _, layout := range [][]string{
		{"k6.scenario=s,k6.name=c"},     // the cached line
		{"k6.scenario=s, k6.name=c"},    // another layout of it
		{"k6.scenario=s", "k6.name=c"},  // two lines
		{"k6.name=x, k6.name=c"},        // a duplicate
		{"k6.name=c;p, k6.scenario=s "}, // a property
	} {
		if got := labelOf(small, "k6_name", layout...); got != "c" {
			t.Errorf("small Labeler, %q: k6_name = %q, want c (admitted by the big one)", layout, got)
		}
	}
}
