package report_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/k6labels/k6labels/cmd/k6labels/k6results"
	"github.com/k6labels/k6labels/cmd/k6labels/output"
	"github.com/k6labels/k6labels/cmd/k6labels/pprofsource"
	"github.com/k6labels/k6labels/cmd/k6labels/pyroscope"
	"github.com/k6labels/k6labels/cmd/k6labels/pyrosource"
	"github.com/k6labels/k6labels/cmd/k6labels/report"
)

// localK6 returns k6 results of n requests per name in scenario "default".
func localK6(t *testing.T, n int, names ...string) *k6results.Results {
	t.Helper()
	var b strings.Builder
	for _, name := range names {
		for range n {
			fmt.Fprintf(&b, `{"metric":"http_reqs","type":"Point","data":{"time":"2026-12-02T18:15:54Z","value":1,"tags":{"name":%q,"scenario":"default"}}}`+"\n", name+"?id=1")
		}
	}
	k := readK6(t, b.String())
	return k
}

// localProfile is a local k6 run's profile: k6_scenario and k6_name but no
// k6_test_run_id (k6 sent k6.test_run_id=undefined); /car costs car
// samples, /bike 100, a k6_name without scenario 10, the runtime 20.
func localProfile(car int64) *pprofsource.Source {
	src, err := pprofsource.New("local.pb.gz", buildProfile(
		sample{labels: map[string]string{"k6_scenario": "default", "k6_name": "http://h:1/car"}, n: car},
		sample{labels: map[string]string{"k6_scenario": "default", "k6_name": "http://h:1/bike"}, n: 100},
		sample{labels: map[string]string{"k6_name": "http://h:1/bike"}, n: 10, fn: "main.nameOnly"},
		sample{n: 20, fn: "runtime.gcBgMarkWorker"},
	))
	if err != nil {
		panic(err)
	}
	return src
}

// TestLocalRunReport: a plain local k6 run (no K6_CLOUDRUN_TEST_RUN_ID) is
// one run, reported with its k6 results; only samples without any of the
// three labels count as "(no k6 labels)".
func TestLocalRunReport(t *testing.T) {
	r, err := report.New(t.Context(), localProfile(500), report.Options{K6: localK6(t, 100, "http://h:1/car", "http://h:1/bike")})
	if err != nil {
		t.Fatalf("report of a local k6 run: %v", err)
	}
	if r.RunID != report.LocalRun || r.K6.CPU != 6100*time.Millisecond || r.Unlabelled.CPU != 200*time.Millisecond {
		t.Errorf("run %q, k6 CPU %v, unlabelled %v; want %q, 6.1s, 0.2s", r.RunID, r.K6.CPU, r.Unlabelled.CPU, report.LocalRun)
	}
	if row := r.Row(report.ByRun, report.LocalRun); row == nil || row.CPU != 6100*time.Millisecond || row.Requests != 200 {
		t.Errorf("run row: %+v, want 6.1s and 200 requests", row)
	}
	if row := r.Row(report.ByName, "http://h:1/car"); row == nil || row.CPU != 5*time.Second || row.Requests != 100 || row.PerRequest.Est != 50*time.Millisecond {
		t.Errorf("k6_name row /car: %+v, want 5s, 100 requests, 50ms per request", row)
	}
	if row := r.Row(report.ByName, "http://h:1/bike"); row == nil || row.CPU != 1100*time.Millisecond {
		t.Errorf("k6_name row /bike: %+v, want 1.1s (a sample with k6_name and no scenario is the run's too)", row)
	}
	var cpu int64
	for _, s := range r.Profile().Sample {
		cpu += s.Value[1]
		if len(s.Label) == 0 {
			t.Errorf("the run's profile holds an unlabelled sample: %v", s.Location[0].Line[0].Function.Name)
		}
	}
	if cpu != 6100e6 {
		t.Errorf("the run's profile has %v of CPU, want 6.1s", time.Duration(cpu))
	}
	var out bytes.Buffer
	if err := output.WriteReport(&out, r, output.Text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"CPU by k6 label: local.pb.gz, (local run, no test run id)", "K6_CLOUDRUN_TEST_RUN_ID", "without k6 labels 0.20s"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, out.String())
		}
	}
}

// TestLocalRunBesideNamedRun: with a named run in the same profile, the
// local run is one of the runs to pick with --run-id.
func TestLocalRunBesideNamedRun(t *testing.T) {
	src, err := pprofsource.New("both.pb.gz", buildProfile(
		sample{labels: map[string]string{"k6_test_run_id": "r1", "k6_scenario": "default", "k6_name": "http://h:1/car"}, n: 300},
		sample{labels: map[string]string{"k6_scenario": "default", "k6_name": "http://h:1/car"}, n: 500},
	))
	if err != nil {
		t.Fatal(err)
	}
	k := localK6(t, 100, "http://h:1/car")
	_, err = report.New(t.Context(), src, report.Options{K6: k})
	if !errors.Is(err, report.ErrManyRuns) || !strings.HasPrefix(err.Error(), "several test runs: ") || !strings.Contains(err.Error(), "(local run, no test run id) (5.00s), r1 (3.00s); pass --run-id") {
		t.Errorf("two runs, no --run-id: %v", err)
	}
	r, err := report.New(t.Context(), src, report.Options{K6: k, RunID: report.LocalRun})
	if err != nil {
		t.Fatal(err)
	}
	if row := r.Row(report.ByName, "http://h:1/car"); row == nil || row.CPU != 5*time.Second {
		t.Errorf("local run's /car: %+v, want 5s (not r1's)", row)
	}
}

// TestLocalRunDiff: two local runs, given as two profiles, are compared.
// (1,000 requests a route: with 100, the spread of requests' own CPU alone
// hides a doubling.)
func TestLocalRunDiff(t *testing.T) {
	k := localK6(t, 1000, "http://h:1/car", "http://h:1/bike")
	before, err := report.New(t.Context(), localProfile(500), report.Options{K6: k})
	if err != nil {
		t.Fatal(err)
	}
	after, err := report.New(t.Context(), localProfile(1000), report.Options{K6: k})
	if err != nil {
		t.Fatal(err)
	}
	d, err := report.NewDiff(before, after, report.DiffOptions{Normalize: "none"})
	if err != nil {
		t.Fatal(err)
	}
	var worse []string
	for _, dr := range d.Rows {
		if dr.Verdict == report.Worse {
			worse = append(worse, dr.Key)
		}
	}
	if strings.Join(worse, ";") != "default;/car;default /car" {
		t.Errorf("worse rows %q, want default, /car and default /car", worse)
	}
	var out bytes.Buffer
	if err := output.WriteDiff(&out, d, output.Text); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "before: local.pb.gz, (local run, no test run id)") {
		t.Errorf("the diff does not say the runs are local:\n%s", out.String())
	}
}

// TestPyroscopeLocalRun: on a Pyroscope server, the CPU without a run id is
// split by k6_scenario and then k6_name; the local run is reported with
// k6_test_run_id="" in its row selectors, listed by Runs, and its whole
// profile leaves out the unlabelled samples.
func TestPyroscopeLocalRun(t *testing.T) {
	prof := func(n int64) []byte {
		p := buildProfile(sample{n: n})
		p.SampleType = p.SampleType[1:] // Pyroscope's merged profiles: cpu only
		for _, s := range p.Sample {
			s.Value = s.Value[1:]
		}
		var b bytes.Buffer
		if err := p.WriteUncompressed(&b); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	// Selectors the server knows, and the CPU in 10 ms samples it answers.
	merged := map[string]int64{
		`{service_name="svc",k6_test_run_id="",k6_scenario!=""}`:                                 600,
		`{service_name="svc",k6_test_run_id="",k6_scenario="",k6_name!=""}`:                      10,
		`{service_name="svc",k6_test_run_id="",k6_scenario="default"}`:                           600,
		`{service_name="svc",k6_test_run_id="",k6_name="http://h:1/car"}`:                        500,
		`{service_name="svc",k6_test_run_id="",k6_name="http://h:1/bike"}`:                       110,
		`{service_name="svc",k6_test_run_id="",k6_scenario="default",k6_name="http://h:1/car"}`:  500,
		`{service_name="svc",k6_test_run_id="",k6_scenario="default",k6_name="http://h:1/bike"}`: 100,
	}
	series := map[string]string{
		`{service_name="svc"} [k6_test_run_id]`: `{"series":[{"points":[{"value":6.3e9,"timestamp":"1796234565000"}]}]}`,
		`{service_name="svc",k6_test_run_id=""} [k6_scenario]`: `{"series":[{"labels":[{"name":"k6_scenario","value":"default"}],"points":[{"value":6e9,"timestamp":"1796234565000"}]},` +
			`{"points":[{"value":3e8,"timestamp":"1796234580000"}]}]}`,
		`{service_name="svc",k6_test_run_id="",k6_scenario=""} [k6_name]`: `{"series":[{"labels":[{"name":"k6_name","value":"http://h:1/bike"}],"points":[{"value":1e8,"timestamp":"1796234595000"}]},` +
			`{"points":[{"value":2e8,"timestamp":"1796234580000"}]}]}`,
		// The rows' CPU: one query per grouping, the local run's selector.
		`{service_name="svc",k6_test_run_id=""} [k6_name]`: `{"series":[{"labels":[{"name":"k6_name","value":"http://h:1/car"}],"points":[{"value":5e9,"timestamp":"1796234565000"}]},` +
			`{"labels":[{"name":"k6_name","value":"http://h:1/bike"}],"points":[{"value":1.1e9,"timestamp":"1796234565000"}]},` +
			`{"points":[{"value":2e8,"timestamp":"1796234580000"}]}]}`,
		`{service_name="svc",k6_test_run_id=""} [k6_scenario","k6_name]`: `{"series":[` +
			`{"labels":[{"name":"k6_scenario","value":"default"},{"name":"k6_name","value":"http://h:1/car"}],"points":[{"value":5e9,"timestamp":"1796234565000"}]},` +
			`{"labels":[{"name":"k6_scenario","value":"default"},{"name":"k6_name","value":"http://h:1/bike"}],"points":[{"value":1e9,"timestamp":"1796234565000"}]},` +
			`{"points":[{"value":3e8,"timestamp":"1796234580000"}]}]}`,
	}
	var mu sync.Mutex
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.HasSuffix(r.URL.Path, "/SelectSeries"):
			for k, v := range series {
				sel, group, _ := strings.Cut(k, " ")
				if bytes.Contains(body, []byte(fmt.Sprintf("%q", sel))) && bytes.Contains(body, []byte(`"group_by":`+strings.ReplaceAll(strings.ReplaceAll(group, "[", `["`), "]", `"]`))) {
					fmt.Fprint(w, v)
					return
				}
			}
			t.Errorf("SelectSeries not expected: %s", body)
			http.Error(w, "no", http.StatusNotFound)
		case strings.HasSuffix(r.URL.Path, "/LabelValues"):
			if bytes.Contains(body, []byte(`"k6_name"`)) {
				fmt.Fprint(w, `{"names":["http://h:1/bike","http://h:1/car"]}`)
			} else {
				fmt.Fprint(w, `{"names":["default"]}`)
			}
		case strings.HasSuffix(r.URL.Path, "/SelectMergeProfile"):
			for sel, n := range merged {
				if bytes.Contains(body, []byte(sel)) {
					mu.Lock()
					asked = append(asked, sel)
					mu.Unlock()
					w.Header().Set("Content-Type", "application/proto")
					w.Write(prof(n))
					return
				}
			}
			t.Errorf("SelectMergeProfile not expected: %q", body)
			http.Error(w, "no", http.StatusNotFound)
		default:
			http.Error(w, "no", http.StatusNotFound)
		}
	}))
	defer srv.Close()
	c, err := pyroscope.NewClient(srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	end := time.Date(2026, 12, 2, 18, 16, 30, 0, time.UTC)
	src := pyrosource.New(c, srv.URL, "svc", end.Add(-time.Hour), end)

	runs, err := src.Runs(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].ID != report.LocalRun || runs[0].CPU != 6100*time.Millisecond || runs[0].Last.Sub(runs[0].First) != 30*time.Second {
		t.Errorf("runs: %+v, want the local run, 6.1s, points 30s apart", runs)
	}
	r, err := report.New(t.Context(), src, report.Options{K6: localK6(t, 100, "http://h:1/car", "http://h:1/bike")})
	if err != nil {
		t.Fatalf("report of a local run on Pyroscope: %v", err)
	}
	if r.RunID != report.LocalRun || r.Unlabelled.CPU != 200*time.Millisecond {
		t.Errorf("run %q, unlabelled %v; want %q, 0.2s", r.RunID, r.Unlabelled.CPU, report.LocalRun)
	}
	if row := r.Row(report.ByName, "http://h:1/car"); row == nil || row.CPU != 5*time.Second || row.Requests != 100 {
		t.Errorf("k6_name row /car: %+v, want 5s and 100 requests", row)
	}
	var cpu int64
	for _, s := range r.Profile().Sample {
		cpu += s.Value[0]
	}
	if cpu != 6100e6 {
		t.Errorf("the run's profile has %v of CPU, want 6.1s (with a scenario; with a name only)", time.Duration(cpu))
	}
}
