package trace

import (
	"bytes"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/pprof"
	rtrace "runtime/trace"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/google/pprof/profile"
	"github.com/k6labels/k6labels"
	"github.com/k6labels/k6labels/cmd/k6labels/report"
)

// threadCPU returns the calling thread's CPU clock (CLOCK_THREAD_CPUTIME_ID).
func threadCPU() time.Duration {
	var ts syscall.Timespec
	const clockThreadCPUTimeID = 3
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTimeID, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		panic(e)
	}
	return time.Duration(ts.Nano())
}

// processCPU returns the process's user and system CPU so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestCPUTruth: three routes of a fixed iteration count (about 2, 4 and 6 ms
// of CPU) under a k6-style load on 127.0.0.1, six clients on the machine's
// cores. The truth is each request's CPU by its thread's CPU clock, read
// around the whole labelled handler on a locked thread. The trace's CPU per
// request, scaled by the process CPU over the trace's on-CPU time (the
// host's share, see Report.CPURatio), must be within 10% of the truth per
// route, and the 6/2 ms ratio within 10% of the truth's; with
// K6LABELS_SOAK=1, 3% (and more requests). On an overcommitted host
// (ratio below TrustedCPURatio) the report must warn, and only ±40% holds.
// The sampling profile's figures of the same run are logged beside them.
func TestCPUTruth(t *testing.T) {
	tol, perRoute := 0.10, 60
	if os.Getenv("K6LABELS_SOAK") != "" {
		tol, perRoute = 0.03, 400
	}
	// Iterations per ms, by this thread's own clock.
	runtime.LockOSThread()
	c0 := threadCPU()
	burn(4_000_000)
	perMs := 4_000_000 / (float64(threadCPU()-c0) / 1e6)
	runtime.UnlockOSThread()

	routes := []struct {
		path string
		ms   float64
	}{{"/r2", 2}, {"/r4", 4}, {"/r6", 6}}
	type truth struct {
		sync.Mutex
		n   int
		cpu time.Duration
	}
	truths := map[string]*truth{}
	mux := http.NewServeMux()
	for _, r := range routes {
		n := int(r.ms * perMs)
		mux.HandleFunc(r.path, func(http.ResponseWriter, *http.Request) { burn(n) })
		truths[r.path] = &truth{}
	}
	labelled := k6labels.NewHandler(mux)
	var measuring atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		c0 := threadCPU()
		labelled.ServeHTTP(w, req)
		d := threadCPU() - c0
		if measuring.Load() {
			tr := truths[req.URL.Path]
			tr.Lock()
			tr.n++
			tr.cpu += d
			tr.Unlock()
		}
	}))
	defer srv.Close()

	var tb, pb bytes.Buffer
	if err := rtrace.Start(&tb); err != nil {
		t.Skip("the execution tracer is busy:", err)
	}
	profiling := pprof.StartCPUProfile(&pb) == nil
	measuring.Store(true)
	p0 := processCPU()
	var wg sync.WaitGroup
	for _, r := range routes {
		for range 2 {
			wg.Go(func() {
				c := &http.Client{Transport: &http.Transport{}}
				defer c.CloseIdleConnections()
				for range perRoute / 2 {
					get(t, c, srv.URL+r.path, r.path)
				}
			})
		}
	}
	wg.Wait()
	measuring.Store(false)
	pcpu := processCPU() - p0
	if profiling {
		pprof.StopCPUProfile()
	}
	rtrace.Stop()
	tr, err := Read(&tb)
	if err != nil {
		t.Fatal(err)
	}
	rep := &Report{Trace: tr, ProcessCPU: int64(pcpu), ScaleCPU: true}
	q := rep.CPURatio()
	t.Logf("process CPU %v, trace on-CPU %v: ratio %.3f", pcpu, time.Duration(tr.GoroutineCPU), q)
	if q < TrustedCPURatio {
		// The host ran other work on our threads' cores: the longer a
		// request, the likelier it was descheduled, so one ratio does not
		// scale each route exactly. The report says so; only gross errors
		// are caught here.
		t.Logf("overcommitted host (ratio %.2f): the report must warn; per-route accuracy is not checked", q)
		tol = math.Inf(1)
		// output's TestWriteTraceWarns checks that the written report
		// carries the warning.
		if msg := rep.CPUWarning(); !strings.HasPrefix(msg, "the host ran") {
			t.Errorf("the report does not warn of the host's share %.2f: warning %q", q, msg)
		}
	}
	var sampled map[string]float64
	if profiling {
		sampled = sampledPerRequest(t, pb.Bytes(), perRoute)
	}
	rows := tr.Rows([]report.Grouping{report.ByName}, 0)
	got := map[string]float64{}
	want := map[string]float64{}
	for _, r := range routes {
		row := rowOf(t, rows, report.ByName, r.path)
		tru := truths[r.path]
		if row.Requests != tru.n || tru.n != perRoute {
			t.Fatalf("%s: %d requests in the trace, %d measured, %d sent", r.path, row.Requests, tru.n, perRoute)
		}
		want[r.path] = float64(tru.cpu) / float64(tru.n) / ms
		raw := row.Stats[CPU].Mean / ms
		got[r.path] = raw * q
		t.Logf("%s: truth %.3f ms; trace %.3f ms (%+.1f%%), scaled %.3f ms (%+.1f%%); sampling %.3f ms (%+.1f%%)", r.path,
			want[r.path], raw, 100*(raw/want[r.path]-1), got[r.path], 100*(got[r.path]/want[r.path]-1),
			sampled[r.path], 100*(sampled[r.path]/want[r.path]-1))
		if e := got[r.path]/want[r.path] - 1; math.Abs(e) > tol {
			t.Errorf("%s: trace CPU per request %.3f ms (scaled by %.3f), truth %.3f ms: %+.1f%%, beyond ±%.0f%%",
				r.path, got[r.path], q, want[r.path], 100*e, 100*tol)
		}
	}
	if e := (got["/r6"]/got["/r2"])/(want["/r6"]/want["/r2"]) - 1; math.Abs(e) > tol {
		t.Errorf("the 6/2 ms ratio reads %.3f, truth %.3f", got["/r6"]/got["/r2"], want["/r6"]/want["/r2"])
	}
}

// sampledPerRequest returns the sampling profile's CPU per request of each
// k6_name, in ms, from a CPU profile of the same run with n requests each.
func sampledPerRequest(t *testing.T, data []byte, n int) map[string]float64 {
	p, err := profile.ParseData(data)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, s := range p.Sample {
		if v := s.Label["k6_name"]; len(v) == 1 {
			out[v[0]] += float64(s.Value[1]) / ms
		}
	}
	for k := range out {
		out[k] /= float64(n)
	}
	return out
}

// BenchmarkServeTraced is one request over 127.0.0.1 to a handler that
// burns about 10 µs, with the execution tracer off and on: the difference in
// "cpu-ns/req" (the process's CPU, client and server, per request; steadier
// than wall time on a shared machine) is the tracer's cost per request.
func BenchmarkServeTraced(b *testing.B) {
	srv := httptest.NewServer(k6labels.NewHandler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { burn(20_000) })))
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	req, _ := http.NewRequest("GET", srv.URL+"/", nil)
	req.Header.Set("Baggage", "k6.test_run_id=1,k6.scenario=s,k6.name=/route")
	do := func(b *testing.B) {
		c0 := processCPU()
		for b.Loop() {
			resp, err := client.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			resp.Body.Close()
		}
		b.ReportMetric(float64(processCPU()-c0)/float64(b.N), "cpu-ns/req")
	}
	b.Run("TracerOff", do)
	b.Run("TracerOn", func(b *testing.B) {
		var buf bytes.Buffer
		if err := rtrace.Start(&buf); err != nil {
			b.Skip("the execution tracer is busy:", err)
		}
		do(b)
		rtrace.Stop()
		b.ReportMetric(float64(buf.Len())/float64(b.N), "B-trace/req")
	})
}
