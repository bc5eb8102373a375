package k6labels

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime/pprof"
	"sync/atomic"
	"testing"
	"unsafe"
)

// profLabelOf returns the pointer that pprof.SetGoroutineLabels(ctx) puts on
// a goroutine. It sets ctx's labels on the calling goroutine for that long,
// then puts back what it had: label sets learn theirs when they are put on
// a goroutine ([labelSet.put]), so only tests use it.
func profLabelOf(ctx context.Context) unsafe.Pointer {
	prev := getProfLabel()
	pprof.SetGoroutineLabels(ctx)
	p := getProfLabel()
	setProfLabel(prev)
	return p
}

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

// TestRenamedSetNeverOnGoroutine: a request whose k6 name a formatter
// changes is labelled with the named set only; the set of its name as sent
// is never put on the goroutine, not even for the instant that learning its
// label pointer would take (a CPU sample there would be misattributed).
func TestRenamedSetNeverOnGoroutine(t *testing.T) {
	reg := NewRegistry(DefaultWindow)
	h := NewHandler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}), WithRegistry(reg),
		WithNameFormatter(func(*http.Request, string) string { return "/x/{id}" }))
	req := httptest.NewRequest("GET", "/x/1", nil)
	req.Header.Set("Baggage", "k6.test_run_id=1,k6.scenario=s,k6.name=http://h/x/1")
	h.ServeHTTP(httptest.NewRecorder(), req)
	sets := map[string]*labelSet{}
	for i := range reg.sets.slots {
		if s := reg.sets.slots[i].Load(); s != nil {
			v, _ := s.value("k6_name")
			sets[v] = s
		}
	}
	raw, named := sets["http://h/x/1"], sets["/x/{id}"]
	if raw == nil || named == nil {
		t.Fatalf("sets by name %v: want the name as sent and the route", sets)
	}
	if atomic.LoadPointer(&raw.prof) != nil {
		t.Error("the set of the name as sent was put on a goroutine")
	}
	if atomic.LoadPointer(&named.prof) == nil {
		t.Error("the named set was never put on the goroutine")
	}
}
