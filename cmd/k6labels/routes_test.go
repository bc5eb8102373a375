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
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/k6labels/k6labels"
)

// TestRouteNamedService: a real service whose requests are labelled by
// route — a ServeMux wrapped as NewHandler(mux, WithServeMux(mux)), and
// framework-style routes (Echo/Gin ":id", "*", gorilla "{name:re}") named
// with WithNameFormatter — is profiled in this process while k6-style
// requests (baggage with k6's full URL as the name) hit it; k6 results
// name each request by its URL and method, as k6's json output does.
// report then gives CPU per request per route with no flag: each route's
// requests exactly, no name unmatched, and the cost ratios of the routes
// (1, 3, 2 units) inside the intervals; diff of the run with itself
// compares the route rows.
func TestRouteNamedService(t *testing.T) {
	type route struct {
		method, path, label string
		units, n            int
	}
	routes := []route{
		{"GET", "/cart/%d", "GET /cart/{id}", 1, 150},
		{"GET", "/cart/new", "GET /cart/new", 3, 100},
		{"POST", "/cart/%d", "POST /cart/{id}", 2, 100},
		{"GET", "/item/%d", "/item/:id", 2, 100},
		{"GET", "/files/%d/a.txt", "/files/*", 1, 100},
		{"GET", "/user/u%c", "/user/{name:[a-z]+}", 1, 60},
	}
	var mu sync.Mutex
	var sink uint64
	burn := func(units int, seed string) {
		v := burnUnits(units, uint64(len(seed)))
		mu.Lock()
		sink += v
		mu.Unlock()
	}
	mux := http.NewServeMux()
	for _, r := range routes[:3] {
		mux.HandleFunc(r.label, func(w http.ResponseWriter, req *http.Request) { burn(r.units, req.URL.Path) })
	}
	framework := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		for _, r := range routes[3:] {
			if strings.HasPrefix(req.URL.Path, r.path[:strings.Index(r.path[1:], "/")+2]) {
				burn(r.units, req.URL.Path)
				return
			}
		}
		http.NotFound(w, req)
	})
	frameworkName := func(req *http.Request, name string) string {
		for _, r := range routes[3:] {
			if strings.HasPrefix(req.URL.Path, r.path[:strings.Index(r.path[1:], "/")+2]) {
				return r.label
			}
		}
		return name
	}
	muxed := k6labels.NewHandler(mux, k6labels.WithServeMux(mux))
	named := k6labels.NewHandler(framework, k6labels.WithNameFormatter(frameworkName))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if strings.HasPrefix(req.URL.Path, "/cart/") {
			muxed.ServeHTTP(w, req)
		} else {
			named.ServeHTTP(w, req)
		}
	}))
	defer srv.Close()

	type request struct {
		method, url string
		sent        time.Time
	}
	var reqs []*request
	for _, r := range routes {
		for i := range r.n {
			p := r.path
			switch {
			case strings.Contains(p, "%d"):
				p = fmt.Sprintf(p, i)
			case strings.Contains(p, "%c"):
				p = fmt.Sprintf(p, 'a'+rune(i%26))
			}
			reqs = append(reqs, &request{method: r.method, url: srv.URL + p + "?q=" + fmt.Sprint(i)})
		}
	}
	var buf bytes.Buffer
	if err := pprof.StartCPUProfile(&buf); err != nil {
		t.Fatal(err)
	}
	next := make(chan *request)
	var vus sync.WaitGroup
	for range 2 {
		vus.Go(func() {
			for r := range next {
				r.sent = time.Now()
				req, _ := http.NewRequest(r.method, r.url, nil)
				req.Header.Set("Baggage", "k6.test_run_id=routes,k6.scenario=default,k6.name="+r.url)
				resp, err := srv.Client().Do(req)
				if err != nil {
					t.Error(err)
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
	for i := range reqs {
		next <- reqs[(i*7919)%len(reqs)] // interleaved routes
	}
	close(next)
	vus.Wait()
	pprof.StopCPUProfile()
	dir := t.TempDir()
	cpu := filepath.Join(dir, "cpu.pb.gz")
	if err := os.WriteFile(cpu, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var k6 strings.Builder
	for _, r := range reqs {
		fmt.Fprintf(&k6, `{"metric":"http_reqs","type":"Point","data":{"time":%q,"value":1,"tags":{"expected_response":"true","group":"","method":%q,"name":%q,"proto":"HTTP/1.1","scenario":"default","status":"200","url":%q}}}`+"\n",
			r.sent.UTC().Format(time.RFC3339Nano), r.method, r.url, r.url)
	}
	k6file := filepath.Join(dir, "run.json")
	if err := os.WriteFile(k6file, []byte(k6.String()), 0o644); err != nil {
		t.Fatal(err)
	}

	code, out, stderr := runCLI(t, "report", "--k6", k6file, "--by", "name", "--format", "json", cpu)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep struct {
		Rows []struct {
			Values []string `json:"values"`
			Req    int64    `json:"requests"`
			Est    float64  `json:"cpu_per_request_ms"`
			Low    float64  `json:"cpu_per_request_ms_low"`
			High   float64  `json:"cpu_per_request_ms_high"`
		} `json:"rows"`
		Unmatched []any    `json:"unmatched_names"`
		Notes     []string `json:"notes"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	const wordNote = "with a word where the route has a wildcard"
	if slices.ContainsFunc(rep.Notes, func(n string) bool { return strings.Contains(n, wordNote) }) {
		t.Errorf("every route has its label, yet a note says some may not: %q", rep.Notes)
	}
	type got struct {
		req            int64
		est, low, high float64
	}
	rows := map[string]got{}
	for _, r := range rep.Rows {
		rows[r.Values[0]] = got{r.Req, r.Est, r.Low, r.High}
	}
	if len(rep.Unmatched) != 0 {
		t.Errorf("unmatched names: %v", rep.Unmatched)
	}
	base := rows["GET /cart/{id}"]
	for _, r := range routes {
		g, ok := rows[r.label]
		if !ok || g.req != int64(r.n) {
			t.Errorf("route %q: row %v, want %d requests:\n%s", r.label, g, r.n, out)
			continue
		}
		// The cost ratio to GET /cart/{id} lies between the ratios of the
		// intervals' ends.
		ratio := float64(r.units)
		if base.low <= 0 || g.low/base.high > ratio || g.high/base.low < ratio {
			t.Errorf("%s %.3f ms (%.3f–%.3f) / GET /cart/{id} %.3f ms (%.3f–%.3f): intervals exclude %v", r.label, g.est, g.low, g.high, base.est, base.low, base.high, ratio)
		}
		t.Logf("%-22s %4d requests %.3f ms (%.3f–%.3f)", r.label, g.req, g.est, g.low, g.high)
	}

	// GET /cart/new as a route that used no sampled CPU: no label names
	// it, so its requests count under GET /cart/{id}, and a note says so.
	p, err := profile.ParseData(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	p.Sample = slices.DeleteFunc(p.Sample, func(s *profile.Sample) bool { return slices.Contains(s.Label["k6_name"], "GET /cart/new") })
	unsampled := filepath.Join(dir, "unsampled.pb.gz")
	f, err := os.Create(unsampled)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Write(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	code, out, stderr = runCLI(t, "report", "--k6", k6file, "--by", "name", "--format", "json", unsampled)
	rep.Notes = nil
	if err := json.Unmarshal([]byte(out), &rep); code != exitOK || err != nil {
		t.Fatalf("exit %d, %v: %s\n%s", code, err, stderr, out)
	}
	want := "GET " + srv.URL + "/cart/new (100 requests) under GET /cart/{id}"
	if !slices.ContainsFunc(rep.Notes, func(n string) bool { return strings.Contains(n, wordNote) && strings.Contains(n, want) }) {
		t.Errorf("no note says that %q may be a route of its own: %q", want, rep.Notes)
	}

	code, out, stderr = runCLI(t, "diff", "--base-profile", cpu, "--base-k6", k6file, "--profile", cpu, "--k6", k6file, "--by", "name")
	if code != exitOK || !strings.Contains(out, "GET /cart/new") || !strings.Contains(out, "/item/:id") {
		t.Errorf("diff of the run with itself: exit %d: %s\n%s", code, stderr, out)
	}
}
