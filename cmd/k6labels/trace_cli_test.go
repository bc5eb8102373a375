package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	httppprof "net/http/pprof"
	"os"
	"path/filepath"
	"runtime/pprof"
	rtrace "runtime/trace"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/k6labels/k6labels"
)

// traceService is a service wrapped with the k6labels middleware: /cpu
// burns one unit, /sleep sleeps 20 ms; it serves net/http/pprof's trace.
func traceService(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	var sink atomic.Uint64
	mux.HandleFunc("/cpu", func(http.ResponseWriter, *http.Request) { sink.Add(burnUnits(1, 1)) })
	mux.HandleFunc("/sleep", func(http.ResponseWriter, *http.Request) { time.Sleep(20 * time.Millisecond) })
	srv := httptest.NewServer(k6labels.NewHandler(mux))
	t.Cleanup(srv.Close)
	root := http.NewServeMux()
	root.Handle("/", k6labels.NewHandler(mux))
	root.HandleFunc("/debug/pprof/trace", httppprof.Trace)
	srv.Config.Handler = root
	return srv
}

// load sends k6-style requests to /cpu and /sleep until stop is closed.
func load(t *testing.T, url string, stop <-chan struct{}) *sync.WaitGroup {
	var wg sync.WaitGroup
	for _, route := range []string{"/cpu", "/sleep"} {
		wg.Go(func() {
			c := &http.Client{}
			defer c.CloseIdleConnections()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				req, _ := http.NewRequest("GET", fmt.Sprintf("%s%s?id=%d", url, route, i), nil)
				req.Header.Set("Baggage", "k6.test_run_id=7,k6.scenario=load,k6.name="+url+route+fmt.Sprintf("?id=%d", i))
				resp, err := c.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				resp.Body.Close()
			}
		})
	}
	return &wg
}

// TestReportTraceURL: report --trace reads net/http/pprof's trace URL of a
// service under load and gives each route's time: /sleep about 20 ms
// blocked in sleep and little CPU, /cpu mostly CPU; with k6 results, k6's
// own latency of the same rows appears beside them.
func TestReportTraceURL(t *testing.T) {
	srv := traceService(t)
	stop := make(chan struct{})
	wg := load(t, srv.URL, stop)
	k6file := filepath.Join(t.TempDir(), "k6.json")
	var lines []string
	for _, route := range []string{"/cpu", "/sleep"} {
		for i, v := range []float64{21, 23} {
			name := fmt.Sprintf("%s%s?id=%d", srv.URL, route, i)
			tags := fmt.Sprintf(`"tags":{"name":%q,"scenario":"load"}`, name)
			lines = append(lines,
				fmt.Sprintf(`{"metric":"http_reqs","type":"Point","data":{"time":"2026-01-01T00:00:01Z","value":1,%s}}`, tags),
				fmt.Sprintf(`{"metric":"http_req_duration","type":"Point","data":{"time":"2026-01-01T00:00:01Z","value":%g,%s}}`, v, tags),
				fmt.Sprintf(`{"metric":"http_req_waiting","type":"Point","data":{"time":"2026-01-01T00:00:01Z","value":%g,%s}}`, v-1, tags))
		}
	}
	if err := os.WriteFile(k6file, []byte(strings.Join(lines, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	code := run(t.Context(), []string{"report", "--trace", srv.URL + "/debug/pprof/trace?seconds=1", "--k6", k6file, "--by", "name", "--format", "json"}, &out, &errOut)
	close(stop)
	wg.Wait()
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var rep struct {
		Requests int
		Rows     []struct {
			Values   []string
			Requests int
			Ms       map[string]struct{ Mean float64 }
			K6       map[string]struct{ Mean, P95 float64 } `json:"k6_ms"`
		}
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err, out.String())
	}
	got := map[string]int{}
	for _, r := range rep.Rows {
		route := strings.TrimPrefix(r.Values[0], srv.URL)
		got[route] = r.Requests
		switch route {
		case "/sleep":
			// A loaded host wakes a sleeper late, never early.
			if s := r.Ms["blocked_sleep"].Mean; s < 19.5 || s > r.Ms["wall"].Mean {
				t.Errorf("/sleep: %.3f ms blocked in sleep, want at least 20 and less than the wall time", s)
			}
			if c := r.Ms["cpu"].Mean; c > 2 {
				t.Errorf("/sleep: %.3f ms CPU, want little", c)
			}
		case "/cpu":
			if c, w := r.Ms["cpu"].Mean, r.Ms["wall"].Mean; c <= 0 || c > w {
				t.Errorf("/cpu: %.3f ms CPU of %.3f ms wall", c, w)
			}
		}
		if k := r.K6["http_req_duration"]; k.Mean != 22 || k.P95 != 23 {
			t.Errorf("%s: k6 duration %+v, want mean 22, p95 23", route, k)
		}
		if k := r.K6["http_req_waiting"]; k.Mean != 21 {
			t.Errorf("%s: k6 waiting %+v, want mean 21", route, k)
		}
	}
	if got["/sleep"] == 0 || got["/cpu"] == 0 {
		t.Errorf("requests per route %v: want both routes", got)
	}
}

// TestReportTraceFileProfile: report --trace FILE --profile FILE of the
// same window prints the process CPU over the trace's on-CPU time, and
// --scale-cpu scales the CPU columns by it; text and markdown print the
// rows; a file that is no trace is refused with what to give.
func TestReportTraceFileProfile(t *testing.T) {
	srv := traceService(t)
	dir := t.TempDir()
	tf, pf := filepath.Join(dir, "trace.out"), filepath.Join(dir, "cpu.pb.gz")
	var tb, pb bytes.Buffer
	if err := rtrace.Start(&tb); err != nil {
		t.Skip("the execution tracer is busy:", err)
	}
	if err := pprof.StartCPUProfile(&pb); err != nil {
		rtrace.Stop()
		t.Skip("the CPU profiler is busy:", err)
	}
	stop := make(chan struct{})
	wg := load(t, srv.URL, stop)
	time.Sleep(500 * time.Millisecond)
	close(stop)
	wg.Wait()
	pprof.StopCPUProfile()
	rtrace.Stop()
	if err := os.WriteFile(tf, tb.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pf, pb.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"text", "markdown"} {
		var out, errOut bytes.Buffer
		code := run(t.Context(), []string{"report", "--trace", tf, "--profile", pf, "--scale-cpu", "--by", "scenario,name,scenario+name", "--format", format}, &out, &errOut)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut.String())
		}
		s := out.String()
		for _, want := range []string{"Process CPU", "ratio", "scaled by it", "/cpu", "/sleep", "sleep", "By k6_scenario × k6_name"} {
			if !strings.Contains(s, want) {
				t.Errorf("%s output lacks %q:\n%s", format, want, s)
			}
		}
	}
	var out, errOut bytes.Buffer
	if code := run(t.Context(), []string{"report", "--trace", pf}, &out, &errOut); code != exitError || !strings.Contains(errOut.String(), "not a Go execution trace") {
		t.Errorf("a profile as --trace: exit %d, %s", code, errOut.String())
	}
	errOut.Reset()
	if code := run(t.Context(), []string{"report", "--trace", tf, "--scale-cpu"}, &out, &errOut); code != exitUsage || !strings.Contains(errOut.String(), "--scale-cpu needs --profile") {
		t.Errorf("--scale-cpu alone: exit %d, %s", code, errOut.String())
	}
}

// TestDiffTrace: diff --base-trace --trace of one trace against itself finds
// no regression at --fail-above 50% and exits 0; without --base-trace it is
// a usage error.
func TestDiffTrace(t *testing.T) {
	srv := traceService(t)
	var tb bytes.Buffer
	if err := rtrace.Start(&tb); err != nil {
		t.Skip("the execution tracer is busy:", err)
	}
	stop := make(chan struct{})
	wg := load(t, srv.URL, stop)
	time.Sleep(300 * time.Millisecond)
	close(stop)
	wg.Wait()
	rtrace.Stop()
	tf := filepath.Join(t.TempDir(), "trace.out")
	if err := os.WriteFile(tf, tb.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	code := run(t.Context(), []string{"diff", "--base-trace", tf, "--trace", tf, "--by", "name", "--fail-above", "50%"}, &out, &errOut)
	if code != 0 || !strings.Contains(out.String(), "/cpu") || !strings.Contains(out.String(), "+0.0%") {
		t.Errorf("exit %d\n%s\n%s", code, out.String(), errOut.String())
	}
	errOut.Reset()
	if code := run(t.Context(), []string{"diff", "--trace", tf}, &out, &errOut); code != exitUsage || !strings.Contains(errOut.String(), "--base-trace and --trace") {
		t.Errorf("--trace alone: exit %d, %s", code, errOut.String())
	}
}
