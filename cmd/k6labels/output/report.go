package output

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/k6labels/k6labels"
	"github.com/k6labels/k6labels/cmd/k6labels/report"
	"github.com/k6labels/k6labels/cmd/k6labels/texttab"
)

// Write writes the report in format f.
func (r reportOut) Write(w io.Writer, f Format) error {
	if f == JSON {
		return writeJSON(w, r.jsonReport())
	}
	sticky := &texttab.Sticky{W: w}
	w = sticky
	heading(w, f, 2, fmt.Sprintf("CPU by k6 label: %s, %s", r.Source, r.RunName("every test run in it")))
	itemf(w, f, "%s of CPU in %d samples; the run's k6-labelled CPU %s (%s); without k6 labels %s (%s).",
		report.Secs(r.Total.CPU), r.Total.Samples, report.Secs(r.K6.CPU), report.Pct(report.Ratio(float64(r.K6.CPU), float64(r.Total.CPU))),
		report.Secs(r.Unlabelled.CPU), report.Pct(report.Ratio(float64(r.Unlabelled.CPU), float64(r.Total.CPU))))
	if r.HasRequests {
		itemf(w, f, "k6 results: %d requests from %s to %s (%.1fs).", r.Requests,
			r.Start.UTC().Format(time.RFC3339), r.End.UTC().Format(time.RFC3339), r.End.Sub(r.Start).Seconds())
		if l := r.AlignLine(); l != "" {
			itemf(w, f, "%s", l)
		}
	} else {
		itemf(w, f, "No k6 results given: shares only (pass --k6 FILE for requests and CPU per request).")
	}
	fmt.Fprintln(w)
	var groups []report.Grouping
	for _, row := range r.Rows {
		if !slices.ContainsFunc(groups, func(g report.Grouping) bool { return slices.Equal(g, row.By) }) {
			groups = append(groups, row.By)
		}
	}
	for _, g := range groups {
		t := texttab.New(report.GroupTitle(g), "CPU", "of all", "of k6")
		if r.HasRequests {
			t.Head = append(t.Head, "requests", "ms/request", fmt.Sprintf("%.0f%% interval", 100*r.Confidence))
		}
		for _, row := range r.RowsBy(g) {
			cells := []string{row.Key(), report.Secs(row.CPU), report.Pct(row.OfAll), report.Pct(row.OfK6)}
			if r.HasRequests {
				switch {
				case row.InOverflow:
					cells = append(cells, fmt.Sprint(row.Requests), "in "+k6labels.OverflowValue+"?", "")
				case row.Requests > 0:
					cells = append(cells, fmt.Sprint(row.Requests), ms(row.PerRequest.Est), ms(row.PerRequest.Low)+"–"+ms(row.PerRequest.High))
				default:
					cells = append(cells, "0", "", "")
				}
			}
			t.Add(cells...)
		}
		t.Add("(no k6 labels)", report.Secs(r.Unlabelled.CPU), report.Pct(report.Ratio(float64(r.Unlabelled.CPU), float64(r.Total.CPU))), "")
		if r.Connections.CPU > 0 {
			t.Add(report.ConnectionRow, report.Secs(r.Connections.CPU), report.Pct(report.Ratio(float64(r.Connections.CPU), float64(r.Total.CPU))), "")
		}
		writeTable(w, f, t)
	}
	for _, row := range r.Rows {
		if len(row.Top) == 0 {
			continue
		}
		heading(w, f, 3, fmt.Sprintf("Top functions by self CPU, %s=%s", strings.Join(row.By, ","), row.Key()))
		t := texttab.New("function", "self CPU", "of row")
		for _, fn := range row.Top {
			t.Add(fn.Name, report.Secs(fn.CPU), report.Pct(fn.Share))
		}
		writeTable(w, f, t)
	}
	if len(r.Unmatched) > 0 {
		fmt.Fprintln(w, "k6 request names that no sample carries as k6_name (no CPU measured for them):")
		if f == Markdown {
			fmt.Fprintln(w)
		}
		for _, u := range r.Unmatched {
			if f == Markdown {
				fmt.Fprintf(w, "- %s (%d requests)\n", u.Name, u.Requests)
			} else {
				fmt.Fprintf(w, "  %s (%d requests)\n", u.Name, u.Requests)
			}
		}
		fmt.Fprintln(w)
	}
	r.writeLinks(w, f)
	for _, n := range r.Notes {
		itemf(w, f, "Note: %s.", n)
	}
	itemf(w, f, "of all: share of all the CPU in the source; of k6: share of the k6-labelled CPU of the run;")
	itemf(w, f, "(no k6 labels): samples without k6_test_run_id, k6_scenario and k6_name (runtime, background work, other clients).")
	if r.HasRequests {
		sep := "\n"
		if f == Markdown {
			sep = " "
		}
		itemf(w, f, "ms/request: the row's CPU / its http_reqs; the interval is the %.0f%% Poisson interval of the%srow's sample count (sampling noise only), divided by the requests.",
			100*r.Confidence, sep)
	}
	return sticky.Err
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// The json output of a report (--format json), documented in
// docs/report.md. Field names are stable: fields may be added, never
// renamed or removed; version changes only if a meaning changes. Times are
// RFC 3339 in UTC, CPU in seconds, per-request CPU in milliseconds, shares
// as fractions (0.25 = 25%).
type (
	// jsonReport is the whole report.
	jsonReport struct {
		Version              int             `json:"version"`                // 1
		Source               string          `json:"source"`                 // profile file(s), URL(s) or Pyroscope server and service
		TestRunID            string          `json:"test_run_id,omitempty"`  // k6_test_run_id reported on, or LocalRun; absent: every run in the source
		CPUSeconds           float64         `json:"cpu_seconds"`            // all CPU in the source
		Samples              int64           `json:"samples"`                // its profiler samples (10 ms each at 100 Hz)
		K6CPUSeconds         float64         `json:"k6_cpu_seconds"`         // CPU of the run(s) reported on
		UnlabelledCPUSeconds float64         `json:"unlabelled_cpu_seconds"` // CPU of samples without any k6 label
		UnlabelledShare      float64         `json:"unlabelled_share"`       // of cpu_seconds
		Requests             *int64          `json:"requests,omitempty"`     // http_reqs in the k6 results; absent without them
		Start                *time.Time      `json:"start,omitempty"`        // first http_reqs point
		End                  *time.Time      `json:"end,omitempty"`          // last http_reqs point
		Confidence           float64         `json:"confidence"`             // of the per-request intervals: 0.95
		Rows                 []jsonRow       `json:"rows"`                   // grouping by grouping, most CPU first
		Unmatched            []jsonUnmatched `json:"unmatched_names"`        // k6 names no sample carries as k6_name
		Notes                []string        `json:"notes"`                  // remarks the text output shows as "Note:"

		ConnectionCPUSeconds float64 `json:"connection_goroutines_cpu_seconds"` // CPU of connection goroutines started in labelled requests, in no row

		RequestsOutside int64 `json:"requests_outside_profiles,omitempty"` // k6 requests made outside the profiles' time span, not counted
	}
	// jsonRow is one row: the CPU of the samples whose labels By have
	// Values.
	jsonRow struct {
		By              []string   `json:"by"`                                // label names: k6_test_run_id, k6_scenario, k6_name
		Values          []string   `json:"values"`                            // one value per label of by
		CPUSeconds      float64    `json:"cpu_seconds"`                       // the row's CPU
		Samples         int64      `json:"samples"`                           // its sample count, the Poisson count of the interval
		ShareOfAll      float64    `json:"share_of_all"`                      // of the report's cpu_seconds
		ShareOfK6       float64    `json:"share_of_k6"`                       // of k6_cpu_seconds
		Requests        *int64     `json:"requests,omitempty"`                // http_reqs of the row; absent without k6 results
		CPUPerRequestMs *float64   `json:"cpu_per_request_ms,omitempty"`      // cpu_seconds / requests, in ms; absent with 0 requests
		LowMs           *float64   `json:"cpu_per_request_ms_low,omitempty"`  // lower end of its interval
		HighMs          *float64   `json:"cpu_per_request_ms_high,omitempty"` // upper end of its interval
		InOverflow      bool       `json:"possibly_in_overflow,omitempty"`    // k6_name has no label of its own and _overflow has CPU: no per-request figure
		Top             []jsonFunc `json:"top,omitempty"`                     // functions by self CPU (scenario rows; every row with --top-every-row)
		GrafanaURL      string     `json:"grafana_url,omitempty"`             // with --grafana: the row in Grafana Profiles Drilldown
	}
	// jsonFunc is a function's self CPU in a row.
	jsonFunc struct {
		Function       string  `json:"function"`         // function name as in the profile
		SelfCPUSeconds float64 `json:"self_cpu_seconds"` // CPU of samples whose leaf frame is the function
		Share          float64 `json:"share"`            // of the row's CPU
	}
	// jsonUnmatched is a k6 request name without CPU in the profiles.
	jsonUnmatched struct {
		Name     string `json:"name"`     // k6's name tag as the labels name it (query string dropped)
		Requests int64  `json:"requests"` // its http_reqs
	}
)

func msf(d time.Duration) *float64 {
	v := float64(d) / 1e6
	return &v
}

func (r reportOut) jsonReport() jsonReport {
	j := jsonReport{
		Version: 1, Source: r.Source, TestRunID: r.RunID,
		CPUSeconds: r.Total.CPU.Seconds(), Samples: r.Total.Samples, K6CPUSeconds: r.K6.CPU.Seconds(),
		UnlabelledCPUSeconds: r.Unlabelled.CPU.Seconds(), UnlabelledShare: report.Ratio(float64(r.Unlabelled.CPU), float64(r.Total.CPU)),
		ConnectionCPUSeconds: r.Connections.CPU.Seconds(), RequestsOutside: r.Outside,
		Confidence: r.Confidence, Rows: []jsonRow{}, Unmatched: []jsonUnmatched{}, Notes: append([]string{}, r.Notes...),
	}
	if r.HasRequests {
		start, end := r.Start.UTC(), r.End.UTC()
		j.Requests, j.Start, j.End = &r.Requests, &start, &end
	}
	for _, row := range r.Rows {
		jr := jsonRow{By: row.By, Values: row.Values, CPUSeconds: row.CPU.Seconds(), Samples: row.Samples,
			ShareOfAll: row.OfAll, ShareOfK6: row.OfK6, InOverflow: row.InOverflow}
		if r.HasRequests {
			n := row.Requests
			jr.Requests = &n
			if n > 0 && !row.InOverflow {
				jr.CPUPerRequestMs, jr.LowMs, jr.HighMs = msf(row.PerRequest.Est), msf(row.PerRequest.Low), msf(row.PerRequest.High)
			}
		}
		for _, f := range row.Top {
			jr.Top = append(jr.Top, jsonFunc{f.Name, f.CPU.Seconds(), f.Share})
		}
		jr.GrafanaURL = r.GrafanaURL(&row)
		j.Rows = append(j.Rows, jr)
	}
	for _, u := range r.Unmatched {
		j.Unmatched = append(j.Unmatched, jsonUnmatched(u))
	}
	return j
}
