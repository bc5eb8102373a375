package report_test

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/k6labels/k6labels/cmd/k6labels/internal/fixture"
	"github.com/k6labels/k6labels/cmd/k6labels/k6results"
	"github.com/k6labels/k6labels/cmd/k6labels/pprofsource"
	"github.com/k6labels/k6labels/cmd/k6labels/pyroscope/pyroscopetest"
	"github.com/k6labels/k6labels/cmd/k6labels/report"
)

// The real fixtures: k6 v2.2.0 runs against the demo service, its CPU
// profiles read from /debug/pprof/profile (local/) or a real Pyroscope v2
// server (k6/, profiles/, pyroscope/). Their README lists the figures
// checked here.

// fxBase is the demo service's address in the fixtures' k6 names.
const fxBase = "http://127.0.0.1:18080"

// fxProfile decodes a fixture profile file (gzip or not) with
// profile.ParseData.
func fxProfile(t testing.TB, rel string) *profile.Profile {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixture.Dir(t), rel))
	if err != nil {
		t.Fatal(err)
	}
	p, err := profile.ParseData(b)
	if err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
	return p
}

// fxK6Cache holds the fixture k6 results read so far: reading them is
// the slow part of these tests under the race detector.
var fxK6Cache sync.Map

// fxK6 reads fixture k6 results with the k6results package, once per
// file; the results are only read by the tests.
func fxK6(t testing.TB, rel string) *k6results.Results {
	t.Helper()
	if k, ok := fxK6Cache.Load(rel); ok {
		return k.(*k6results.Results)
	}
	k, err := k6results.ReadFile(filepath.Join(fixture.Dir(t), rel))
	if err != nil {
		t.Fatal(err)
	}
	fxK6Cache.Store(rel, k)
	return k
}

// fx4Report is the report of the local/ run: its real labelled CPU profile
// and its k6 json results.
func fx4Report(t testing.TB, opts report.Options) *report.Report {
	t.Helper()
	src, err := pprofsource.New("fx4.cpu.pb.gz", fxProfile(t, "local/fx4.cpu.pb.gz"))
	if err != nil {
		t.Fatal(err)
	}
	opts.K6 = fxK6(t, "local/run-fx4.json.gz")
	r, err := report.New(context.Background(), src, opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// fxPyroscope is a [report.Source] that answers from the merged profiles a
// real Pyroscope server returned (pyroscope/NN-*.response.pb), looked up by
// the selector each was asked with. It is not the Pyroscope client: it
// stands for the server's answers so that the report and the diff run on
// real merged profiles without labels, one profile per row.
type fxPyroscope struct {
	t     testing.TB
	dir   string
	once  sync.Once
	byKey map[string]pyroscopetest.Exchange
}

// fxSelector reads a Pyroscope selector's matchers ({name="value", ...}).
var fxSelector = regexp.MustCompile(`(\w+)="([^"]*)"`)

// merged returns the recorded merged profile of a selector (matchers as
// name=value, sorted, joined by ","; service_name left out): the response
// of the SelectMergeProfile exchange whose protobuf request asked for it.
func (s *fxPyroscope) merged(key string) *profile.Profile {
	s.t.Helper()
	s.once.Do(func() {
		xs, err := pyroscopetest.Load(filepath.Join(s.dir, "pyroscope"))
		if err != nil {
			s.t.Fatal(err)
		}
		s.byKey = map[string]pyroscopetest.Exchange{}
		for _, x := range xs {
			sel, ok := x.MergeSelector()
			if !ok {
				continue
			}
			var ms []string
			for _, m := range fxSelector.FindAllStringSubmatch(sel, -1) {
				if m[1] != "service_name" {
					ms = append(ms, m[1]+"="+m[2])
				}
			}
			slices.Sort(ms)
			// The first in name order: 37 asks again for fx1, over the
			// run's exact window instead of the recording's.
			if k := strings.Join(ms, ","); s.byKey[k].Name == "" {
				s.byKey[k] = x
			}
		}
	})
	x, ok := s.byKey[key]
	if !ok {
		s.t.Fatalf("no recorded exchange for the selector %s", key)
	}
	p, err := profile.ParseData(x.Response)
	if err != nil {
		s.t.Fatalf("%s: %v", x.Name, err)
	}
	return p
}

func (s *fxPyroscope) String() string { return "recorded Pyroscope service rideshare.k6labels" }

// Totals sums the run profiles and the unlabelled one, as SelectSeries
// grouped by k6_test_run_id does.
func (s *fxPyroscope) Totals(context.Context) (map[string]report.Count, error) {
	out := map[string]report.Count{}
	for _, id := range []string{"", "fx1", "fx2"} {
		cpu := cpuSum(s.merged("k6_test_run_id=" + id))
		out[id] = report.Count{CPU: cpu, Samples: int64(cpu / (10 * time.Millisecond))}
	}
	return out, nil
}

// Values answers from the recorded LabelValues exchanges 03 and 04.
func (s *fxPyroscope) Values(_ context.Context, label string) ([]string, error) {
	file := map[string]string{report.LabelScenario: "03-label-values-k6_scenario", report.LabelName: "04-label-values-k6_name"}[label]
	b, err := os.ReadFile(filepath.Join(s.dir, "pyroscope", file+".response.json"))
	if err != nil {
		return nil, err
	}
	var v struct{ Names []string }
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	return v.Names, nil
}

// Profile returns the recorded merged profile of the matchers' selector.
func (s *fxPyroscope) Profile(_ context.Context, match []report.Matcher) (*profile.Profile, error) {
	var parts []string
	for _, m := range match {
		parts = append(parts, m.Name+"="+m.Value)
	}
	slices.Sort(parts)
	return s.merged(strings.Join(parts, ",")), nil
}

// Split returns, for each value of g's one label, the recorded merged
// profile of the scope's selector with that value.
func (s *fxPyroscope) Split(ctx context.Context, g report.Grouping, scope []report.Matcher) (map[string]report.Part, error) {
	if len(g) != 1 {
		s.t.Fatalf("no recording splits by %s", g)
	}
	vals, err := s.Values(ctx, g[0])
	if err != nil {
		return nil, err
	}
	out := map[string]report.Part{}
	for _, v := range vals {
		p, err := s.Profile(ctx, append(slices.Clone(scope), report.Matcher{Name: g[0], Value: v}))
		if err != nil {
			return nil, err
		}
		if len(p.Sample) > 0 {
			out[report.TupleKey([]string{v})] = report.Part{Profile: p}
		}
	}
	return out, nil
}

// fxPyroscopeReport is the report of run id (fx1 or fx2) from the recorded
// Pyroscope answers and the run's k6 json; scenario and name rows (the
// recording has no scenario × name selectors).
func fxPyroscopeReport(t testing.TB, id string) *report.Report {
	t.Helper()
	r, err := report.New(context.Background(), &fxPyroscope{t: t, dir: fixture.Dir(t)}, report.Options{
		By: []report.Grouping{report.ByRun, report.ByScenario, report.ByName}, RunID: id,
		K6: fxK6(t, "k6/run-"+id+".json.gz"),
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// cpuSum sums the cpu/nanoseconds sample values of p.
func cpuSum(p *profile.Profile) time.Duration {
	i := slices.IndexFunc(p.SampleType, func(st *profile.ValueType) bool { return st.Type == "cpu" })
	if i < 0 {
		return 0
	}
	var sum int64
	for _, s := range p.Sample {
		sum += s.Value[i]
	}
	return time.Duration(sum)
}

// near reports whether got is within tol of want.
func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol }

// TestFixtureLocalRun checks the report of the local/ run against values
// computed here from the same files another way (the profile's samples
// summed by label, http_reqs lines counted), and against the README.
func TestFixtureLocalRun(t *testing.T) {
	r := fx4Report(t, report.Options{})
	p := fxProfile(t, "local/fx4.cpu.pb.gz")
	reqs, _, _ := fixture.CountHTTPReqs(t, filepath.Join(fixture.Dir(t), "local/run-fx4.json.gz"))

	// Independent sums: cpu sample values by label values.
	ci := slices.IndexFunc(p.SampleType, func(st *profile.ValueType) bool { return st.Type == "cpu" })
	cpuBy := map[string]time.Duration{}
	var total, unlabelled time.Duration
	for _, s := range p.Sample {
		v := time.Duration(s.Value[ci])
		total += v
		lab := func(k string) string {
			if len(s.Label[k]) == 0 {
				return ""
			}
			return s.Label[k][0]
		}
		if lab(report.LabelRunID) == "" {
			unlabelled += v
			continue
		}
		cpuBy["run "+lab(report.LabelRunID)] += v
		cpuBy["scenario "+lab(report.LabelScenario)] += v
		cpuBy["name "+lab(report.LabelName)] += v
		cpuBy["pair "+lab(report.LabelScenario)+" "+lab(report.LabelName)] += v
	}
	if r.Total.CPU != total || r.Unlabelled.CPU != unlabelled {
		t.Errorf("total %v, unlabelled %v; summed here %v, %v", r.Total.CPU, r.Unlabelled.CPU, total, unlabelled)
	}
	if r.RunID != "fx4" || r.K6.CPU != cpuBy["run fx4"] {
		t.Errorf("run %q with %v of CPU; summed here fx4 %v", r.RunID, r.K6.CPU, cpuBy["run fx4"])
	}
	reqBy := map[string]int64{}
	var allReqs int64
	for k, n := range reqs {
		reqBy["scenario "+k.Scenario] += n
		reqBy["name "+k.Name] += n
		reqBy["pair "+k.Scenario+" "+k.Name] += n
		allReqs += n
	}
	if r.Requests != allReqs {
		t.Errorf("requests %d, counted here %d", r.Requests, allReqs)
	}
	prefix := map[string]string{"k6_scenario": "scenario", "k6_name": "name", "k6_scenario,k6_name": "pair"}
	rows := 0
	for _, row := range r.Rows {
		if row.By.String() == report.LabelRunID {
			continue
		}
		rows++
		key := prefix[row.By.String()] + " " + row.Key()
		if row.CPU != cpuBy[key] || row.Requests != reqBy[key] {
			t.Errorf("%s: %v in %d requests; here %v in %d", key, row.CPU, row.Requests, cpuBy[key], reqBy[key])
		}
		if row.Requests > 0 {
			want := float64(cpuBy[key]) / float64(reqBy[key])
			if !near(float64(row.PerRequest.Est), want, 1) {
				t.Errorf("%s: %v per request, here %v", key, row.PerRequest.Est, time.Duration(want))
			}
			if row.PerRequest.Low > row.PerRequest.Est || row.PerRequest.High < row.PerRequest.Est {
				t.Errorf("%s: interval %v–%v does not hold %v", key, row.PerRequest.Low, row.PerRequest.High, row.PerRequest.Est)
			}
		}
	}
	// 2 scenarios + 4 names + 5 scenario × name pairs.
	if rows != 11 {
		t.Errorf("%d rows, want 11", rows)
	}

	// The README's figures (seconds to 0.01, ms to 0.01).
	for _, c := range []struct {
		g      report.Grouping
		values []string
		reqs   int64
		cpu    float64
		perReq float64 // ms; 0: not listed
	}{
		{report.ByName, []string{fxBase + "/car"}, 3316, 17.24, 5.20},
		{report.ByName, []string{fxBase + "/scooter"}, 1658 + 1597, 11.78, 3.62},
		{report.ByName, []string{fxBase + "/bike"}, 1597, 2.45, 1.53},
		{report.ByName, []string{fxBase + "/"}, 1596, 0.01, 0},
		{report.ByScenarioName, []string{"rush_hour", fxBase + "/scooter"}, 1658, -1, 0},
		{report.ByScenarioName, []string{"off_peak", fxBase + "/scooter"}, 1597, -1, 0},
		{report.ByScenario, []string{"rush_hour"}, 4974, 22.90, 0},
		{report.ByScenario, []string{"off_peak"}, 4790, 8.58, 0},
	} {
		row := r.Row(c.g, c.values...)
		if row == nil {
			t.Errorf("no row %s=%v", c.g, c.values)
			continue
		}
		if row.Requests != c.reqs || (c.cpu >= 0 && !near(row.CPU.Seconds(), c.cpu, 0.005)) {
			t.Errorf("%s=%v: %d requests, %.3fs; README %d, %.2fs", c.g, c.values, row.Requests, row.CPU.Seconds(), c.reqs, c.cpu)
		}
		if c.perReq > 0 && !near(float64(row.PerRequest.Est)/1e6, c.perReq, 0.005) {
			t.Errorf("%s=%v: %.3f ms per request, README %.2f", c.g, c.values, float64(row.PerRequest.Est)/1e6, c.perReq)
		}
	}
	if r.Requests != 9764 || !near(r.Total.CPU.Seconds(), 32.16, 0.005) || !near(r.Unlabelled.CPU.Seconds(), 0.68, 0.005) {
		t.Errorf("%d requests, %.3fs total, %.3fs unlabelled; README 9764, 32.16s, 0.68s", r.Requests, r.Total.CPU.Seconds(), r.Unlabelled.CPU.Seconds())
	}
	if len(r.Unmatched) != 0 {
		t.Errorf("unmatched names %v: every k6 name has a label in this run", r.Unmatched)
	}
}

// TestFixturePyroscopeRuns checks the reports of fx1 and fx2, made from
// the merged profiles a real Pyroscope server returned, against the
// README's CPU, request and CPU-per-request figures.
func TestFixturePyroscopeRuns(t *testing.T) {
	type fig struct {
		reqs   int64
		cpu    float64 // s
		perReq float64 // ms
	}
	want := map[string]map[string]fig{
		"fx1": {"/car": {2479, 13.44, 5.422}, "/scooter": {2425, 8.31, 3.427}, "/bike": {1185, 2.02, 1.705}, "/": {1184, 0, 0},
			"rush_hour": {2479 + 1240, 17.66, 0}, "off_peak": {1184 + 1185 + 1185, 6.11, 0}},
		"fx2": {"/car": {2340, 12.76, 5.453}, "/scooter": {2324, 8.46, 3.640}, "/bike": {1154, 1.86, 1.612}, "/": {1153, 0.01, 0.009},
			"rush_hour": {2340 + 1170, 17.06, 0}, "off_peak": {1153 + 1154 + 1154, 6.03, 0}},
	}
	runCPU := map[string]float64{"fx1": 23.77, "fx2": 23.09}
	for _, id := range []string{"fx1", "fx2"} {
		r := fxPyroscopeReport(t, id)
		if !near(r.K6.CPU.Seconds(), runCPU[id], 0.005) || !near(r.Unlabelled.CPU.Seconds(), 1.03, 0.005) {
			t.Errorf("%s: run CPU %.3fs, unlabelled %.3fs; README %.2fs, 1.03s", id, r.K6.CPU.Seconds(), r.Unlabelled.CPU.Seconds(), runCPU[id])
		}
		for key, f := range want[id] {
			row := r.Row(report.ByScenario, key)
			if strings.HasPrefix(key, "/") {
				row = r.Row(report.ByName, fxBase+key)
			}
			if row == nil {
				t.Errorf("%s: no row %s", id, key)
				continue
			}
			if row.Requests != f.reqs || !near(row.CPU.Seconds(), f.cpu, 0.005) {
				t.Errorf("%s %s: %d requests, %.3fs; README %d, %.2fs", id, key, row.Requests, row.CPU.Seconds(), f.reqs, f.cpu)
			}
			if f.perReq > 0 && !near(float64(row.PerRequest.Est)/1e6, f.perReq, 0.0005) {
				t.Errorf("%s %s: %.4f ms per request, README %.3f", id, key, float64(row.PerRequest.Est)/1e6, f.perReq)
			}
		}
		// Share of the k6-labelled CPU by scenario (README: 74.3%, 73.9%).
		share := map[string]float64{"fx1": 0.743, "fx2": 0.739}[id]
		if got := r.Row(report.ByScenario, "rush_hour").OfK6; !near(got, share, 0.0005) {
			t.Errorf("%s: rush_hour %.2f%% of k6 CPU, README %.1f%%", id, 100*got, 100*share)
		}
	}
}

// TestFixtureNoChangeDiff: fx1 and fx2 are two runs of the same build; the
// diff of their real Pyroscope profiles flags no row.
func TestFixtureNoChangeDiff(t *testing.T) {
	d, err := report.NewDiff(fxPyroscopeReport(t, "fx1"), fxPyroscopeReport(t, "fx2"), report.DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Tested < 5 {
		t.Errorf("%d rows tested, want the 2 scenarios and 3 routes with samples", d.Tested)
	}
	for _, dr := range d.Rows {
		if dr.Verdict == report.Worse || dr.Verdict == report.Better || dr.Beyond {
			t.Errorf("%s=%s flagged %s (%+.1f%%, p=%.3g)", dr.By, dr.Key, dr.Verdict, 100*dr.Normalized, dr.P)
		}
	}
	if regs := d.Regressions(0.10); len(regs) != 0 {
		t.Errorf("--fail-above 10%% would fail on %v", regs)
	}
	// /scooter: +6.2% per request between the runs (README 3.427 → 3.640 ms).
	for _, dr := range d.Rows {
		if dr.Key == "/scooter" && !near(dr.Raw, 3.640/3.427-1, 0.001) {
			t.Errorf("/scooter raw change %+.2f%%, README %+.2f%%", 100*dr.Raw, 100*(3.640/3.427-1))
		}
	}
}

// TestFixtureCSV: the report from k6's csv output of the local/ run has the
// same requests in every row as from its json, and the same time range to
// the second (k6 writes whole seconds in csv).
func TestFixtureCSV(t *testing.T) {
	js := fx4Report(t, report.Options{})
	src, err := pprofsource.New("fx4.cpu.pb.gz", fxProfile(t, "local/fx4.cpu.pb.gz"))
	if err != nil {
		t.Fatal(err)
	}
	cs, err := report.New(t.Context(), src, report.Options{K6: fxK6(t, "local/run-fx4.csv.gz")})
	if err != nil {
		t.Fatal(err)
	}
	if len(cs.Rows) != len(js.Rows) || cs.Requests != js.Requests {
		t.Fatalf("csv: %d rows, %d requests; json: %d rows, %d requests", len(cs.Rows), cs.Requests, len(js.Rows), js.Requests)
	}
	for i, row := range cs.Rows {
		if want := js.Rows[i]; row.Key() != want.Key() || row.Requests != want.Requests || row.PerRequest != want.PerRequest {
			t.Errorf("csv row %s: %d requests, %v; json row %s: %d, %v", row.Key(), row.Requests, row.PerRequest, want.Key(), want.Requests, want.PerRequest)
		}
	}
	if cs.Start.Unix() != js.Start.Unix() || cs.End.Unix() != js.End.Unix() {
		t.Errorf("csv range %s – %s, json %s – %s", cs.Start, cs.End, js.Start, js.End)
	}
}
