package trace

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	rtrace "runtime/trace"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/k6labels/k6labels"
	"github.com/k6labels/k6labels/cmd/k6labels/report"
)

// burnSink keeps burn's loop from being optimized away.
var burnSink atomic.Uint64

// burn does n iterations of a fixed arithmetic loop: CPU work that does not
// depend on the clock.
//
//go:noinline
func burn(n int) {
	x := burnSink.Load() | 1
	for range n {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	burnSink.Store(x)
}

// header is the baggage k6's jslib sends for a request named name.
func header(name string) string {
	return "k6.test_run_id=42,k6.scenario=load,k6.name=" + name
}

// traced starts the execution tracer into a buffer, runs f, and returns the
// measured trace.
func traced(t *testing.T, f func()) *Trace {
	t.Helper()
	var buf bytes.Buffer
	if err := rtrace.Start(&buf); err != nil {
		t.Skip("the execution tracer is busy:", err)
	}
	f()
	rtrace.Stop()
	tr, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func get(t *testing.T, c *http.Client, url, name string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Baggage", header(name))
	resp, err := c.Do(req)
	if err != nil {
		t.Error(err)
		return
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("%s: %s", url, resp.Status)
	}
}

func rowOf(t *testing.T, rows []*Row, g report.Grouping, key string) *Row {
	t.Helper()
	for _, r := range rows {
		if r.Grouping.String() == g.String() && r.Key() == key {
			return r
		}
	}
	t.Fatalf("no row %s=%q", g, key)
	return nil
}

const ms = float64(time.Millisecond)

// TestReasons serves labelled requests over 127.0.0.1 with the tracer on:
// a route that sleeps 20 ms shows about 20 ms blocked in "sleep" and almost
// no CPU; one whose requests contend on a mutex shows "sync" with
// sync.Mutex.Lock on top of its stacks; one that waits for a child
// goroutine it started counts the child's CPU; a request still running when
// the trace stops is counted as cut, not measured.
func TestReasons(t *testing.T) {
	var mu sync.Mutex
	var waiting, locked atomic.Int32
	release := make(chan struct{})
	started := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/sleep", func(http.ResponseWriter, *http.Request) { time.Sleep(20 * time.Millisecond) })
	mux.HandleFunc("/lock", func(http.ResponseWriter, *http.Request) {
		waiting.Add(1)
		mu.Lock()
		locked.Add(1) // the critical section
		mu.Unlock()
	})
	mux.HandleFunc("/child", func(http.ResponseWriter, *http.Request) {
		var wg sync.WaitGroup
		wg.Go(func() { burn(2_000_000) })
		wg.Wait()
	})
	mux.HandleFunc("/hang", func(http.ResponseWriter, *http.Request) {
		close(started)
		<-release
	})
	srv := httptest.NewServer(k6labels.NewHandler(mux))
	defer srv.Close()
	c := srv.Client()

	var hung sync.WaitGroup
	tr := traced(t, func() {
		for range 5 {
			get(t, c, srv.URL+"/sleep", "/sleep")
		}
		// The lock is held until all four requests wait for it, and 10 ms
		// more.
		var wg sync.WaitGroup
		mu.Lock()
		for range 4 {
			wg.Go(func() { get(t, c, srv.URL+"/lock", "/lock") })
		}
		for waiting.Load() < 4 {
			time.Sleep(time.Millisecond)
		}
		time.Sleep(10 * time.Millisecond)
		mu.Unlock()
		wg.Wait()
		for range 3 {
			get(t, c, srv.URL+"/child", "/child")
		}
		hung.Go(func() { get(t, c, srv.URL+"/hang", "/hang") })
		<-started
	})
	close(release)
	hung.Wait()

	rows := tr.Rows([]report.Grouping{report.ByName, report.ByRun}, 3)
	sl := rowOf(t, rows, report.ByName, "/sleep")
	if sl.Requests != 5 {
		t.Errorf("/sleep: %d requests, want 5", sl.Requests)
	}
	// A loaded host may wake the sleeper late, never early.
	if got := sl.Stats[Blocked+Metric(Sleep)].Mean / ms; got < 19.5 || got > sl.Stats[Wall].Mean/ms {
		t.Errorf("/sleep: %.2f ms blocked in sleep per request, want about 20 and less than the wall time", got)
	}
	if got := sl.Stats[CPU].Mean / ms; got > 1 {
		t.Errorf("/sleep: %.2f ms CPU per request, want about 0", got)
	}
	if w := sl.Stats[Wall].Mean / ms; w < 20 {
		t.Errorf("/sleep: wall %.2f ms, want at least 20", w)
	}
	lk := rowOf(t, rows, report.ByName, "/lock")
	if got := lk.Stats[Blocked+Metric(Sync)].Mean / ms; got < 8 {
		t.Errorf("/lock: %.2f ms blocked in sync per request, want at least 10 (the lock is held that long after they all wait)", got)
	}
	if len(lk.Top) == 0 || lk.Top[0].Reason != Sync || !strings.Contains(lk.Top[0].Frames[0], "sync.(*Mutex).Lock") {
		t.Errorf("/lock: top blocking stack %+v, want sync.(*Mutex).Lock", lk.Top)
	}
	ch := rowOf(t, rows, report.ByName, "/child")
	// The handler alone runs for some µs; the child's loop for ms.
	if ch.Stats[CPU].Mean < 0.5*ms {
		t.Errorf("/child: CPU %.3f ms, blocked in sync %.3f ms: the child's CPU is not the request's",
			ch.Stats[CPU].Mean/ms, ch.Stats[Blocked+Metric(Sync)].Mean/ms)
	}
	hg := rowOf(t, rows, report.ByName, "/hang")
	if hg.Requests != 0 || hg.Cut != 1 {
		t.Errorf("/hang: %d requests, %d cut; want 0 and 1", hg.Requests, hg.Cut)
	}
	run := rowOf(t, rows, report.ByRun, "42")
	if run.Requests != 12 || run.Cut != 1 {
		t.Errorf("run 42: %d requests, %d cut; want 12 and 1", run.Requests, run.Cut)
	}
	if n := tr.KeepRun("43"); n != 0 || len(tr.Rows([]report.Grouping{report.ByRun}, 0)) != 0 {
		t.Errorf("KeepRun of another run kept %d requests", n)
	}
}

// TestParseMembers: values with ',', '=', '%' and spaces come back as sent.
func TestParseMembers(t *testing.T) {
	l := k6labels.NewLabeler()
	ctx, ok := l.Labels(t.Context(), []string{"k6.test_run_id=1,k6.name=a%2Cb%3Dc%25d%20e,k6.my-tag=x"})
	if !ok {
		t.Fatal("not labelled")
	}
	got := ParseMembers(k6labels.Baggage(ctx))
	want := map[string]string{"k6_test_run_id": "1", "k6_name": "a,b=c%d e", "k6_my_tag": "x"}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
}
