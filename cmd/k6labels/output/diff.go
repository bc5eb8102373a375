package output

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/k6labels/k6labels/cmd/k6labels/report"
	"github.com/k6labels/k6labels/cmd/k6labels/texttab"
)

// Write writes the diff in format f.
func (d diffOut) Write(w io.Writer, f Format) error {
	if f == JSON {
		return writeJSON(w, d.jsonDiff())
	}
	sticky := &texttab.Sticky{W: w}
	w = sticky
	d.writeHeader(w, f)
	d.writeTables(w, f)
	worse := d.writeWorse(w, f)
	for _, dr := range d.Rows {
		if dr.Verdict == report.MixChange {
			between, each := "scenarios (names)", "scenario"
			if s := d.QueryShift(dr.Key); s != nil && s.Explains && slices.Equal(dr.By, report.ByName) || dr.QueryMix {
				between, each = "query strings", "query string"
			}
			itemf(w, f, "%s=%s: %s, which the shift of its requests between %s explains (%s with each %s's CPU per request unchanged): a mix change, not a costlier request.",
				strings.Join(dr.By, ","), dr.Key, report.Change(dr.Normalized), between, report.Change(dr.Mix), each)
		}
	}
	d.writeInconclusive(w, f, worse)
	d.writeLinks(w, f)
	for _, n := range d.Notes {
		itemf(w, f, "Note: %s.", n)
	}
	return sticky.Err
}

// writeHeader writes the runs compared and how the rows are tested.
func (d diffOut) writeHeader(w io.Writer, f Format) {
	heading(w, f, 2, "k6labels diff: "+d.Measure()+", before → after")
	itemf(w, f, "before: %s, %s%s", d.Before.Source, d.Before.RunName("every test run"), report.Elapsed(d.Before))
	itemf(w, f, "after:  %s, %s%s", d.After.Source, d.After.RunName("every test run"), report.Elapsed(d.After))
	for _, r := range []struct {
		side string
		r    *report.Report
	}{{"before", d.Before}, {"after", d.After}} {
		if l := r.r.AlignLine(); l != "" {
			itemf(w, f, "%s: %s", r.side, l)
		}
	}
	if d.MatchName {
		itemf(w, f, "Rows are matched by their full k6_name.")
	} else {
		itemf(w, f, "Rows are matched by URL path: k6_name holds scheme://host:port, which may differ between runs (--match name to match full names).")
	}
	for _, warn := range d.Warnings {
		itemf(w, f, "WARNING: %s.", warn)
	}
	switch {
	case d.Normalize == "uniform":
		itemf(w, f, "Machine speed: every row's change is divided by the common change of the other rows (%s over all).", report.Change(d.Speed-1))
	case strings.HasPrefix(d.Normalize, "none"):
		if d.PerRequest && len(d.Warnings) == 0 {
			itemf(w, f, "Changes are not normalized for machine speed (raw = normalized).")
		}
	default:
		itemf(w, f, "Machine speed: the same work cost %s after (%s); \"normalized\" divides by it.",
			report.Change(d.Speed-1), describeNormalize(d.Normalize))
	}
	itemf(w, f, "%s", d.TestLegend())
	itemf(w, f, "\"detectable\": the smallest change the test would see in the row with 80%% power; a row within noise that could not see %s is inconclusive, not same.", report.Change(d.Detect))
	itemf(w, f, "The 95%% interval is each row's own, not adjusted for the %d rows tested as the verdict is: a row whose interval excludes 0 can still be within noise.", d.Tested)
	fmt.Fprintln(w)
}

// writeTables writes one table of rows per grouping.
func (d diffOut) writeTables(w io.Writer, f Format) {
	var groups []report.Grouping
	for _, dr := range d.Rows {
		if !slices.ContainsFunc(groups, func(g report.Grouping) bool { return slices.Equal(g, dr.By) }) {
			groups = append(groups, dr.By)
		}
	}
	for _, g := range groups {
		t := texttab.New(report.GroupTitle(g), "before", "after", "raw", "normalized", "95% interval", "detectable", "verdict")
		for _, dr := range d.Rows {
			if slices.Equal(dr.By, g) {
				t.Add(d.cells(&dr)...)
			}
		}
		writeTable(w, f, t)
	}
}

// cells returns the cells of dr's line in its grouping's table.
func (d diffOut) cells(dr *report.DiffRow) []string {
	cells := []string{dr.Key}
	if dr.Before != nil && dr.After != nil && dr.Verdict != report.InOverflow {
		cells = append(cells, d.Value(dr.BeforeValue), d.Value(dr.AfterValue), report.Change(dr.Raw), report.Change(dr.Normalized))
	} else {
		cells = append(cells, "", "", "", "")
	}
	interval := ""
	if !math.IsNaN(dr.Low) {
		interval = report.Change(dr.Low) + " … " + report.Change(dr.High)
	}
	detect := ""
	switch {
	case math.IsInf(dr.Detectable, 1):
		detect = "more runs"
	case !math.IsNaN(dr.Detectable):
		detect = "±" + strings.TrimPrefix(report.Change(dr.Detectable), "+")
	}
	return append(cells, interval, detect, dr.Verdict)
}

// writeWorse writes the rows that got costlier with the functions that
// grew in them, and tells whether there was one.
func (d diffOut) writeWorse(w io.Writer, f Format) bool {
	worse := false
	for _, dr := range d.Rows {
		if dr.Verdict != report.Worse {
			continue
		}
		if !worse {
			heading(w, f, 3, "Rows that got costlier, and the functions whose self CPU per request grew most")
			worse = true
		}
		if math.IsInf(dr.Normalized, 1) {
			fmt.Fprintf(w, "%s=%s: no CPU before, %s %s after: above any --fail-above\n", strings.Join(dr.By, ","), dr.Key, d.Value(dr.AfterValue), d.Measure())
		} else {
			fmt.Fprintf(w, "%s=%s: %s normalized (%s raw)\n", strings.Join(dr.By, ","), dr.Key, report.Change(dr.Normalized), report.Change(dr.Raw))
		}
		if slices.Equal(dr.By, report.ByName) && d.QueryShift(dr.Key) != nil {
			fmt.Fprintln(w, "  its query-string mix changed too: this may be the mix, not a costlier request (see the note below)")
		}
		if f == Markdown {
			fmt.Fprintln(w)
		}
		t := texttab.New("function", "before", "after", "growth")
		for _, fc := range dr.Grew {
			t.Add(fc.Name, d.Value(fc.Before), d.Value(fc.After), d.Value(fc.After-fc.Before))
		}
		writeTable(w, f, t)
	}
	return worse
}

// writeInconclusive writes the verdict line when no row got worse, and
// the rows the diff cannot vouch for.
func (d diffOut) writeInconclusive(w io.Writer, f Format, worse bool) {
	inconclusive, untested := d.Inconclusive(), d.Untested()
	if !worse {
		if len(inconclusive)+len(untested) > 0 {
			fmt.Fprintln(w, "No row got costlier beyond noise, but the diff cannot vouch for every row:")
		} else {
			fmt.Fprintln(w, "No row got costlier beyond noise.")
		}
		fmt.Fprintln(w)
	}
	if len(inconclusive) > 0 {
		heading(w, f, 3, "Inconclusive rows: within noise, but a change of "+report.Change(d.Detect)+" could have been too")
		for _, dr := range inconclusive {
			itemf(w, f, "%s=%s: %s; %s.", strings.Join(dr.By, ","), dr.Key, d.seen(&dr), d.TestableAfter(&dr))
		}
		fmt.Fprintln(w)
	}
	if len(untested) > 0 {
		heading(w, f, 3, "Untested rows: CPU without k6 requests on one side")
		for _, dr := range untested {
			itemf(w, f, "%s=%s: %s.", strings.Join(dr.By, ","), dr.Key, d.UntestedWhy(&dr))
		}
		fmt.Fprintln(w)
	}
}

func describeNormalize(m string) string {
	switch m {
	case "median":
		return "the mean change of the k6_name rows near their median, --normalize median, the default; each row's factor is made without it"
	case "total":
		return "the change of the run's k6-labelled CPU per request, --normalize total; each row's factor is made without its own CPU"
	}
	return "the change of the control row " + strings.TrimPrefix(m, "row:") + ", --normalize " + m
}

// The json output of a diff (--format json), documented in
// docs/report.md. Field names are stable, as for reports. Changes are
// fractions (0.3 = +30%); values absent where they cannot be computed.
type (
	// jsonDiff is the whole diff.
	jsonDiff struct {
		Version    int           `json:"version"`      // 1
		Measure    string        `json:"measure"`      // cpu_per_request_ms, or share_of_k6 without k6 results for both runs
		Before     jsonDiffSide  `json:"before"`       // the base run
		After      jsonDiffSide  `json:"after"`        // the new run
		MatchBy    string        `json:"match_by"`     // url_path (default) or name: how k6_name rows are matched
		Normalize  string        `json:"normalize"`    // method used: median, total, row:KEY, none, or "none (too few rows for median)"
		Speed      float64       `json:"speed_factor"` // machine-speed factor (after / before for the same work); 1 without normalization
		Alpha      float64       `json:"alpha"`        // family-wise false alarm rate of the test
		Tested     int           `json:"rows_tested"`  // rows in the test family
		RunSD      float64       `json:"run_sd"`       // σ of the between-run spread used (per run, log scale)
		Detect     float64       `json:"detect"`       // the change a "same" verdict vouches for
		Uniform    *jsonShift    `json:"uniform_change,omitempty"`
		Warnings   []string      `json:"warnings"`  // why the answer is weaker than asked
		Runs       [2]int        `json:"runs"`      // runs before and after
		Test       string        `json:"test"`      // pooled, or rank (several runs per side)
		Rows       []jsonDiffRow `json:"rows"`      // grouping by grouping
		Notes      []string      `json:"notes"`     // remarks the text output shows as "Note:"
		Regression bool          `json:"any_worse"` // some row's verdict is worse
	}
	// jsonDiffSide is one run of the diff.
	jsonDiffSide struct {
		Source    string `json:"source"`                              // where its profiles came from
		TestRunID string `json:"test_run_id,omitempty"`               // its k6_test_run_id
		Requests  *int64 `json:"requests,omitempty"`                  // its http_reqs; absent without k6 results
		Outside   int64  `json:"requests_outside_profiles,omitempty"` // k6 requests made outside its profiles' time span, not counted
	}
	// jsonDiffRow is one row of both runs.
	jsonDiffRow struct {
		By            []string         `json:"by"`                               // label names of the row
		Key           string           `json:"key"`                              // values joined by " ", k6_name as URL path unless match_by is name
		Before        *float64         `json:"before,omitempty"`                 // measure before (ms per request, or share)
		After         *float64         `json:"after,omitempty"`                  // measure after
		BeforeSamples int64            `json:"before_samples"`                   // samples before
		AfterSamples  int64            `json:"after_samples"`                    // samples after
		Raw           *float64         `json:"raw_change,omitempty"`             // after / before − 1
		Normalized    *float64         `json:"normalized_change,omitempty"`      // (1 + raw) / speed_factor − 1
		Low           *float64         `json:"normalized_change_low,omitempty"`  // 95% interval of normalized_change (per row, not family-adjusted)
		High          *float64         `json:"normalized_change_high,omitempty"` // its upper end
		P             float64          `json:"p_value"`                          // two-sided p-value of no change; 1 if untested
		Beyond        bool             `json:"beyond_noise"`                     // rejected by Holm's procedure at alpha
		Speed         float64          `json:"speed_factor"`                     // the factor this row is divided by (made without it)
		Detectable    *float64         `json:"detectable_change,omitempty"`      // smallest change seen with 80% power
		Longer        *float64         `json:"testable_at_length,omitempty"`     // inconclusive rows: runs this many times as long reach detect; absent when none does
		RunsNeeded    int              `json:"testable_at_runs,omitempty"`       // inconclusive rows of the rank test: runs per side that reach detect
		Mix           *float64         `json:"mix_change,omitempty"`             // for a name row: the change the shift of its requests between scenarios alone makes
		Verdict       string           `json:"verdict"`                          // worse, better, same, inconclusive, mix change, few samples, in _overflow?, reference, only before, only after
		Grew          []jsonFuncChange `json:"functions_grew,omitempty"`         // for worse rows: functions whose self CPU grew most
		GrafanaURL    string           `json:"grafana_url,omitempty"`            // with --grafana: the row's diff flame graph in Grafana Profiles Drilldown
	}
	// jsonShift is every reference row moving together.
	jsonShift struct {
		Change float64 `json:"change"` // the common change
		Low    float64 `json:"low"`    // its 95% interval
		High   float64 `json:"high"`
		Rows   int     `json:"rows"` // rows that moved together
	}
	// jsonFuncChange is a function's self CPU per request (or share) in
	// both runs, after normalized.
	jsonFuncChange struct {
		Function string  `json:"function"` // function name
		Before   float64 `json:"before"`   // ms per request (or share) before
		After    float64 `json:"after"`    // the same after, divided by speed_factor
	}
)

func num(f float64) *float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	return &f
}

func side(r *report.Report) jsonDiffSide {
	s := jsonDiffSide{Source: r.Source, TestRunID: r.RunID, Outside: r.Outside}
	if r.HasRequests {
		n := r.Requests
		s.Requests = &n
	}
	return s
}

func (d diffOut) jsonDiff() jsonDiff {
	j := jsonDiff{Version: 1, Measure: "share_of_k6", Before: side(d.Before), After: side(d.After), MatchBy: "url_path",
		Normalize: d.Normalize, Speed: d.Speed, Alpha: d.Alpha, Tested: d.Tested, RunSD: d.RunSpread, Detect: d.Detect, Runs: d.Runs, Test: "pooled",
		Warnings: append([]string{}, d.Warnings...), Rows: []jsonDiffRow{}, Notes: append([]string{}, d.Notes...)}
	if d.RankTest {
		j.Test = "rank"
	}
	if u := d.Uniform; u != nil {
		j.Uniform = &jsonShift{u.Change, u.Low, u.High, u.Rows}
	}
	if d.PerRequest {
		j.Measure = "cpu_per_request_ms"
	}
	if d.MatchName {
		j.MatchBy = "name"
	}
	for _, dr := range d.Rows {
		jr := jsonDiffRow{By: dr.By, Key: dr.Key, Raw: num(dr.Raw), Normalized: num(dr.Normalized), Low: num(dr.Low), High: num(dr.High),
			P: dr.P, Beyond: dr.Beyond, Verdict: dr.Verdict, Speed: dr.Speed, Detectable: num(dr.Detectable), Mix: num(dr.Mix)}
		if dr.Verdict == report.Inconclusive {
			jr.Longer = num(dr.Longer)
			if d.RankTest {
				jr.RunsNeeded = dr.RunsNeeded
			}
		}
		if dr.Before != nil {
			jr.BeforeSamples = dr.Before.Samples
		}
		if dr.After != nil {
			jr.AfterSamples = dr.After.Samples
		}
		if dr.Before != nil && dr.After != nil {
			jr.Before, jr.After = num(dr.BeforeValue), num(dr.AfterValue)
		}
		for _, fc := range dr.Grew {
			jr.Grew = append(jr.Grew, jsonFuncChange{fc.Name, fc.Before, fc.After})
		}
		jr.GrafanaURL = d.GrafanaURL(&dr)
		j.Regression = j.Regression || dr.Verdict == report.Worse
		j.Rows = append(j.Rows, jr)
	}
	return j
}

// seen says what the test could see in an inconclusive row.
func (d diffOut) seen(dr *report.DiffRow) string {
	if math.IsInf(dr.Detectable, 1) {
		return "with so few runs the rank test cannot reach the level Holm's procedure needs"
	}
	return "the smallest change the test would see is " + report.Change(dr.Detectable)
}
