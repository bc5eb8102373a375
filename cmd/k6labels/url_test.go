package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/k6labels/k6labels"
)

// burnUnits does units × 2^20 xorshift rounds (about 2 ms each) and
// returns the state so that the work is kept.
func burnUnits(units int, seed uint64) uint64 {
	x := seed | 1
	for range units << 20 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

// TestReportFromProfileURL: the report reads a real CPU profile over HTTP
// from a service wrapped with the k6labels middleware, while k6-style
// requests (the helper's baggage header, URLs with query strings) hit two
// routes of known cost, 2 and 6 units; with the k6 results of those
// requests, CPU per request of /b is 3 times /a's within the intervals.
// The routes take about 4 and 12 ms: the sampling profiler reads a 2 ms
// request's CPU about 25% low (docs/report.md, execution traces), more
// on a loaded machine, which is the trace path's subject, not this one's.
// Four clients send them, as k6's virtual users do.
// The profile endpoint profiles until the load is done (not for a fixed
// time), so the test holds on a slow machine. The k6 results file is only
// written while the profile is read, with the requests' real times, as
// when a profile URL is read during a k6 run.
func TestReportFromProfileURL(t *testing.T) {
	const perRoute = 400
	routes := map[string]int{"/a": 2, "/b": 6}
	loadDone := make(chan struct{})
	profiling := make(chan struct{})
	var sink uint64
	var mu sync.Mutex
	mux := http.NewServeMux()
	for path, units := range routes {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			v := burnUnits(units, uint64(len(r.URL.RawQuery)))
			mu.Lock()
			sink += v
			mu.Unlock()
			io.WriteString(w, "ok\n")
		})
	}
	mux.HandleFunc("/debug/pprof/profile", func(w http.ResponseWriter, r *http.Request) {
		var buf bytes.Buffer
		if err := pprof.StartCPUProfile(&buf); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		close(profiling)
		<-loadDone
		pprof.StopCPUProfile()
		w.Write(buf.Bytes())
	})
	srv := httptest.NewServer(k6labels.LabelsFromBaggageHandler(mux))
	defer srv.Close()

	// The requests below; k6's results of them are written while the
	// profile is being read, as k6 writes them during a run: the command
	// must read them after the profile, not when it starts.
	var urls []struct{ url, scenario string }
	for i := range perRoute {
		for _, path := range []string{"/a", "/b"} {
			u := fmt.Sprintf("%s%s?vehicle_id=%d&city=berlin", srv.URL, path, i)
			urls = append(urls, struct{ url, scenario string }{u, "s" + path[1:]})
		}
	}
	sent := make([]time.Time, len(urls))
	k6file := filepath.Join(t.TempDir(), "run.json")

	type result struct {
		code        int
		out, stderr string
	}
	done := make(chan result)
	go func() {
		var out, errOut bytes.Buffer
		code := run(t.Context(), []string{"report", "--k6", k6file, "--by", "name", "--format", "json", srv.URL + "/debug/pprof/profile"}, &out, &errOut)
		done <- result{code, out.String(), errOut.String()}
	}()
	<-profiling
	// Four virtual users keep both processors busy, as a k6 load does. A
	// thread that idles between requests gets its CPU-time signal only at
	// the next kernel tick (4 ms at HZ=250) while it runs, so samples due
	// in a short request land in a later one; on a busy thread they land
	// where they are due.
	next := make(chan int)
	errs := make(chan error, len(urls))
	var vus sync.WaitGroup
	for range 4 {
		vus.Go(func() {
			for i := range next {
				u := urls[i]
				sent[i] = time.Now()
				req, err := http.NewRequest(http.MethodGet, u.url, nil)
				if err != nil {
					errs <- err
					continue
				}
				req.Header.Set("Baggage", "k6.test_run_id=url-test,k6.scenario="+u.scenario+",k6.name="+u.url)
				resp, err := srv.Client().Do(req)
				if err != nil {
					errs <- err
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
	for i := range urls {
		next <- i
	}
	close(next)
	vus.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	var k6 strings.Builder
	for i, u := range urls {
		fmt.Fprintf(&k6, `{"metric":"http_reqs","type":"Point","data":{"time":%q,"value":1,"tags":{"name":%q,"scenario":%q}}}`+"\n",
			sent[i].UTC().Format(time.RFC3339Nano), u.url, u.scenario)
	}
	if err := os.WriteFile(k6file, []byte(k6.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	close(loadDone)
	res := <-done
	if res.code != exitOK {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	var rep struct {
		TestRunID string `json:"test_run_id"`
		Rows      []struct {
			Values []string `json:"values"`
			Req    int64    `json:"requests"`
			Est    float64  `json:"cpu_per_request_ms"`
			Low    float64  `json:"cpu_per_request_ms_low"`
			High   float64  `json:"cpu_per_request_ms_high"`
		} `json:"rows"`
		Unmatched []any `json:"unmatched_names"`
	}
	if err := json.Unmarshal([]byte(res.out), &rep); err != nil {
		t.Fatalf("%v:\n%s", err, res.out)
	}
	got := map[string]int{}
	for i, row := range rep.Rows {
		got[strings.TrimPrefix(row.Values[0], srv.URL)] = i
	}
	ia, oka := got["/a"]
	ib, okb := got["/b"]
	if rep.TestRunID != "url-test" || !oka || !okb || len(rep.Unmatched) != 0 {
		t.Fatalf("run %q, rows %v, unmatched %v:\n%s", rep.TestRunID, got, rep.Unmatched, res.out)
	}
	a, b := rep.Rows[ia], rep.Rows[ib]
	if a.Req != perRoute || b.Req != perRoute {
		t.Errorf("requests /a %d, /b %d, want %d each", a.Req, b.Req, perRoute)
	}
	// The cost ratio 3 lies between the ratios of the intervals' ends.
	if a.Low <= 0 || b.Low/a.High > 3 || b.High/a.Low < 3 {
		t.Errorf("/b %.3f ms (%.3f–%.3f), /a %.3f ms (%.3f–%.3f): ratio %.2f, intervals exclude 3", b.Est, b.Low, b.High, a.Est, a.Low, a.High, b.Est/a.Est)
	}
	t.Logf("/a %.3f ms (%.3f–%.3f), /b %.3f ms (%.3f–%.3f), ratio %.2f", a.Est, a.Low, a.High, b.Est, b.Low, b.High, b.Est/a.Est)
}

// TestURLSecondsRefused: a profile URL and a trace URL whose seconds is no
// positive number are refused by the same rule before anything is asked
// (the server is never reached), naming the value.
func TestURLSecondsRefused(t *testing.T) {
	asked := false
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { asked = true }))
	t.Cleanup(srv.Close)
	for _, args := range [][]string{
		{"report", srv.URL + "/debug/pprof/profile?seconds=abc"},
		{"report", "--trace", srv.URL + "/debug/pprof/trace?seconds=abc"},
	} {
		code, _, stderr := runCLI(t, args...)
		if code != exitError || !strings.Contains(stderr, `seconds="abc" is not a positive number of seconds`) {
			t.Errorf("%v: exit %d, %s", args, code, stderr)
		}
	}
	if asked {
		t.Error("the server was asked")
	}
}
