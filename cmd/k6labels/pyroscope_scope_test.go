package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/k6labels/k6labels/cmd/k6labels/pyroscope/pyroscopetest"
)

// recordingProxy passes requests to the replay server and keeps each one's
// procedure and label selector (the protobuf one decoded).
func recordingProxy(t *testing.T, replay string) (string, func() [][2]string) {
	t.Helper()
	target, _ := url.Parse(replay)
	proxy := httputil.NewSingleHostReverseProxy(target)
	var mu sync.Mutex
	var seen [][2]string
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		proc := r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]
		sel, ok := pyroscopetest.Exchange{Path: r.URL.Path, ContentType: r.Header.Get("Content-Type"), Body: body}.MergeSelector()
		if !ok {
			var req struct {
				Selector string   `json:"label_selector"`
				Matchers []string `json:"matchers"`
				Step     float64  `json:"step"`
			}
			_ = json.Unmarshal(body, &req)
			sel = req.Selector + strings.Join(req.Matchers, " ")
			if req.Step == 1 {
				proc += " step 1s"
			}
		}
		mu.Lock()
		seen = append(seen, [2]string{proc, sel})
		mu.Unlock()
		proxy.ServeHTTP(w, r)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String(), func() [][2]string {
		mu.Lock()
		defer mu.Unlock()
		return append([][2]string(nil), seen...)
	}
}

// TestPyroscopeOneRunAtATime: a report of fx1, in a window that holds fx2
// too, asks only about fx1 (label values included), about the samples
// without any k6 label, and the service-wide upload check; fx2 is in no
// row, not in the headline CPU, and not in the run table.
func TestPyroscopeOneRunAtATime(t *testing.T) {
	{
		srv, _, fx := pyrServer(t)
		front, seen := recordingProxy(t, srv.URL)
		k6 := filepath.Join(fx, "k6", "run-fx1.json.gz")
		args := append([]string{"report", "--pyroscope", front, "--service", pyrService, "--k6", k6, "--run-id", "fx1",
			"--by", "run,scenario,name", "--format", "json"}, pyrWindow...)
		code, out, errOut := pyrRun(t, args...)
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var rep struct {
			CPU  float64 `json:"cpu_seconds"`
			Rows []struct {
				By     []string `json:"by"`
				Values []string `json:"values"`
			} `json:"rows"`
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		if !pyrClose(rep.CPU, 23.77+1.03) {
			t.Errorf("headline CPU %v, want fx1's 23.77 s and 1.03 s without k6 labels", rep.CPU)
		}
		for _, r := range rep.Rows {
			if r.By[0] == "k6_test_run_id" && r.Values[0] != "fx1" {
				t.Errorf("run table has %v", r.Values)
			}
		}
		const run = `k6_test_run_id="fx1"`
		const none = `{service_name="rideshare.k6labels",k6_test_run_id="",k6_scenario="",k6_name=""}`
		const probe = `{service_name="rideshare.k6labels"}`
		n := 0
		for _, q := range seen() {
			n++
			switch {
			case strings.Contains(q[1], run):
			case q[0] == "SelectSeries" && q[1] == none:
			case q[0] == "SelectSeries step 1s" && q[1] == probe:
			default:
				t.Errorf("%s %s: a query of more than the run", q[0], q[1])
			}
		}
		// Upload check, run totals, no-label totals, the run's time (1 s
		// steps, checked against the k6 results'), 2 label values, the
		// run's profile, one SelectSeries per grouping (2), the profiles
		// of the 2 scenarios (whose functions are listed).
		if n != 11 {
			t.Errorf("%d queries, want 11: %q", n, seen())
		}
	}
}
