package k6labels

import (
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/k6labels/k6labels/internal/linecache"
)

// worstLine returns a header line of at most linecache.MaxLine bytes built to
// cost the most memory: new values of every k6 name and of many others, and
// bytes that grow threefold when made valid UTF-8.
func worstLine(rng *rand.Rand) string {
	junk := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(0x80 + rng.IntN(0x40)) // each becomes U+FFFD: three bytes
		}
		return string(b)
	}
	var b strings.Builder
	b.WriteString("k6.test_run_id=" + junk(60) + ",k6.scenario=" + junk(60) + ",k6.name=/" + junk(60))
	for b.Len() < linecache.MaxLine-60 {
		// Keys that differ only in bytes the label name maps to '_'.
		b.WriteString(",k6.n" + strconv.Itoa(rng.IntN(64)) + string(rune('-'+rng.IntN(3))) + "x=" + junk(40))
	}
	return b.String()[:min(b.Len(), linecache.MaxLine)]
}

func liveHeap() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// The library's memory is bounded for the whole process, whatever the
// number of handlers: 1000 handlers (one per route, with four option sets)
// fed the worst traffic we can build stay within the documented bound.
func TestMemoryBoundedWithManyHandlers(t *testing.T) {
	resetState(t)
	requests := pick(10_000, 60_000) // K6LABELS_SOAK: the full count
	before := liveHeap()
	next := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	var handlers []http.Handler
	for i := range 1000 {
		var opts []Option
		switch i % 4 {
		case 1:
			opts = []Option{WithMaxValueBytes(2048), WithMaxLabels(30)}
		case 2:
			opts = []Option{WithRoutePattern()}
		case 3:
			opts = []Option{WithQueryStrings(true), WithMaxValuesPerLabel(maxValuesLimit)}
		}
		handlers = append(handlers, NewHandler(next, opts...))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	w := httptest.NewRecorder()
	r := httptest.NewRequest("GET", "/", nil)
	for i := range requests {
		if i%3 == 0 {
			// Long lines are not cached but do build label sets.
			r.Header["Baggage"] = []string{worstLine(rng), worstLine(rng) + "," + worstLine(rng)}
		} else {
			r.Header["Baggage"] = []string{worstLine(rng)}
		}
		handlers[i%len(handlers)].ServeHTTP(w, r)
	}
	grown := int64(liveHeap()) - int64(before)
	runtime.KeepAlive(handlers)
	const bound = 16 << 20
	t.Logf("live heap grew by %.1f MiB over %d requests through %d handlers", float64(grown)/(1<<20), requests, len(handlers))
	if grown > bound {
		t.Errorf("live heap grew by %d bytes, over the bound of %d", grown, bound)
	}
}

// Memory stays flat however long the process lives: clients that fill
// label names with values and go away, window after window, leave nothing
// behind once the names are evicted, though cached lines and sets keep
// their admissions (which once kept each evicted name's values map alive).
func TestMemoryFlatAcrossWindows(t *testing.T) {
	const window = time.Minute
	r, clock := newTestRegistry(window)
	h := NewHandler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}), WithRegistry(r))
	w := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/", nil)
	line := func(value string) string {
		var b strings.Builder
		for n := range 7 {
			b.WriteString(",k6.x" + strconv.Itoa(n) + "=" + value)
		}
		return b.String()[1:]
	}
	var settled uint64
	windows := pick(20, 60) // K6LABELS_SOAK: the full count
	for c := range windows {
		req.Header["Baggage"] = []string{line("keep" + strconv.Itoa(c))} // a cached line: its admission stays
		h.ServeHTTP(w, req)
		for i := range 1000 {
			req.Header["Baggage"] = []string{line("v" + strconv.Itoa(i)), "a=b"} // every name full
			h.ServeHTTP(w, req)
		}
		clock.pass(r, 3*window) // every k6.x* name and value evicted
		if c == 9 {
			settled = liveHeap()
		}
	}
	grown := int64(liveHeap()) - int64(settled)
	runtime.KeepAlive(h) // and its registry, caches and admissions
	t.Logf("live heap grew by %.2f MiB over the last %d windows", float64(grown)/(1<<20), windows-10)
	if grown > 2<<20 {
		t.Errorf("live heap grew by %.2f MiB over 50 windows after the first 10; it should stay flat", float64(grown)/(1<<20))
	}
}
