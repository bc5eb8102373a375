package report_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/k6labels/k6labels/cmd/k6labels/k6results"
	"github.com/k6labels/k6labels/cmd/k6labels/output"
	"github.com/k6labels/k6labels/cmd/k6labels/pprofsource"
	"github.com/k6labels/k6labels/cmd/k6labels/report"
)

// k6JSON reads k6 json results of perName[name] http_reqs of scenario s.
func k6JSON(t *testing.T, perName map[string]int) *k6results.Results {
	t.Helper()
	var b strings.Builder
	for name, n := range perName {
		for range n {
			fmt.Fprintf(&b, `{"metric":"http_reqs","type":"Point","data":{"time":"2026-12-02T18:15:54Z","value":1,"tags":{"name":%q,"scenario":"s"}}}`+"\n", name)
		}
	}
	k := readK6(t, b.String())
	return k
}

// TestDiffFailAboveFromZero: a route with no sample before (0 in 1000
// requests) and 100 after is worse beyond noise with no finite change;
// --fail-above fails on it at any threshold, the text says so, and the
// json has no NaN or Inf.
func TestDiffFailAboveFromZero(t *testing.T) {
	lab := func(name string) map[string]string {
		return map[string]string{"k6_test_run_id": "r1", "k6_scenario": "s", "k6_name": name}
	}
	k := k6JSON(t, map[string]int{"http://h:1/a": 1000, "http://h:1/health": 1000})
	mk := func(healthSamples int64) *report.Report {
		ss := []sample{{labels: lab("http://h:1/a"), n: 1000}}
		if healthSamples > 0 {
			ss = append(ss, sample{labels: lab("http://h:1/health"), n: healthSamples})
		}
		src, err := pprofsource.New("cpu", buildProfile(ss...))
		if err != nil {
			t.Fatal(err)
		}
		r := newReport(t, src, k)
		return r
	}
	d, err := report.NewDiff(mk(0), mk(100), report.DiffOptions{Normalize: "none"})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, r := range d.Regressions(1e9) {
		keys = append(keys, strings.Join(r.By, ",")+"="+r.Key)
	}
	if want := []string{"k6_name=/health", "k6_scenario,k6_name=s /health"}; strings.Join(keys, "; ") != strings.Join(want, "; ") {
		t.Errorf("--fail-above 1e11%%: regressions %q, want %q (0 → 1 ms per request, beyond noise)", keys, want)
	}
	var text, js bytes.Buffer
	if err := output.WriteDiff(&text, d, output.Text); err != nil {
		t.Fatal(err)
	}
	if want := "k6_name=/health: no CPU before, 1.000 ms/request after: above any --fail-above"; !strings.Contains(text.String(), want) {
		t.Errorf("text output does not say %q:\n%s", want, text.String())
	}
	if err := output.WriteDiff(&js, d, output.JSON); err != nil {
		t.Fatalf("json: %v", err)
	}
	var j struct {
		Rows []map[string]any `json:"rows"`
	}
	if err := json.Unmarshal(js.Bytes(), &j); err != nil {
		t.Fatal(err)
	}
	for _, r := range j.Rows {
		if r["key"] == "/health" {
			if _, ok := r["normalized_change"]; ok || r["verdict"] != "worse" {
				t.Errorf("json row /health: %v; want verdict worse and no normalized_change", r)
			}
		}
	}
}
