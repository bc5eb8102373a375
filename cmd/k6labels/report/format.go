package report

import (
	"encoding/json"
	"fmt"
	"github.com/k6labels/k6labels"
	"github.com/k6labels/k6labels/cmd/k6labels/texttab"
	"io"
	"slices"
	"strings"
	"time"
)

// A Format is one of the output formats of reports and diffs.
type Format string

// The output formats.
const (
	Text     Format = "text"     // aligned tables for a terminal
	Markdown Format = "markdown" // GitHub-flavoured tables, for CI summaries and PR comments
	JSON     Format = "json"     // one object; fields documented in docs/report.md
	HTML     Format = "html"     // one self-contained page with flame graphs, written by package htmlreport
)

// ParseFormat checks a --format value.
func ParseFormat(s string) (Format, error) {
	switch f := Format(s); f {
	case Text, Markdown, JSON, HTML:
		return f, nil
	}
	return "", fmt.Errorf("--format: unknown format %q: use text, markdown, json or html", s)
}

// writeTable writes t in format f, then a blank line. A write error is
// kept by w, a [texttab.Sticky] of the caller, which writes nothing after.
func writeTable(w io.Writer, f Format, t *texttab.Table) {
	if t.Write(w, f == Markdown) == nil {
		fmt.Fprintln(w)
	}
}

func secs(d time.Duration) string { return fmt.Sprintf("%.2fs", d.Seconds()) }
func pct(f float64) string        { return fmt.Sprintf("%.1f%%", 100*f) }
func ms(d time.Duration) string   { return fmt.Sprintf("%.3f", float64(d)/1e6) }

func heading(w io.Writer, f Format, level int, s string) {
	if f == Markdown {
		fmt.Fprintf(w, "%s %s\n\n", strings.Repeat("#", level), s)
		return
	}
	fmt.Fprintf(w, "%s\n\n", s)
}

func groupTitle(g Grouping) string { return strings.Join(g, " × ") }

// itemf writes one line of prose: as it is in text, as a list item in
// markdown (where consecutive lines would run into one paragraph).
func itemf(w io.Writer, f Format, format string, a ...any) {
	if f == Markdown {
		format = "- " + format
	}
	fmt.Fprintf(w, format+"\n", a...)
}

// Write writes the report in format f.
func (r *Report) Write(w io.Writer, f Format) error {
	if f == JSON {
		return writeJSON(w, r.jsonReport())
	}
	sticky := &texttab.Sticky{W: w}
	w = sticky
	heading(w, f, 2, fmt.Sprintf("CPU by k6 label: %s, %s", r.Source, runOf(r, "every test run in it")))
	itemf(w, f, "%s of CPU in %d samples; the run's k6-labelled CPU %s (%s); without k6 labels %s (%s).",
		secs(r.Total.CPU), r.Total.Samples, secs(r.K6.CPU), pct(ratio(float64(r.K6.CPU), float64(r.Total.CPU))),
		secs(r.Unlabelled.CPU), pct(ratio(float64(r.Unlabelled.CPU), float64(r.Total.CPU))))
	if r.HasRequests {
		itemf(w, f, "k6 results: %d requests from %s to %s (%.1fs).", r.Requests,
			r.Start.UTC().Format(time.RFC3339), r.End.UTC().Format(time.RFC3339), r.End.Sub(r.Start).Seconds())
		if l := r.alignLine(); l != "" {
			itemf(w, f, "%s", l)
		}
	} else {
		itemf(w, f, "No k6 results given: shares only (pass --k6 FILE for requests and CPU per request).")
	}
	fmt.Fprintln(w)
	var groups []Grouping
	for _, row := range r.Rows {
		if !slices.ContainsFunc(groups, func(g Grouping) bool { return slices.Equal(g, row.By) }) {
			groups = append(groups, row.By)
		}
	}
	for _, g := range groups {
		t := texttab.New(groupTitle(g), "CPU", "of all", "of k6")
		if r.HasRequests {
			t.Head = append(t.Head, "requests", "ms/request", fmt.Sprintf("%.0f%% interval", 100*r.Confidence))
		}
		for _, row := range r.RowsBy(g) {
			cells := []string{row.Key(), secs(row.CPU), pct(row.OfAll), pct(row.OfK6)}
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
		t.Add("(no k6 labels)", secs(r.Unlabelled.CPU), pct(ratio(float64(r.Unlabelled.CPU), float64(r.Total.CPU))), "")
		if r.Connections.CPU > 0 {
			t.Add(ConnectionRow, secs(r.Connections.CPU), pct(ratio(float64(r.Connections.CPU), float64(r.Total.CPU))), "")
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
			t.Add(fn.Name, secs(fn.CPU), pct(fn.Share))
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

// runOf names the run r is of, or says all when r is of every run.
func runOf(r *Report, all string) string {
	switch r.RunID {
	case "":
		return all
	case LocalRun:
		return LocalRun
	}
	return LabelRunID + "=" + r.RunID
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

func (r *Report) jsonReport() jsonReport {
	j := jsonReport{
		Version: 1, Source: r.Source, TestRunID: r.RunID,
		CPUSeconds: r.Total.CPU.Seconds(), Samples: r.Total.Samples, K6CPUSeconds: r.K6.CPU.Seconds(),
		UnlabelledCPUSeconds: r.Unlabelled.CPU.Seconds(), UnlabelledShare: ratio(float64(r.Unlabelled.CPU), float64(r.Total.CPU)),
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

// PyroscopeWindow is the length of pyroscope-go's CPU profiling window: a
// profile is stamped with the start of the window it covers, so a query
// must start this much before the run to see the run's first samples.
const PyroscopeWindow = 30 * time.Second

// SeriesStep is the SelectSeries step of totals and runs: a run's points
// are stamped with the end of their step, on a grid of this step from the
// window's start.
const SeriesStep = 15 * time.Second

// A Run is one k6 test run a Pyroscope server has CPU of.
type Run struct {
	ID          string
	First, Last time.Time // stamps of its first and last points (pyroscope-go window starts)
	CPU         time.Duration
}

// WriteRuns writes the runs of a source's window in format f.
func WriteRuns(w io.Writer, f Format, source string, start, end time.Time, runs []Run) error {
	if f == JSON {
		// The json output of runs; stable field names, as for reports.
		type jsonRun struct {
			ID         string    `json:"test_run_id"` // k6_test_run_id value
			First      time.Time `json:"first_point"` // stamp of its first SelectSeries point
			Last       time.Time `json:"last_point"`  // stamp of its last point
			CPUSeconds float64   `json:"cpu_seconds"` // its CPU in the window
		}
		out := struct {
			Source string    `json:"source"` // the Pyroscope server and service
			Start  time.Time `json:"start"`  // the query window
			End    time.Time `json:"end"`
			Runs   []jsonRun `json:"runs"` // as given: by first point
		}{source, start.UTC(), end.UTC(), []jsonRun{}}
		for _, r := range runs {
			out.Runs = append(out.Runs, jsonRun{r.ID, r.First.UTC(), r.Last.UTC(), r.CPU.Seconds()})
		}
		return writeJSON(w, out)
	}
	sticky := &texttab.Sticky{W: w}
	w = sticky
	heading(w, f, 2, fmt.Sprintf("k6 test runs: %s, %s to %s", source, start.UTC().Format(time.RFC3339), end.UTC().Format(time.RFC3339)))
	t := texttab.New(LabelRunID, "first point", "last point", "CPU")
	for _, r := range runs {
		t.Add(r.ID, r.First.UTC().Format(time.RFC3339), r.Last.UTC().Format(time.RFC3339), secs(r.CPU))
	}
	writeTable(w, f, t)
	fmt.Fprintf(w, "A point is the end of the %s step holding a profile's stamp, the start of its %s CPU window: a run's requests lie between %s before its first point and %s after its last.\n",
		SeriesStep, PyroscopeWindow, SeriesStep, PyroscopeWindow)
	return sticky.Err
}
