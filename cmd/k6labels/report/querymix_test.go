package report_test

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/k6labels/k6labels/cmd/k6labels/output"
	"github.com/k6labels/k6labels/cmd/k6labels/pprofsource"
	"github.com/k6labels/k6labels/cmd/k6labels/report"
)

// queryRun is a report of run id: /car requests by query string (mini,
// suv) costing carSamples in all, and 1000 /bike requests costing 500.
func queryRun(t *testing.T, id string, mini, suv int, carSamples int64) *report.Report {
	t.Helper()
	var k6 strings.Builder
	line := func(name string, n int) {
		for range n {
			fmt.Fprintf(&k6, `{"metric":"http_reqs","type":"Point","data":{"time":"2026-12-02T18:02:45Z","value":1,"tags":{"method":"GET","name":%q,"scenario":"s"}}}`+"\n", name)
		}
	}
	line("http://h:1/car?type=mini", mini)
	line("http://h:1/car?type=suv", suv)
	line("http://h:1/bike", 1000)
	lab := func(name string) map[string]string {
		return map[string]string{"k6_test_run_id": id, "k6_scenario": "s", "k6_name": name}
	}
	src, err := pprofsource.New(id+".pb.gz", buildProfile(
		sample{labels: lab("http://h:1/car"), n: carSamples},
		sample{labels: lab("http://h:1/bike"), n: 500, fn: "main.bike"},
	))
	if err != nil {
		t.Fatal(err)
	}
	return newReport(t, src, readK6(t, k6.String()))
}

// TestDiffQueryMix: when /car's requests move from ?type=mini to ?type=suv
// and /car's CPU per request doubles, the diff reports the query-string
// mix change and says the change may be the mix (the gate still fails on
// /car, as on a scenario mix that does not explain a change); the same mix
// within chance, and /bike without query strings, are no finding.
func TestDiffQueryMix(t *testing.T) {
	opts := report.DiffOptions{Normalize: "none", RunSD: -1}
	d, err := report.NewDiff(queryRun(t, "r1", 800, 200, 1000), queryRun(t, "r2", 200, 800, 2000), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.QueryShifts) != 1 {
		t.Fatalf("query shifts %+v, want /car's", d.QueryShifts)
	}
	s := d.QueryShifts[0]
	if s.Key != "/car" || !s.MayBeMix || s.P > 1e-6 || len(s.Moved) != 2 ||
		s.Moved[0] != (report.QueryMove{Query: "type=mini", Before: 0.8, After: 0.2}) {
		t.Errorf("shift %+v", s)
	}
	if len(d.Regressions(0.10)) == 0 {
		t.Error("/car, worse with its mix changed, no longer fails the gate")
	}
	var out bytes.Buffer
	if err := output.WriteDiff(&out, d, output.Text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"its query-string mix changed too: this may be the mix",
		"Note: k6_name=/car: its requests' query-string mix changed beyond chance (chi-square p = ",
		"type=mini 80.0% → 20.0%, type=suv 20.0% → 80.0%; the CPU per request change of this row may be that mix",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the diff lacks %q:\n%s", want, out.String())
		}
	}

	d, err = report.NewDiff(queryRun(t, "r1", 800, 200, 1000), queryRun(t, "r2", 790, 210, 1000), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.QueryShifts) != 0 {
		t.Errorf("a mix within chance reported: %+v", d.QueryShifts)
	}
}

// queryLabelRun is queryRun of a service that keeps query strings in its
// labels (WithQueryStrings): /car?type=mini costs miniCost samples a
// request, /car?type=suv suvCost, each under its own k6_name label.
func queryLabelRun(t *testing.T, id string, mini, suv int, miniCost, suvCost int64) *report.Report {
	t.Helper()
	var k6 strings.Builder
	line := func(name string, n int) {
		for range n {
			fmt.Fprintf(&k6, `{"metric":"http_reqs","type":"Point","data":{"time":"2026-12-02T18:02:45Z","value":1,"tags":{"method":"GET","name":%q,"scenario":"s"}}}`+"\n", name)
		}
	}
	line("http://h:1/car?type=mini", mini)
	line("http://h:1/car?type=suv", suv)
	line("http://h:1/bike", 1000)
	lab := func(name string) map[string]string {
		return map[string]string{"k6_test_run_id": id, "k6_scenario": "s", "k6_name": name}
	}
	src, err := pprofsource.New(id+".pb.gz", buildProfile(
		sample{labels: lab("http://h:1/car?type=mini"), n: int64(mini) * miniCost},
		sample{labels: lab("http://h:1/car?type=suv"), n: int64(suv) * suvCost, fn: "main.suv"},
		sample{labels: lab("http://h:1/bike"), n: 500, fn: "main.bike"},
	))
	if err != nil {
		t.Fatal(err)
	}
	return newReport(t, src, readK6(t, k6.String()))
}

// TestDiffQueryMixExplains: with CPU per query string in the labels, a
// /car change that its requests' move from ?type=mini (1 sample a request)
// to ?type=suv (3) explains is a mix change, not worse, and fails no gate;
// the same mix with suv costlier (5) is worse, the mix explaining none of it.
func TestDiffQueryMixExplains(t *testing.T) {
	opts := report.DiffOptions{Normalize: "none", RunSD: -1}
	car := func(d *report.Diff) *report.DiffRow {
		for i := range d.Rows {
			if dr := &d.Rows[i]; slices.Equal(dr.By, report.ByName) && dr.Key == "/car" {
				return dr
			}
		}
		t.Fatal("no /car row")
		return nil
	}
	d, err := report.NewDiff(queryLabelRun(t, "r1", 800, 200, 1, 3), queryLabelRun(t, "r2", 200, 800, 1, 3), opts)
	if err != nil {
		t.Fatal(err)
	}
	// 1.4 → 2.6 samples a request: +86%, all of it the mix.
	if dr := car(d); dr.Verdict != report.MixChange || math.Abs(dr.Mix-6.0/7) > 1e-9 {
		t.Errorf("/car: %s, mix %+.3f; want a mix change of +86%%", dr.Verdict, dr.Mix)
	}
	if len(d.QueryShifts) != 1 || !d.QueryShifts[0].Explains || d.QueryShifts[0].MayBeMix {
		t.Errorf("query shifts %+v; want /car's, explaining its change", d.QueryShifts)
	} else if n := d.Notes[len(d.Notes)-1]; !strings.Contains(n, "this mix alone changes the row's CPU per request by") {
		t.Errorf("note %q", n)
	}
	if rs := nameRegressions(d); len(rs) != 0 {
		t.Errorf("k6_name regressions %v; want none: the change is the mix", rs)
	}
	var text bytes.Buffer
	if err := output.WriteDiff(&text, d, output.Text); err != nil {
		t.Fatal(err)
	}
	if want := "which the shift of its requests between query strings explains"; !strings.Contains(text.String(), want) {
		t.Errorf("the diff lacks %q:\n%s", want, text.String())
	}
	// The scenario s holds /car and /bike, s × /car is /car's requests:
	// their change is the same mix, and no row fails the gate.
	if rs := d.Regressions(0.10); len(rs) != 0 {
		for _, dr := range rs {
			t.Errorf("%v=%s %s (%+.3f), mix %+.3f: want a mix change, the change is /car's query-string mix", dr.By, dr.Key, dr.Verdict, dr.Normalized, dr.Mix)
		}
	}
	for _, dr := range d.Rows {
		if !slices.Equal(dr.By, report.ByName) && dr.Verdict == report.MixChange && !dr.QueryMix {
			t.Errorf("%v=%s: a mix change not marked as of query strings", dr.By, dr.Key)
		}
	}

	d, err = report.NewDiff(queryLabelRun(t, "r1", 800, 200, 1, 3), queryLabelRun(t, "r2", 800, 200, 1, 5), opts)
	if err != nil {
		t.Fatal(err)
	}
	if dr := car(d); dr.Verdict != report.Worse {
		t.Errorf("/car: %s, mix %+.3f; want worse: suv got costlier, the mix is the same", dr.Verdict, dr.Mix)
	}
	if rs := nameRegressions(d); len(rs) != 1 {
		t.Errorf("k6_name regressions %v; want /car", rs)
	}
	if rs := d.Regressions(0.10); len(rs) != 3 {
		t.Errorf("regressions %d; want /car, s and s × /car", len(rs))
	}
}

// nameRegressions returns the keys of d's k6_name rows that fail a 10%
// gate (the query-string mix is of name rows).
func nameRegressions(d *report.Diff) []string {
	var out []string
	for _, dr := range d.Regressions(0.10) {
		if slices.Equal(dr.By, report.ByName) {
			out = append(out, dr.Key)
		}
	}
	return out
}
