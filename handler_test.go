package k6labels

import (
	"context"
	"maps"
	"net/http"
	"net/http/httptest"
	"runtime/pprof"
	"slices"
	"testing"
	"unsafe"
)

func serve(h http.Handler, lines ...string) {
	r := httptest.NewRequest("GET", "/bike", nil)
	if lines != nil {
		r.Header["Baggage"] = lines
	}
	h.ServeHTTP(httptest.NewRecorder(), r)
}

// The x/k6-compatible entry point, with the process-wide registry.
func TestHandlerLabelsGoroutineAndContext(t *testing.T) {
	resetState(t)
	var got map[string]string
	var onGoroutine bool
	h := LabelsFromBaggageHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = labelsOf(r.Context())
		onGoroutine = getProfLabel() == profLabelOf(r.Context())
	}))
	serve(h, "k6.test_run_id=run42, k6.scenario=checkout, k6.name=named-get")
	want := map[string]string{"k6_test_run_id": "run42", "k6_scenario": "checkout", "k6_name": "named-get"}
	if len(got) != 3 || got["k6_test_run_id"] != "run42" || got["k6_scenario"] != "checkout" || got["k6_name"] != "named-get" {
		t.Errorf("context labels = %v, want %v", got, want)
	}
	if !onGoroutine {
		t.Error("the goroutine did not carry the request context's labels")
	}
}

// A request whose context has pprof labels of its own (a span profiler's)
// is served with those and the k6 ones together, on the goroutine too.
func TestHandlerMergesParentLabelsOnGoroutine(t *testing.T) {
	t.Parallel()
	var got map[string]string
	var onGoroutine bool
	h := NewHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = labelsOf(r.Context())
		onGoroutine = getProfLabel() == profLabelOf(r.Context())
	}), WithRegistry(NewRegistry(0)))
	r := httptest.NewRequest("GET", "/bike", nil)
	r = r.WithContext(pprof.WithLabels(r.Context(), pprof.Labels("span_id", "7")))
	r.Header["Baggage"] = []string{"k6.scenario=s"}
	h.ServeHTTP(httptest.NewRecorder(), r)
	if want := map[string]string{"span_id": "7", "k6_scenario": "s"}; !maps.Equal(got, want) {
		t.Errorf("context labels = %v, want %v", got, want)
	}
	if !onGoroutine {
		t.Error("the goroutine did not carry the request context's merged labels")
	}
}

func TestHandlerPassesThroughWithoutK6(t *testing.T) {
	t.Parallel()
	reg := NewRegistry(0)
	for _, lines := range [][]string{nil, {"userId=alice"}, {"k6.test_run_id=undefined"}} {
		var sameRequest bool
		r := httptest.NewRequest("GET", "/", nil)
		if lines != nil {
			r.Header["Baggage"] = lines
		}
		NewHandler(http.HandlerFunc(func(w http.ResponseWriter, got *http.Request) {
			sameRequest = got == r
		}), WithRegistry(reg)).ServeHTTP(httptest.NewRecorder(), r)
		if !sameRequest {
			t.Errorf("baggage %q: the request was replaced", lines)
		}
	}
}

// The goroutine gets back exactly the labels it had, including labels that
// live only on the goroutine, where pprof.Do would restore those of the
// request context (none here).
func TestHandlerRestoresGoroutineLabels(t *testing.T) {
	t.Parallel()
	reg := NewRegistry(0)
	outer := pprof.WithLabels(context.Background(), pprof.Labels("service", "api"))
	before := profLabelOf(outer)
	prev := getProfLabel()
	defer setProfLabel(prev)

	pprof.SetGoroutineLabels(outer)
	serve(NewHandler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}), WithRegistry(reg)), "k6.scenario=s")
	if getProfLabel() != before {
		t.Error("labels not restored after the handler returned")
	}

	func() {
		defer func() {
			if recover() == nil {
				t.Error("the panic was swallowed")
			}
		}()
		serve(NewHandler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") }), WithRegistry(reg)), "k6.scenario=s")
	}()
	if getProfLabel() != before {
		t.Error("labels not restored after the handler panicked")
	}
}

func TestMiddleware(t *testing.T) {
	t.Parallel()
	reg := NewRegistry(0)
	var got string
	mw := Middleware(WithRegistry(reg), WithQueryStrings(true))
	serve(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = pprof.Label(r.Context(), "k6_name")
	})), "k6.name=/bike?id=1")
	if got != "/bike?id=1" {
		t.Errorf("k6_name = %q, want the option applied", got)
	}
}

func TestDoRestoresOnPanic(t *testing.T) {
	prev := getProfLabel()
	defer setProfLabel(prev)
	pprof.SetGoroutineLabels(context.Background())
	ctx := pprof.WithLabels(context.Background(), pprof.Labels("a", "b"))
	func() {
		defer func() { _ = recover() }()
		Do(ctx, func(ctx context.Context) {
			if getProfLabel() != profLabelOf(ctx) {
				t.Error("labels not set inside Do")
			}
			panic("boom")
		})
	}()
	if getProfLabel() != nil {
		t.Error("labels not restored after a panic in Do")
	}
}

// uncomparableContext is a context type that == panics on.
type uncomparableContext struct {
	context.Context
	tags []string
}

func TestHandlerWithUncomparableContext(t *testing.T) {
	t.Parallel()
	reg := NewRegistry(0)
	var got []string
	h := NewHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, _ := pprof.Label(r.Context(), "k6_scenario")
		got = append(got, v)
	}), WithRegistry(reg))
	for _, lines := range [][]string{{"k6.scenario=s"}, {"a=1"}} {
		r := httptest.NewRequest("GET", "/", nil)
		r = r.WithContext(uncomparableContext{Context: r.Context(), tags: []string{"x"}})
		r.Header["Baggage"] = lines
		h.ServeHTTP(httptest.NewRecorder(), r)
	}
	if want := []string{"s", ""}; !slices.Equal(got, want) {
		t.Errorf("k6_scenario seen by the k6 request and the other = %q, want %q", got, want)
	}
}

// A request passing a second handler on another goroutine (a worker that
// inherited an earlier request's labels, or none) is served with its own
// labels there, and the worker gets back what it had, also on a panic.
func TestNestedHandlerOnAnotherGoroutine(t *testing.T) {
	t.Parallel()
	reg := NewRegistry(0)
	var onGoroutine []bool
	inner := NewHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		onGoroutine = append(onGoroutine, getProfLabel() == profLabelOf(r.Context()))
		if r.URL.Path == "/panic" {
			panic("boom")
		}
	}), WithRegistry(reg))
	work := make(chan func())
	restored := make(chan bool)
	var first unsafe.Pointer
	outer := NewHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if first == nil {
			first = getProfLabel()
			go func() { // inherits the first request's labels
				for f := range work {
					func() {
						defer func() { _ = recover() }()
						f()
					}()
					restored <- getProfLabel() == first
				}
			}()
		}
		work <- func() { inner.ServeHTTP(w, r) }
		if !<-restored {
			t.Errorf("%s: the worker did not get back its labels", r.URL.Path)
		}
	}), WithRegistry(reg))
	for _, tc := range []struct{ path, baggage string }{{"/", "k6.scenario=a"}, {"/", "k6.scenario=b"}, {"/panic", "k6.scenario=c"}} {
		r := httptest.NewRequest("GET", tc.path, nil)
		r.Header.Set("Baggage", tc.baggage)
		outer.ServeHTTP(httptest.NewRecorder(), r)
	}
	close(work)
	if want := []bool{true, true, true}; !slices.Equal(onGoroutine, want) {
		t.Errorf("inner handler ran with its request's labels on the goroutine: %v, want %v", onGoroutine, want)
	}
}

// A handler that changes its goroutine's labels and passes the request on
// to a second handler: that one serves with the request's labels.
func TestNestedHandlerAfterGoroutineLabelsChanged(t *testing.T) {
	t.Parallel()
	reg := NewRegistry(0)
	var onGoroutine bool
	inner := NewHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		onGoroutine = getProfLabel() == profLabelOf(r.Context())
	}), WithRegistry(reg))
	var changed unsafe.Pointer
	outer := NewHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pprof.SetGoroutineLabels(pprof.WithLabels(r.Context(), pprof.Labels("phase", "auth")))
		changed = getProfLabel()
		inner.ServeHTTP(w, r)
		if getProfLabel() != changed {
			t.Error("the outer handler's labels were not put back")
		}
	}), WithRegistry(reg))
	serve(outer, "k6.scenario=s")
	if !onGoroutine {
		t.Error("the inner handler ran with the outer handler's goroutine labels")
	}
}

// A second handler whose options keep fewer labels than the first's (a
// naming hook that drops k6_name, a lower label cap) serves with its own
// labels only: the first handler's k6 labels are replaced, not merged with,
// while labels from elsewhere (a span profiler's) stay.
func TestNestedHandlerReplacesOuterK6Labels(t *testing.T) {
	t.Parallel()
	reg := NewRegistry(0)
	for _, tc := range []struct {
		name  string
		inner Option
		want  map[string]string
	}{
		{"hook drops k6_name", WithNameFormatter(func(*http.Request, string) string { return "" }), map[string]string{"k6_test_run_id": "1", "k6_scenario": "s"}},
		{"one label", WithMaxLabels(1), map[string]string{"k6_test_run_id": "1"}},
	} {
		for _, span := range []bool{false, true} {
			var got map[string]string
			var members []Member
			var onGoroutine bool
			inner := NewHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got, members = labelsOf(r.Context()), Members(r.Context())
				onGoroutine = getProfLabel() == profLabelOf(r.Context())
			}), WithRegistry(reg), tc.inner)
			r := httptest.NewRequest("GET", "/", nil)
			want := maps.Clone(tc.want)
			if span {
				r = r.WithContext(pprof.WithLabels(r.Context(), pprof.Labels("span_id", "7")))
				want["span_id"] = "7"
			}
			r.Header.Set("Baggage", "k6.test_run_id=1,k6.scenario=s,k6.name=n")
			NewHandler(inner, WithRegistry(reg)).ServeHTTP(httptest.NewRecorder(), r)
			if !maps.Equal(got, want) {
				t.Errorf("%s, span labels %v: context labels = %v, want %v", tc.name, span, got, want)
			}
			if len(members) != len(tc.want) {
				t.Errorf("%s, span labels %v: members %v, want as many as the k6 labels %v", tc.name, span, members, tc.want)
			}
			if !onGoroutine {
				t.Errorf("%s, span labels %v: the goroutine did not carry the context's labels", tc.name, span)
			}
		}
	}
}

// A request passing a second handler with the same options is served by it
// as it came, with its labels on the goroutine, at no allocation.
func TestNestedHandlerSameLabelsNoAllocation(t *testing.T) {
	reg := NewRegistry(0)
	var passed *http.Request
	var onGoroutine bool
	inner := NewHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		passed = r
		onGoroutine = getProfLabel() == profLabelOf(r.Context())
	}), WithRegistry(reg))
	var allocs float64
	var outerReq *http.Request
	outer := NewHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		outerReq = r
		setProfLabel(nil) // as on a worker: the inner handler puts the labels back on
		allocs = testing.AllocsPerRun(100, func() { inner.ServeHTTP(w, r) })
	}), WithRegistry(reg))
	serve(outer, "k6.scenario=s, k6.name=n")
	if passed != outerReq {
		t.Error("the inner handler served another request than the one it got")
	}
	if !onGoroutine {
		t.Error("the inner handler ran without the request's labels on the goroutine")
	}
	if allocs != 0 {
		t.Errorf("the inner handler made %v allocations per request, want 0", allocs)
	}
}
