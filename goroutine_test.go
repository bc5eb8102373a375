package k6labels

import (
	"context"
	"runtime/pprof"
	"testing"
)

// hasLabels answers with one lookup under the key it learnt from pprof, and
// as pprof does for every kind of context a request may come with.
func TestHasLabels(t *testing.T) {
	if labelsKey == nil {
		t.Fatal("labelsKey was not learnt: hasLabels falls back to pprof.ForLabels on every request")
	}
	bg := context.Background()
	labelled := pprof.WithLabels(bg, pprof.Labels("span_id", "7"))
	cancelled, cancel := context.WithCancel(labelled)
	defer cancel()
	type key struct{}
	s := testSet(t)
	var ours, oursMerged labelledContext
	ours.init(bg, s, false)
	oursMerged.init(labelled, s, true)
	for name, ctx := range map[string]context.Context{
		"background":         bg,
		"value":              context.WithValue(bg, key{}, 1),
		"labelled":           labelled,
		"cancel over labels": cancelled,
		"value over labels":  context.WithValue(cancelled, key{}, 1),
		"ours":               &ours,
		"ours, merged":       &oursMerged,
	} {
		want := false
		pprof.ForLabels(ctx, func(string, string) bool { want = true; return false })
		if got := hasLabels(ctx); got != want {
			t.Errorf("%s: hasLabels = %v, pprof.ForLabels finds labels: %v", name, got, want)
		}
	}
}

// profLabelOf learns a set's pointer without leaving it on the goroutine.
func TestProfLabelOfRestores(t *testing.T) {
	ctx := pprof.WithLabels(context.Background(), pprof.Labels("before", "1"))
	Do(ctx, func(context.Context) {
		before := getProfLabel()
		p := profLabelOf(testSet(t).ctx)
		if p == nil || p == before {
			t.Errorf("profLabelOf = %p, the goroutine's own = %p", p, before)
		}
		if getProfLabel() != before {
			t.Error("profLabelOf left other labels on the goroutine")
		}
	})
}

func testSet(t *testing.T) *labelSet {
	t.Helper()
	s, _ := newLabelSet([]label{{"k6_name", "get"}, {"k6_test_run_id", "1"}}, 0, 1)
	if s == nil {
		t.Fatal("no label set")
	}
	return s
}
