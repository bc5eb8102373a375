package k6labels

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime/trace"
	"testing"
)

// TestDoRequestNoAllocs: with the tracer off, DoRequest allocates nothing, as
// Do does, and the handler serving a labelled request allocates what it did
// before request tasks existed.
func TestDoRequestNoAllocs(t *testing.T) {
	if trace.IsEnabled() {
		t.Skip("the execution tracer is on")
	}
	ctx, ok := NewLabeler().Labels(context.Background(), []string{jslibHeader})
	if !ok {
		t.Fatal("not labelled")
	}
	f := func(context.Context) {}
	if n := testing.AllocsPerRun(1000, func() { DoRequest(ctx, f) }); n != 0 {
		t.Errorf("DoRequest with the tracer off: %v allocations, want 0", n)
	}
}

// TestDoRequestTask: with the tracer on, f gets a context in a request task
// (so a second labelling joins it rather than nesting), the labels are on
// the goroutine while f runs, and a panic in f still ends the task and puts
// the goroutine's labels back.
func TestDoRequestTask(t *testing.T) {
	if err := trace.Start(io.Discard); err != nil {
		t.Skip("the execution tracer is busy:", err)
	}
	defer trace.Stop()
	ctx, _ := NewLabeler().Labels(context.Background(), []string{jslibHeader})
	prev := getProfLabel()
	var inner context.Context
	DoRequest(ctx, func(c context.Context) {
		if c.Value(taskKey{}) == nil {
			t.Error("f's context is not in a request task")
		}
		if Baggage(c) != Baggage(ctx) {
			t.Errorf("f's context has members %q, want %q", Baggage(c), Baggage(ctx))
		}
		DoRequest(c, func(c2 context.Context) { inner = c2 })
	})
	if inner == nil || inner.Value(taskKey{}) == nil {
		t.Error("a request labelled twice left its task")
	}
	func() {
		defer func() { _ = recover() }()
		DoRequest(ctx, func(context.Context) { panic("boom") })
	}()
	if getProfLabel() != prev {
		t.Error("a panic left the request's labels on the goroutine")
	}
}

// BenchmarkDoRequest is the cost of a request task. With the tracer off it
// is the cost of Do and one load: 14 ns against Do's 11 ns, 0 allocations, on
// a 2-core amd64 machine (the handler stays at its 2 allocations). With the
// tracer on, the task, its log and a context add about 0.9 µs and 3 allocations.
func BenchmarkDoRequest(b *testing.B) {
	ctx, _ := NewLabeler().Labels(context.Background(), []string{jslibHeader})
	f := func(context.Context) {}
	b.Run("Do", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			Do(ctx, f)
		}
	})
	b.Run("TracerOff", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			DoRequest(ctx, f)
		}
	})
	b.Run("TracerOn", func(b *testing.B) {
		if err := trace.Start(io.Discard); err != nil {
			b.Skip("the execution tracer is busy:", err)
		}
		defer trace.Stop()
		b.ReportAllocs()
		for b.Loop() {
			DoRequest(ctx, f)
		}
	})
}

// BenchmarkHandlerTracer is BenchmarkHandler/Jslib with the execution tracer
// on: the request task's cost in the net/http handler.
func BenchmarkHandlerTracer(b *testing.B) {
	h := LabelsFromBaggageHandler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	r := httptest.NewRequest("GET", "/bike?id=3", nil)
	r.Header["Baggage"] = []string{jslibHeader}
	w := httptest.NewRecorder()
	if err := trace.Start(io.Discard); err != nil {
		b.Skip("the execution tracer is busy:", err)
	}
	defer trace.Stop()
	b.ReportAllocs()
	for b.Loop() {
		h.ServeHTTP(w, r)
	}
}
