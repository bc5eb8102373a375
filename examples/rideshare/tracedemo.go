package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime/pprof"
	rtrace "runtime/trace"
	"strconv"
	"sync"
	"time"

	"github.com/google/pprof/profile"
	"github.com/k6labels/k6labels/cmd/k6labels/k6results"
	"github.com/k6labels/k6labels/cmd/k6labels/output"
	"github.com/k6labels/k6labels/cmd/k6labels/report"
	"github.com/k6labels/k6labels/cmd/k6labels/trace"
)

// tripsQueryTime is how long /trips waits for its "database": an off-CPU
// wait, as a query to another service is.
const tripsQueryTime = 20 * time.Millisecond

// surgeHold is how long /surge holds the surge-pricing lock, doing a
// little CPU work and a short wait inside it, so that concurrent requests
// queue for it.
const surgeHold = 3 * time.Millisecond

var surgeMu sync.Mutex

// handleTrips lists a rider's trips from a database: almost no CPU, a wait.
//
//go:noinline
func handleTrips(w http.ResponseWriter, r *http.Request) {
	time.Sleep(tripsQueryTime)
	fmt.Fprintln(w, "trips: none yet")
}

// handleSurge reads the surge price under a lock that every request takes.
//
//go:noinline
func handleSurge(w http.ResponseWriter, r *http.Request) {
	surgeMu.Lock()
	x := findNearestVehicle(1, 7) // a unit of CPU inside the lock
	time.Sleep(surgeHold)
	surgeMu.Unlock()
	fmt.Fprintf(w, "surge 1.%d\n", x%10)
}

// traceScenarios is the load of the trace phase: the waiting and the
// contended route beside a CPU-bound one, three virtual users.
var traceScenarios = []scenario{
	{name: "where_time_goes", vus: 3, paths: []string{"/trips", "/surge", "/car"}},
}

// traceDemoTime is how long the trace phase sends load.
const traceDemoTime = 2 * time.Second

// latencies records the client-side duration of each request by path, as
// k6's http_req_duration does.
type latencies struct {
	mu sync.Mutex
	by map[string][]float64 // path → ms
}

func (l *latencies) add(path string, d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.by == nil {
		l.by = map[string][]float64{}
	}
	l.by[path] = append(l.by[path], float64(d)/float64(time.Millisecond))
}

// runTraceDemo sends the trace phase's load to the service at base under
// the execution tracer and prints, per route, where a request's time goes
// beside the client's latency of the same requests.
func runTraceDemo(ctx context.Context, base, testRunID string, w io.Writer) error {
	d := newDriver(base, testRunID, traceScenarios)
	d.latency = &latencies{}
	var buf, cpu bytes.Buffer
	if err := rtrace.Start(&buf); err != nil {
		return fmt.Errorf("the execution tracer: %w", err)
	}
	// A CPU profile of the same window gives the process CPU the host
	// really gave, to check the trace's on-CPU time against.
	profiling := pprof.StartCPUProfile(&cpu) == nil
	rctx, cancel := context.WithTimeout(ctx, traceDemoTime)
	d.run(rctx)
	cancel()
	if profiling {
		pprof.StopCPUProfile()
	}
	rtrace.Stop()
	size := buf.Len()
	tr, err := trace.Read(&buf)
	if err != nil {
		return err
	}
	k6 := &k6results.Results{Latency: map[k6results.Key]*k6results.Latency{}}
	for path, ms := range d.latency.by {
		k6.Latency[k6results.Key{Scenario: traceScenarios[0].name, Name: k6results.Name(base + path)}] = &k6results.Latency{Duration: ms}
	}
	var processCPU int64
	if p, err := profile.ParseData(cpu.Bytes()); err == nil && profiling {
		for i, st := range p.SampleType {
			if st.Type == "cpu" {
				for _, smp := range p.Sample {
					processCPU += smp.Value[i]
				}
			}
		}
	}
	r := &trace.Report{ProcessCPU: processCPU, ScaleCPU: true, Source: "of the service (" + strconv.Itoa(size/1024) + " KiB, " + traceDemoTime.String() + ")", Trace: tr,
		Rows: tr.Rows([]report.Grouping{report.ByName}, 2), K6: k6}
	fmt.Fprintln(w, "Where each request's time goes, from Go's execution tracer (what")
	fmt.Fprintln(w, "`k6labels report --trace URL --k6 run.json` prints): /trips waits 20 ms for its")
	fmt.Fprintln(w, "database (blocked: sleep), /surge queues for a lock (blocked: sync), /car computes;")
	fmt.Fprintln(w, "the load generator's latency (k6 duration) is beside the service's wall time.")
	fmt.Fprintln(w, "CPU is scaled by the process's CPU (a profile of the same seconds) over the trace's.")
	fmt.Fprintln(w)
	return output.WriteTrace(w, r, output.Text)
}
