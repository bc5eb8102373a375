package report_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/k6labels/k6labels/cmd/k6labels/output"
	"github.com/k6labels/k6labels/cmd/k6labels/pprofsource"
	"github.com/k6labels/k6labels/cmd/k6labels/report"
)

// overflowReport is a report of one labelled name, /users/0 (100 samples),
// and k6 names /users/1..3 past the middleware's cap, whose overflow
// samples (k6_name=_overflow) are given; 100 requests each.
func overflowReport(t *testing.T, overflow int64) *report.Report {
	t.Helper()
	p := buildProfile(
		sample{labels: map[string]string{"k6_test_run_id": "r1", "k6_scenario": "s", "k6_name": "http://h:1/users/0"}, n: 100},
		sample{labels: map[string]string{"k6_test_run_id": "r1", "k6_scenario": "s", "k6_name": "_overflow"}, n: overflow},
	)
	src, err := pprofsource.New("cpu.pb.gz", p)
	if err != nil {
		t.Fatal(err)
	}
	var k6 strings.Builder
	for i := range 4 {
		for range 100 {
			fmt.Fprintf(&k6, `{"metric":"http_reqs","type":"Point","data":{"time":"2026-12-02T18:15:54Z","value":1,"tags":{"name":"http://h:1/users/%d","scenario":"s"}}}`+"\n", i)
		}
	}
	k := readK6(t, k6.String())
	r := newReport(t, src, k)
	return r
}

// TestOverflowNamesHaveNoPerRequest: names past WithMaxValuesPerLabel are
// labelled _overflow, so their own rows hold none of their CPU; while
// _overflow has CPU those rows get no CPU per request, and a note says why
// and what to do.
func TestOverflowNamesHaveNoPerRequest(t *testing.T) {
	r := overflowReport(t, 300)
	for _, row := range []*report.Row{r.Row(report.ByName, "http://h:1/users/1"), r.Row(report.ByScenarioName, "s", "http://h:1/users/1")} {
		if row == nil || !row.InOverflow || row.PerRequest != (report.Interval{}) || row.Requests != 100 {
			t.Errorf("row of a name past the cap: %+v, want InOverflow, 100 requests, no CPU per request", row)
		}
	}
	for _, row := range []*report.Row{r.Row(report.ByName, "http://h:1/users/0"), r.Row(report.ByName, "_overflow"), r.Row(report.ByScenario, "s")} {
		if row == nil || row.InOverflow {
			t.Errorf("row with a label of its own: %+v, want it not InOverflow", row)
		}
	}
	if row := r.Row(report.ByName, "http://h:1/users/0"); row == nil || row.PerRequest.Est != 10*time.Millisecond {
		t.Errorf("/users/0: %+v, want 10 ms per request", row)
	}
	if len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "k6_name=_overflow holds 3.00s") ||
		!strings.Contains(r.Notes[0], "WithMaxValuesPerLabel") || !strings.Contains(r.Notes[0], "tags.name") {
		t.Errorf("notes %q, want one on _overflow, WithMaxValuesPerLabel and tags.name", r.Notes)
	}
	var text, js bytes.Buffer
	if err := output.WriteReport(&text, r, output.Text); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^  http://h:1/users/1 +0\.00s .* 100 +in _overflow\?$`).Match(text.Bytes()) {
		t.Errorf("the text report does not mark /users/1:\n%s", text.String())
	}
	if err := output.WriteReport(&js, r, output.JSON); err != nil {
		t.Fatal(err)
	}
	var j struct {
		Rows []struct {
			Values     []string
			PerRequest *float64 `json:"cpu_per_request_ms"`
			InOverflow bool     `json:"possibly_in_overflow"`
		}
	}
	if err := json.Unmarshal(js.Bytes(), &j); err != nil {
		t.Fatal(err)
	}
	for _, row := range j.Rows {
		if strings.HasSuffix(strings.Join(row.Values, " "), "/users/2") && (!row.InOverflow || row.PerRequest != nil) {
			t.Errorf("json row %q: possibly_in_overflow %v, cpu_per_request_ms %v", row.Values, row.InOverflow, row.PerRequest)
		}
	}
}

// TestOverflowWithoutCPU: an _overflow value without CPU marks nothing.
func TestOverflowWithoutCPU(t *testing.T) {
	r := overflowReport(t, 0)
	if row := r.Row(report.ByName, "http://h:1/users/1"); row == nil || row.InOverflow || row.PerRequest.High == 0 || len(r.Notes) != 0 {
		t.Errorf("/users/1 %+v, notes %q: want an interval and no note", row, r.Notes)
	}
}

// TestDiffLeavesOverflowRowsOut: a row InOverflow on either side is not
// tested (verdict "in _overflow?"), whatever its sample counts.
func TestDiffLeavesOverflowRowsOut(t *testing.T) {
	d, err := report.NewDiff(overflowReport(t, 300), overflowReport(t, 600), report.DiffOptions{Normalize: "none"})
	if err != nil {
		t.Fatal(err)
	}
	tested := 0
	for _, dr := range d.Rows {
		over := strings.Contains(dr.Key, "/users/1") || strings.Contains(dr.Key, "/users/2") || strings.Contains(dr.Key, "/users/3")
		if over != (dr.Verdict == report.InOverflow) {
			t.Errorf("row %s: verdict %q", dr.Key, dr.Verdict)
		}
		if dr.Verdict == report.Worse || dr.Verdict == report.Better || dr.Verdict == report.Same || dr.Verdict == report.Inconclusive {
			tested++
		}
	}
	if tested != d.Tested || tested == 0 {
		t.Errorf("%d rows tested, Tested %d", tested, d.Tested)
	}
	var out bytes.Buffer
	if err := output.WriteDiff(&out, d, output.Text); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^  /users/1 +in _overflow\?$`).Match(out.Bytes()) {
		t.Errorf("the diff does not show /users/1 as in _overflow?:\n%s", out.String())
	}
}
