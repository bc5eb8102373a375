package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/k6labels/k6labels/cmd/k6labels/internal/fixture"
	"github.com/k6labels/k6labels/cmd/k6labels/k6results"
	"github.com/k6labels/k6labels/cmd/k6labels/pyroscope/pyroscopetest"
)

// The recorded exchanges asked service rideshare.k6labels about this window
// (1796234535000–1796234640000 ms); the command is given it with --start and
// --end so that its queries are the recorded ones.
var pyrWindow = []string{"--start", "2026-12-02T18:02:15Z", "--end", "2026-12-02T18:04:00Z"}

const pyrService = "rideshare.k6labels"

// pyrServer starts the replay server of the recorded exchanges, and of the
// two that split the CPU without a run id (unlabelled or a local run).
func pyrServer(t *testing.T) (*pyroscopetest.Server, []pyroscopetest.Exchange, string) {
	t.Helper()
	fx := fixture.Dir(t)
	xs, err := pyroscopetest.Load(filepath.Join(fx, "pyroscope"))
	if err != nil {
		t.Fatal(err)
	}
	srv := pyroscopetest.NewServer(t, xs)
	// Not recorded: the series without k6_test_run_id grouped by
	// k6_scenario, then those without k6_scenario grouped by k6_name. The
	// series without a label in 05, 06 and 07 are the same points: the
	// samples without a run id carry no k6 label, so each answer is that
	// one series, without labels.
	for _, x := range xs {
		if !strings.HasPrefix(x.Name, "07-") {
			continue
		}
		for _, q := range []struct{ selector, label string }{
			{`k6_test_run_id=\"\"`, "k6_scenario"},
			{`k6_test_run_id=\"\",k6_scenario=\"\"`, "k6_name"},
		} {
			y := x
			y.Name = "07 without a run id, grouped by " + q.label
			y.Body = bytes.Replace(y.Body, []byte(`rideshare.k6labels\"}`), []byte(`rideshare.k6labels\",`+q.selector+`}`), 1)
			y.Body = bytes.Replace(y.Body, []byte(`"group_by":["k6_test_run_id"]`), []byte(`"group_by":["`+q.label+`"]`), 1)
			var resp struct{ Series []map[string]json.RawMessage }
			if err := json.Unmarshal(x.Response, &resp); err != nil {
				t.Fatal(err)
			}
			for _, ser := range resp.Series {
				if ser["labels"] == nil {
					y.Response = []byte(`{"series":[{"points":` + string(ser["points"]) + `}]}`)
				}
			}
			srv.Add(y)
		}
		// Not recorded: the series without any of the three labels, which
		// a report of one run asks for its "no k6 labels" CPU: the same
		// one series again.
		y := x
		y.Name = "07 without any k6 label"
		y.Body = bytes.Replace(y.Body, []byte(`rideshare.k6labels\"}`), []byte(`rideshare.k6labels\",k6_test_run_id=\"\",k6_scenario=\"\",k6_name=\"\"}`), 1)
		y.Body = bytes.Replace(y.Body, []byte(`,"group_by":["k6_test_run_id"]`), nil, 1)
		var resp struct{ Series []map[string]json.RawMessage }
		if err := json.Unmarshal(x.Response, &resp); err != nil {
			t.Fatal(err)
		}
		for _, ser := range resp.Series {
			if ser["labels"] == nil {
				y.Response = []byte(`{"series":[{"points":` + string(ser["points"]) + `}]}`)
			}
		}
		srv.Add(y)
	}
	return srv, xs, fx
}

// pyrRun runs the command and returns its exit code, stdout and stderr.
func pyrRun(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func pyrArgs(cmd, url string, rest ...string) []string {
	args := append([]string{cmd, "--pyroscope", url, "--service", pyrService}, pyrWindow...)
	return append(args, rest...)
}

// README figures of the fixtures (CPU seconds of the merged profile of each
// selector; http_reqs of k6's json, name without its query string).
type pyrRow struct {
	cpu      float64
	requests int64
}

var pyrReadme = map[string]map[string]pyrRow{
	"fx1": {
		"rush_hour": {17.66, 2479 + 1240}, "off_peak": {6.11, 1184 + 1185 + 1185},
		"http://127.0.0.1:18080/car": {13.44, 2479}, "http://127.0.0.1:18080/scooter": {8.31, 1185 + 1240},
		"http://127.0.0.1:18080/bike": {2.02, 1185}, "http://127.0.0.1:18080/": {0, 1184},
	},
	"fx2": {
		"rush_hour": {17.06, 2340 + 1170}, "off_peak": {6.03, 1153 + 1154 + 1154},
		"http://127.0.0.1:18080/car": {12.76, 2340}, "http://127.0.0.1:18080/scooter": {8.46, 1154 + 1170},
		"http://127.0.0.1:18080/bike": {1.86, 1154}, "http://127.0.0.1:18080/": {0.01, 1153},
	},
}

var pyrTotals = map[string]float64{"fx1": 23.77, "fx2": 23.09}

func pyrClose(a, b float64) bool { return math.Abs(a-b) < 1e-9*math.Max(1, math.Abs(b)) }

// TestPyroscopeReport runs report against the replay server with each
// run's k6 results and checks every row against the README's figures.
func TestPyroscopeReport(t *testing.T) {
	t.Parallel() // no CPU profile, environment or global of the package
	for _, id := range []string{"fx1", "fx2"} {
		t.Run(id, func(t *testing.T) {
			srv, _, fx := pyrServer(t)
			k6 := filepath.Join(fx, "k6", "run-"+id+".json.gz")
			code, out, errOut := pyrRun(t, pyrArgs("report", srv.URL, "--k6", k6, "--run-id", id, "--by", "run,scenario,name", "--format", "json")...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			if errOut != "" {
				t.Errorf("stderr is not a terminal, yet: %q", errOut)
			}
			var rep struct {
				TestRunID    string  `json:"test_run_id"`
				CPUSeconds   float64 `json:"cpu_seconds"`
				K6CPUSeconds float64 `json:"k6_cpu_seconds"`
				Unlabelled   float64 `json:"unlabelled_cpu_seconds"`
				Requests     int64   `json:"requests"`
				Rows         []struct {
					By       []string                    `json:"by"`
					Values   []string                    `json:"values"`
					CPU      float64                     `json:"cpu_seconds"`
					Samples  int64                       `json:"samples"`
					Requests int64                       `json:"requests"`
					PerReq   *float64                    `json:"cpu_per_request_ms"`
					Low      *float64                    `json:"cpu_per_request_ms_low"`
					High     *float64                    `json:"cpu_per_request_ms_high"`
					Top      []struct{ Function string } `json:"top"`
				} `json:"rows"`
			}
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if rep.TestRunID != id || !pyrClose(rep.K6CPUSeconds, pyrTotals[id]) || !pyrClose(rep.Unlabelled, 1.03) ||
				!pyrClose(rep.CPUSeconds, pyrTotals[id]+1.03) || // the other run is left out
				rep.Requests != map[string]int64{"fx1": 7273, "fx2": 6971}[id] {
				t.Errorf("header: run %q, k6 CPU %v (README %v), unlabelled %v (1.03), all %v, requests %d",
					rep.TestRunID, rep.K6CPUSeconds, pyrTotals[id], rep.Unlabelled, rep.CPUSeconds, rep.Requests)
			}
			seen := 0
			for _, r := range rep.Rows {
				if r.By[0] == "k6_test_run_id" {
					continue
				}
				want, ok := pyrReadme[id][r.Values[0]]
				if !ok {
					t.Errorf("row %v: not in the README", r.Values)
					continue
				}
				seen++
				if !pyrClose(r.CPU, want.cpu) || r.Requests != want.requests || r.Samples != int64(math.Round(want.cpu*100)) {
					t.Errorf("row %v: %v s in %d samples, %d requests; README %v s, %d requests", r.Values, r.CPU, r.Samples, r.Requests, want.cpu, want.requests)
				}
				if want.cpu > 0 {
					if perReq := want.cpu * 1000 / float64(want.requests); r.PerReq == nil || math.Abs(*r.PerReq-perReq) > 1e-6 ||
						*r.Low >= perReq || *r.High <= perReq {
						t.Errorf("row %v: per request %v [%v, %v] ms, README %.3f", r.Values, r.PerReq, r.Low, r.High, perReq)
					}
				}
				if r.By[0] == "k6_scenario" && (len(r.Top) == 0 || !strings.Contains(r.Top[0].Function, "findNearestVehicle")) {
					t.Errorf("scenario %v: top functions %+v, want main.findNearestVehicle first", r.Values, r.Top)
				}
			}
			if seen != 6 {
				t.Errorf("%d scenario and name rows, want 6", seen)
			}
		})
	}
}

// TestPyroscopeReportText checks the text table of the same query names
// the source and the CPU per request of /car (README: 5.422 ms).
func TestPyroscopeReportText(t *testing.T) {
	srv, _, fx := pyrServer(t)
	code, out, errOut := pyrRun(t, pyrArgs("report", srv.URL, "--k6", filepath.Join(fx, "k6", "run-fx1.json.gz"), "--run-id", "fx1", "--by", "name")...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"Pyroscope " + srv.URL + " service " + pyrService, "http://127.0.0.1:18080/car", "5.42"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestPyroscopeDiff compares the two recorded no-change runs: nothing is
// flagged by --fail-above 10%, the raw changes per name are the README's,
// and the merged profiles are written.
func TestPyroscopeDiff(t *testing.T) {
	t.Parallel() // no CPU profile, environment or global of the package
	srv, _, fx := pyrServer(t)
	dir := t.TempDir()
	code, out, errOut := pyrRun(t, pyrArgs("diff", srv.URL,
		"--base-k6", filepath.Join(fx, "k6", "run-fx1.json.gz"), "--base-run-id", "fx1",
		"--k6", filepath.Join(fx, "k6", "run-fx2.json.gz"), "--run-id", "fx2",
		"--by", "scenario,name", "--fail-above", "10%", "--allow-inconclusive", "--format", "json", "--write-profiles", filepath.Join(dir, "d"))...)
	if code != exitOK {
		t.Fatalf("exit %d (want 0: a no-change pair): %s\n%s", code, errOut, out)
	}
	var d struct {
		Measure string `json:"measure"`
		Rows    []struct {
			By      []string `json:"by"`
			Key     string   `json:"key"`
			Before  *float64 `json:"before"`
			After   *float64 `json:"after"`
			Raw     *float64 `json:"raw_change"`
			Verdict string   `json:"verdict"`
		} `json:"rows"`
		Any bool `json:"any_worse"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if d.Measure != "cpu_per_request_ms" || d.Any {
		t.Errorf("measure %q, any_worse %v", d.Measure, d.Any)
	}
	checked := 0
	for _, r := range d.Rows {
		if r.By[0] != "k6_name" || r.Key == "/" {
			continue
		}
		b, a := pyrReadme["fx1"]["http://127.0.0.1:18080"+r.Key], pyrReadme["fx2"]["http://127.0.0.1:18080"+r.Key]
		before, after := b.cpu*1000/float64(b.requests), a.cpu*1000/float64(a.requests)
		if r.Before == nil || r.After == nil || r.Raw == nil || math.Abs(*r.Before-before) > 1e-6 || math.Abs(*r.After-after) > 1e-6 ||
			math.Abs(*r.Raw-(after/before-1)) > 1e-6 {
			t.Errorf("%s: %v → %v (raw %v); README %.3f → %.3f", r.Key, r.Before, r.After, r.Raw, before, after)
		}
		checked++
	}
	if checked != 3 {
		t.Errorf("%d name rows checked (by URL path: /car, /scooter, /bike), want 3:\n%s", checked, out)
	}
	// Pyroscope's profiles carry no labels, so no -tagfocus: the files are
	// the worst row's own merged profiles, one row of the README in each run.
	var totals [2]float64
	for i, f := range []string{"d.before.pb.gz", "d.after.pb.gz"} {
		fh, err := os.Open(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		p, err := profile.Parse(fh)
		fh.Close()
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, s := range p.Sample {
			totals[i] += float64(s.Value[0]) / 1e9
		}
	}
	found := false
	for key, b := range pyrReadme["fx1"] {
		if pyrClose(totals[0], b.cpu) && pyrClose(totals[1], pyrReadme["fx2"][key].cpu) {
			found = true
		}
	}
	if !found || strings.Contains(errOut, "-tagfocus") {
		t.Errorf("written profiles hold %.2f s and %.2f s: no row of the README; stderr %q", totals[0], totals[1], errOut)
	}
	if !strings.Contains(errOut, "go tool pprof -http=localhost:0 -diff_base=") {
		t.Errorf("stderr lacks the pprof command: %q", errOut)
	}
}

// TestPyroscopeRuns lists the recorded runs in json and text.
func TestPyroscopeRuns(t *testing.T) {
	srv, _, _ := pyrServer(t)
	code, out, errOut := pyrRun(t, pyrArgs("runs", srv.URL, "--format", "json")...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got struct {
		Runs []struct {
			ID    string    `json:"test_run_id"`
			First time.Time `json:"first_point"`
			Last  time.Time `json:"last_point"`
			CPU   float64   `json:"cpu_seconds"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// README: fx1 one point at 1796234565000; fx2 at 1796234565000 and 1796234595000.
	want := []struct {
		id          string
		first, last int64
		cpu         float64
	}{{"fx1", 1796234565000, 1796234565000, 23.77}, {"fx2", 1796234565000, 1796234595000, 23.09}}
	if len(got.Runs) != len(want) {
		t.Fatalf("runs %+v, want fx1, fx2", got.Runs)
	}
	for i, w := range want {
		r := got.Runs[i]
		if r.ID != w.id || r.First.UnixMilli() != w.first || r.Last.UnixMilli() != w.last || !pyrClose(r.CPU, w.cpu) {
			t.Errorf("run %d: %+v, want %+v", i, r, w)
		}
	}
	code, out, errOut = pyrRun(t, pyrArgs("runs", srv.URL)...)
	if code != exitOK || !strings.Contains(out, "fx1") || !strings.Contains(out, "2026-12-02T18:03:15Z") || !strings.Contains(out, "23.09") {
		t.Errorf("text: exit %d\n%s%s", code, out, errOut)
	}
}

// TestPyroscopeErrors: what the user reads when the server is down, the
// service unknown, the run id wrong or not given.
func TestPyroscopeErrors(t *testing.T) {
	down := fixture.ClosedURL(t)
	srv, xs, fx := pyrServer(t)
	k6 := pyrHead(t, filepath.Join(fx, "k6", "run-fx1.json.gz"), 2000)

	// Not recorded: SelectSeries grouped by k6_test_run_id and the service
	// list. The first answers {} as the recorded unknown-service
	// SelectSeries (14) does; the second has the shape of 02's answer.
	var x14 pyroscopetest.Exchange
	for _, x := range xs {
		if strings.HasPrefix(x.Name, "14-") {
			x14 = x
		}
	}
	x14.Name = "14 grouped by k6_test_run_id"
	x14.Body = bytes.Replace(x14.Body, []byte(`"group_by":["k6_scenario"]`), []byte(`"group_by":["k6_test_run_id"]`), 1)
	srv.Add(x14)
	srv.Add(pyroscopetest.Exchange{Name: "service names", Method: "POST", Path: "/querier.v1.QuerierService/LabelValues", ContentType: "application/json",
		Body:   []byte(`{"name":"service_name","start":1796234535000,"end":1796234640000}`),
		Status: 200, Header: x14.Header, Response: []byte(`{"names":["rideshare.k6labels"]}`)})

	for _, tc := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"unreachable", []string{"report", "--pyroscope", down, "--service", pyrService, "--k6", k6}, exitError,
			[]string{"unreachable", down, "connection refused", "check --pyroscope"}},
		{"unreachable runs", []string{"runs", "--pyroscope", down, "--service", pyrService}, exitError,
			[]string{"unreachable", down, "check --pyroscope"}},
		{"unknown service", []string{"report", "--pyroscope", srv.URL, "--service", "no-such-service", "--k6", k6, pyrWindow[0], pyrWindow[1], pyrWindow[2], pyrWindow[3]}, exitError,
			[]string{"no data", `"no-such-service"`, "services there: rideshare.k6labels (--service)"}},
		{"unknown service runs", []string{"runs", "--pyroscope", srv.URL, "--service", "no-such-service", pyrWindow[0], pyrWindow[1], pyrWindow[2], pyrWindow[3]}, exitError,
			[]string{"no data", "services there: rideshare.k6labels"}},
		{"two runs, no --run-id", pyrArgs("report", srv.URL, "--k6", k6), exitError,
			[]string{"2 test runs", "fx1 (23.77s)", "fx2 (23.09s)", "--run-id"}},
		{"wrong --run-id", pyrArgs("report", srv.URL, "--k6", k6, "--run-id", "fx3"), exitError,
			[]string{`k6_test_run_id="fx3"`, "fx1 (23.77s), fx2 (23.09s)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := pyrRun(t, tc.args...)
			t.Log(errOut)
			if code != tc.code {
				t.Errorf("exit %d, want %d\n%s%s", code, tc.code, out, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut)
				}
			}
		})
	}
}

// pyrHead writes the first n lines of a gzip k6 json file to a plain file:
// real points, parsed faster than the whole run.
func pyrHead(t *testing.T, path string, n int) string {
	t.Helper()
	sc := fixture.Lines(t, path)
	var b bytes.Buffer
	for i := 0; i < n && sc.Scan(); i++ {
		b.Write(sc.Bytes())
		b.WriteByte('\n')
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "head.json")
	if err := os.WriteFile(out, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestPyroscopeWindowFromK6: without --start the window is k6's time range
// widened by --margin (30 s), which holds fx1's profile, stamped at
// 1796234560.9 s before the run began (README); the run's exact window
// (exchange 37) finds nothing.
func TestPyroscopeWindowFromK6(t *testing.T) {
	fx := fixture.Dir(t)
	k, err := k6results.ReadFile(pyrHead(t, filepath.Join(fx, "k6", "run-fx1.json.gz"), 2000)) // its first points: the run's start
	if err != nil {
		t.Fatal(err)
	}
	c := newCommon("report", "", "", &bytes.Buffer{})
	c.pyroscopeFlags()
	c.runFlags()
	if err := c.parse([]string{"--pyroscope", "http://127.0.0.1:1", "--service", pyrService}); err != nil {
		t.Fatal(err)
	}
	start, end, err := c.window(k)
	if err != nil {
		t.Fatal(err)
	}
	stamp := time.UnixMilli(1796234560900)
	if !start.Before(stamp) || k.Start.Before(stamp) || end.Sub(k.End) != 30*time.Second {
		t.Errorf("window %s – %s for k6 %s – %s: want it to hold the profile stamped %s and end 30s after",
			start.UTC().Format(time.RFC3339Nano), end.UTC().Format(time.RFC3339Nano), k.Start.UTC().Format(time.RFC3339Nano), k.End.UTC().Format(time.RFC3339Nano), stamp.UTC().Format(time.RFC3339Nano))
	}
}
