package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"github.com/k6labels/k6labels/cmd/k6labels/k6results"
)

// The performance of `k6labels report` on a 100 MB k6 json file and a CPU
// profile of 10^5 samples:
//
//	go test -run '^$' -bench . -benchtime 5x -count 6 . | tee new.txt   # in cmd/k6labels
//	go run golang.org/x/perf/cmd/benchstat new.txt
//
// Each iteration runs the command in a fresh process (this test binary,
// TestReportProcess), so that max-RSS-B is the peak resident memory of the
// report alone; peak-heap-B is the largest Go heap (objects, live or not
// yet swept) sampled every millisecond in that process. benchstat shows
// both in MiB.

// benchJSONBytes is the size of the generated k6 json file.
const benchJSONBytes = 100 << 20

// benchSamples is the number of samples of the generated CPU profile.
const benchSamples = 100_000

// benchRoutes are the requests of the generated run: scenario, path, and
// its share of requests (the demo's load).
var benchRoutes = []struct {
	scenario, path string
	weight         int
}{
	{"rush_hour", "/car", 4}, {"rush_hour", "/scooter", 2},
	{"off_peak", "/bike", 2}, {"off_peak", "/scooter", 2}, {"off_peak", "/", 2},
}

const benchBase = "http://127.0.0.1:18080"

// writeBenchJSON writes a k6 --out json file of at least size bytes, as k6
// v2.2.0 writes it: a Metric line before a metric's first point, then per
// request the 9 points http_reqs and http_req_*, and per iteration checks, data_sent,
// data_received, iteration_duration, iterations, plus vus every second.
// Request names are URLs with distinct query strings. It returns the
// http_reqs it wrote.
func writeBenchJSON(tb testing.TB, path string, size int64) int64 {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	cw := &countWriter{w: w}
	rng := rand.New(rand.NewPCG(1, 2))
	seen := map[string]bool{}
	metric := func(name, typ, contains string) {
		if !seen[name] {
			seen[name] = true
			fmt.Fprintf(cw, `{"type":"Metric","data":{"name":%q,"type":%q,"contains":%q,"thresholds":[],"submetrics":null},"metric":%q}`+"\n", name, typ, contains, name)
		}
	}
	var pick []int
	for i, r := range benchRoutes {
		for range r.weight {
			pick = append(pick, i)
		}
	}
	t := time.Date(2026, 12, 2, 18, 15, 53, 384792196, time.UTC)
	lastVus := time.Time{}
	var reqs int64
	httpMetrics := []string{"http_reqs", "http_req_duration", "http_req_blocked", "http_req_connecting", "http_req_tls_handshaking",
		"http_req_sending", "http_req_waiting", "http_req_receiving", "http_req_failed"}
	for cw.n < size {
		t = t.Add(time.Duration(500+rng.IntN(1500)) * time.Microsecond)
		ts := t.Format(time.RFC3339Nano)
		if t.Sub(lastVus) >= time.Second {
			lastVus = t
			metric("vus", "gauge", "default")
			fmt.Fprintf(cw, `{"metric":"vus","type":"Point","data":{"time":%q,"value":3,"tags":{}}}`+"\n", ts)
		}
		r := benchRoutes[pick[rng.IntN(len(pick))]]
		url := fmt.Sprintf("%s%s?vehicle_id=%d&city=berlin", benchBase, r.path, rng.IntN(5000))
		tags := fmt.Sprintf(`{"expected_response":"true","group":"","method":"GET","name":%q,"proto":"HTTP/1.1","scenario":%q,"status":"200","url":%q}`, url, r.scenario, url)
		for _, m := range httpMetrics {
			typ, contains, v := "trend", "time", fmt.Sprintf("%.6f", rng.Float64()*10)
			switch m {
			case "http_reqs":
				typ, contains, v = "counter", "default", "1"
			case "http_req_failed":
				typ, contains, v = "rate", "default", "0"
			}
			metric(m, typ, contains)
			fmt.Fprintf(cw, `{"metric":%q,"type":"Point","data":{"time":%q,"value":%s,"tags":%s}}`+"\n", m, ts, v, tags)
		}
		reqs++
		for _, m := range []struct{ name, typ, contains, value string }{
			{"checks", "rate", "default", "1"}, {"data_sent", "counter", "data", "210"}, {"data_received", "counter", "data", "170"},
			{"iteration_duration", "trend", "time", fmt.Sprintf("%.6f", 5+rng.Float64()*5)}, {"iterations", "counter", "default", "1"},
		} {
			metric(m.name, m.typ, m.contains)
			extra := ""
			if m.name == "checks" {
				extra = `"check":"status is 200",`
			}
			fmt.Fprintf(cw, `{"metric":%q,"type":"Point","data":{"time":%q,"value":%s,"tags":{%s"group":"","scenario":%q}}}`+"\n", m.name, ts, m.value, extra, r.scenario)
		}
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
	return reqs
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// writeBenchProfile writes a gzip pprof CPU profile of n samples, as
// runtime/pprof writes them (samples/count and cpu/nanoseconds at 100 Hz),
// each with its own stack of 8 to 32 frames out of 2,000 locations in 500
// functions, labelled by k6labels for one run (5% without labels).
func writeBenchProfile(tb testing.TB, path string, n int) {
	tb.Helper()
	rng := rand.New(rand.NewPCG(3, 4))
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"}, Period: 10_000_000,
		TimeNanos: time.Date(2026, 12, 2, 18, 15, 52, 0, time.UTC).UnixNano(), DurationNanos: int64(30 * time.Second),
	}
	m := &profile.Mapping{ID: 1, Start: 0x400000, Limit: 0x1000000, File: "rideshare", HasFunctions: true}
	p.Mapping = []*profile.Mapping{m}
	for i := range 500 {
		p.Function = append(p.Function, &profile.Function{ID: uint64(i + 1), Name: fmt.Sprintf("main.f%d", i), SystemName: fmt.Sprintf("main.f%d", i), Filename: "service.go"})
	}
	for i := range 2000 {
		p.Location = append(p.Location, &profile.Location{ID: uint64(i + 1), Mapping: m, Address: uint64(0x400000 + 16*i),
			Line: []profile.Line{{Function: p.Function[rng.IntN(len(p.Function))], Line: int64(1 + rng.IntN(400))}}})
	}
	for range n {
		stack := make([]*profile.Location, 8+rng.IntN(25))
		for j := range stack {
			stack[j] = p.Location[rng.IntN(len(p.Location))]
		}
		k := int64(1 + rng.IntN(3))
		s := &profile.Sample{Location: stack, Value: []int64{k, k * 10_000_000}}
		if rng.IntN(20) > 0 {
			r := benchRoutes[rng.IntN(len(benchRoutes))]
			s.Label = map[string][]string{"k6_test_run_id": {"bench"}, "k6_scenario": {r.scenario}, "k6_name": {benchBase + r.path}}
		}
		p.Sample = append(p.Sample, s)
	}
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	if err := p.Write(f); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
}

// reportProcessEnv names the arguments of the report that
// TestReportProcess runs (tab-separated) when the benchmark starts it.
const reportProcessEnv = "K6LABELS_BENCH_REPORT_ARGS"

// TestReportProcess is the child process of BenchmarkReport: it runs the
// report of the arguments in reportProcessEnv and prints the peak heap it
// sampled to stderr. Without that variable it is skipped.
func TestReportProcess(t *testing.T) {
	args := os.Getenv(reportProcessEnv)
	if args == "" {
		t.Skip("the child process of BenchmarkReport")
	}
	stop := peakHeap()
	code := run(context.Background(), strings.Split(args, "\t"), io.Discard, os.Stderr)
	fmt.Fprintf(os.Stderr, "peak-heap-bytes %d\n", stop())
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
}

// peakHeap samples the Go heap (objects, live or not yet swept) every
// millisecond until the returned function is called, which returns the
// largest value seen.
func peakHeap() func() uint64 {
	peak := make(chan uint64)
	stop := make(chan struct{})
	go func() {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		var high uint64
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(s)
			high = max(high, s[0].Value.Uint64())
			select {
			case <-stop:
				peak <- high
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 {
		close(stop)
		return <-peak
	}
}

// BenchmarkReport: `k6labels report --k6 FILE PROFILE` on a generated
// 100 MB k6 json file and a profile of 10^5 samples, in a fresh process per
// iteration; see the comment at the top of this file.
func BenchmarkReport(b *testing.B) {
	dir := b.TempDir()
	js, prof := filepath.Join(dir, "run.json"), filepath.Join(dir, "cpu.pb.gz")
	reqs := writeBenchJSON(b, js, benchJSONBytes)
	writeBenchProfile(b, prof, benchSamples)
	fi, err := os.Stat(js)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("k6 json %.1f MB, %d http_reqs; profile of %d samples", float64(fi.Size())/1e6, reqs, benchSamples)
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	var maxRSS, heap int64
	for b.Loop() {
		cmd := exec.Command(exe, "-test.run=^TestReportProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), reportProcessEnv+"="+strings.Join([]string{"report", "--k6", js, "--format", "json", prof}, "\t"))
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			b.Fatalf("%v: %s", err, stderr.String())
		}
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			maxRSS = max(maxRSS, ru.Maxrss) // KiB on Linux
		}
		for line := range strings.SplitSeq(stderr.String(), "\n") {
			if v, ok := strings.CutPrefix(line, "peak-heap-bytes "); ok {
				n, _ := strconv.ParseInt(v, 10, 64)
				heap = max(heap, n)
			}
		}
	}
	b.ReportMetric(float64(maxRSS)*1024, "max-RSS-B")
	b.ReportMetric(float64(heap), "peak-heap-B")
}

// BenchmarkReadK6JSON: k6results.ReadFile alone on the generated 100 MB
// json, in this process: the heap stays at the reader's buffers because
// points are streamed, never held.
func BenchmarkReadK6JSON(b *testing.B) {
	js := filepath.Join(b.TempDir(), "run.json")
	reqs := writeBenchJSON(b, js, benchJSONBytes)
	fi, err := os.Stat(js)
	if err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	stop := peakHeap()
	for b.Loop() {
		k, err := k6results.ReadFile(js)
		if err != nil {
			b.Fatal(err)
		}
		if k.Total != reqs {
			b.Fatalf("%d http_reqs read, %d written", k.Total, reqs)
		}
	}
	b.ReportMetric(float64(stop()), "peak-heap-B")
	b.SetBytes(fi.Size())
}
