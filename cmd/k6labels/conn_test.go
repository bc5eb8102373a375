package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/k6labels/k6labels"
	"github.com/k6labels/k6labels/cmd/k6labels/pyroscope/pyroscopetest"
	"github.com/k6labels/k6labels/cmd/k6labels/report"
)

// TestConnectionGoroutines: a labelled handler calls a backend on
// 127.0.0.1 with a plain shared http.Client (no NewTransport): the
// connection's readLoop and writeLoop goroutines start inside the request
// and keep its labels. Later unlabelled uploads on that connection burn
// CPU in writeLoop. In the real profile those samples carry the request's
// k6 labels; the report counts them in the row "(connection goroutines
// started in a request)", in no k6 row, and names the fix.
func TestConnectionGoroutines(t *testing.T) {
	checkConnCase(t, recordConnRun(t))
}

// connRun is a recorded run of a connection case: its CPU profile, its k6
// json results, and the labelled CPU in the connection's goroutines (conn)
// and in request work, counted from the profile's stacks.
type connRun struct {
	profile    []byte
	k6         string
	conn, work time.Duration
}

// recordConnRun records the run that TestConnectionGoroutines describes
// (recordConnCase, with net/http's persistConn loops as the roots).
func recordConnRun(t *testing.T) connRun {
	t.Helper()
	roots := []string{"net/http.(*persistConn).writeLoop", "net/http.(*persistConn).readLoop"}
	return recordConnCase(t, roots, func(t *testing.T) connCase {
		backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
		}))
		shared := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1, MaxIdleConnsPerHost: 1}}
		var sink uint64
		return connCase{
			handler: func(w http.ResponseWriter, r *http.Request) {
				sink += burnUnits(2, uint64(len(r.URL.RawQuery)))
				resp, err := shared.Get(backend.URL + "/stock")
				if err != nil {
					http.Error(w, err.Error(), http.StatusBadGateway)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			},
			traffic: func(t *testing.T, checkout func(int)) {
				checkout(0) // dials the shared connection inside a labelled request
				body := bytes.Repeat([]byte("x"), 4<<20)
				for i := range 150 { // unlabelled uploads on that connection
					resp, err := shared.Post(backend.URL+"/upload", "application/octet-stream", bytes.NewReader(body))
					if err != nil {
						t.Fatal(err)
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if i%10 == 0 {
						checkout(i + 1)
					}
				}
			},
			close: func() {
				shared.CloseIdleConnections()
				backend.Close()
			},
		}
	})
}

// connCase is one run of a client whose connection goroutines start in a
// labelled request: handler serves the k6 requests, traffic makes the
// other requests, calling checkout now and then for a labelled one, and
// close frees what the case holds.
type connCase struct {
	handler http.HandlerFunc
	traffic func(t *testing.T, checkout func(i int))
	close   func()
}

// recordConnCase records a real CPU profile of a case that newCase makes
// (a new one for each try): k6-style requests with baggage reach the case's
// handler through k6labels.LabelsFromBaggageHandler. The ground truth is
// counted from the profile: labelled samples of goroutines whose bottom
// three frames hold one of roots are the connection's, the other labelled
// ones are request work. It tries up to three times to get 50ms of CPU in
// the connection's goroutines, which a loaded machine may not give.
func recordConnCase(t *testing.T, roots []string, newCase func(t *testing.T) connCase) connRun {
	t.Helper()
	var run connRun
	for try := range 3 {
		run = recordConnOnce(t, roots, newCase(t))
		if run.conn >= 50*time.Millisecond && run.work > 0 { // with no request work, no k6 row to report
			return run
		}
		t.Logf("try %d: only %s of labelled CPU in the connection's goroutines", try+1, run.conn)
	}
	t.Fatalf("only %s of labelled CPU in the connection's goroutines: the profile shows nothing to test", run.conn)
	return run
}

func recordConnOnce(t *testing.T, roots []string, c connCase) connRun {
	t.Helper()
	defer c.close()
	front := httptest.NewServer(k6labels.LabelsFromBaggageHandler(c.handler))
	defer front.Close()
	var buf bytes.Buffer
	if err := pprof.StartCPUProfile(&buf); err != nil {
		t.Fatal(err)
	}
	var k6 strings.Builder
	checkout := func(i int) {
		u := fmt.Sprintf("%s/checkout?id=%d", front.URL, i)
		req, _ := http.NewRequest(http.MethodGet, u, nil)
		req.Header.Set("Baggage", "k6.test_run_id=conn,k6.scenario=shop,k6.name="+u)
		fmt.Fprintf(&k6, `{"metric":"http_reqs","type":"Point","data":{"time":%q,"value":1,"tags":{"method":"GET","name":%q,"scenario":"shop"}}}`+"\n",
			time.Now().UTC().Format(time.RFC3339Nano), u)
		resp, err := front.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("checkout: %s: %s", resp.Status, body)
		}
	}
	func() {
		defer pprof.StopCPUProfile()
		c.traffic(t, checkout)
	}()
	p, err := profile.ParseData(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	conn, work := connTruth(p, roots)
	return connRun{profile: buf.Bytes(), k6: k6.String(), conn: conn, work: work}
}

// connTruth returns the CPU of p's k6-labelled samples whose bottom three
// frames hold one of roots (or a function that roots' ".func" prefix
// begins), and that of the other k6-labelled samples.
func connTruth(p *profile.Profile, roots []string) (conn, work time.Duration) {
	for _, s := range p.Sample {
		if len(s.Label["k6_name"]) == 0 {
			continue
		}
		var frames []string
		for _, loc := range s.Location {
			for _, ln := range loc.Line {
				frames = append(frames, ln.Function.Name)
			}
		}
		bottom := frames[max(0, len(frames)-3):]
		if slices.ContainsFunc(bottom, func(f string) bool {
			return slices.ContainsFunc(roots, func(r string) bool {
				return f == r || strings.HasSuffix(r, ".func") && strings.HasPrefix(f, r)
			})
		}) {
			conn += time.Duration(s.Value[1])
		} else {
			work += time.Duration(s.Value[1])
		}
	}
	return conn, work
}

// checkConnCase runs the command on run's profile and k6 results and
// checks the report (checkConnReport), whose note, the CPU being no
// gRPC's, does not send to k6grpc.
func checkConnCase(t *testing.T, run connRun) {
	t.Helper()
	dir := t.TempDir()
	cpu := filepath.Join(dir, "cpu.pb.gz")
	if err := os.WriteFile(cpu, run.profile, 0o644); err != nil {
		t.Fatal(err)
	}
	k6file := filepath.Join(dir, "run.json")
	if err := os.WriteFile(k6file, []byte(run.k6), 0o644); err != nil {
		t.Fatal(err)
	}
	checkConnReport(t, run, "report", "--k6", k6file, "--by", "name", cpu)
	if _, out, _ := runCLI(t, "report", "--format", "json", "--k6", k6file, "--by", "name", cpu); strings.Contains(out, "k6grpc") {
		t.Errorf("the report of connection goroutines that are not gRPC's names k6grpc:\n%s", out)
	}
}

// checkConnReport runs the command with args, in json then as text, and
// checks that the report counts run.conn in the connection goroutines' row,
// run.work in the k6 rows, and names the fix in a note.
func checkConnReport(t *testing.T, run connRun, args ...string) {
	t.Helper()
	conn, work := run.conn, run.work
	code, out, stderr := runCLI(t, append([]string{args[0], "--format", "json"}, args[1:]...)...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep struct {
		Conn float64 `json:"connection_goroutines_cpu_seconds"`
		K6   float64 `json:"k6_cpu_seconds"`
		Rows []struct {
			Values []string `json:"values"`
			CPU    float64  `json:"cpu_seconds"`
		} `json:"rows"`
		Notes []string `json:"notes"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	var rows float64
	for _, r := range rep.Rows {
		rows += r.CPU
	}
	if math.Abs(rep.Conn-conn.Seconds()) > 1e-9 || math.Abs(rows-work.Seconds()) > 1e-9 || math.Abs(rep.K6-work.Seconds()) > 1e-9 {
		t.Errorf("connection goroutines %.3fs, k6 rows %.3fs, k6 %.3fs; the profile has %.3fs in the connection's loops and %.3fs of request work",
			rep.Conn, rows, rep.K6, conn.Seconds(), work.Seconds())
	}
	if !slices.ContainsFunc(rep.Notes, func(n string) bool { return strings.Contains(n, "k6labels.NewTransport") }) {
		t.Errorf("no note names k6labels.NewTransport: %q", rep.Notes)
	}
	code, out, _ = runCLI(t, args...)
	line := ""
	for l := range strings.Lines(out) {
		if strings.HasPrefix(strings.TrimSpace(l), "(connection goroutines started in a request) ") {
			line = l
		}
	}
	if code != exitOK || !strings.Contains(line, fmt.Sprintf(" %.2fs ", conn.Seconds())) {
		t.Errorf("text output has no row of the connection goroutines:\n%s", out)
	}
	t.Logf("connection goroutines %.3fs, request work %.3fs", conn.Seconds(), work.Seconds())
}

// TestOnlyConnectionGoroutines: a profile whose k6-labelled CPU is all in
// connection goroutines (the requests' own work unsampled) is refused with
// that reason, not as a profile without k6 labels.
func TestOnlyConnectionGoroutines(t *testing.T) {
	run := recordConnRun(t)
	p, err := profile.ParseData(run.profile)
	if err != nil {
		t.Fatal(err)
	}
	p.Sample = slices.DeleteFunc(p.Sample, func(s *profile.Sample) bool {
		return len(s.Label["k6_name"]) > 0 && !report.ConnGoroutine(s)
	})
	file := filepath.Join(t.TempDir(), "conn.pb.gz")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Write(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	code, _, stderr := runCLI(t, "report", file)
	if code != exitError || !strings.Contains(stderr, "ran in connection goroutines that labelled requests started, none in the requests themselves") {
		t.Errorf("exit %d, want %d and the reason: %s", code, exitError, stderr)
	}
	// The same from Pyroscope, whose run totals hold those goroutines.
	srv := pyroscopetest.NewServer(t, nil)
	srv.AddProfile("shop", p)
	code, _, stderr = runCLI(t, "report", "--pyroscope", srv.URL, "--service", "shop", "--wait", "0")
	if code != exitError || !strings.Contains(stderr, "ran in connection goroutines that labelled requests started, none in the requests themselves") {
		t.Errorf("Pyroscope: exit %d, want %d and the reason: %s", code, exitError, stderr)
	}
}
