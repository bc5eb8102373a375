package output

import (
	"fmt"
	"io"
	"time"

	"github.com/k6labels/k6labels/cmd/k6labels/report"
	"github.com/k6labels/k6labels/cmd/k6labels/texttab"
)

// WriteRuns writes the runs of a source's window in format f.
func WriteRuns(w io.Writer, f Format, source string, start, end time.Time, runs []report.Run) error {
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
	t := texttab.New(report.LabelRunID, "first point", "last point", "CPU")
	for _, r := range runs {
		t.Add(r.ID, r.First.UTC().Format(time.RFC3339), r.Last.UTC().Format(time.RFC3339), report.Secs(r.CPU))
	}
	writeTable(w, f, t)
	fmt.Fprintf(w, "A point is the end of the %s step holding a profile's stamp, the start of its %s CPU window: a run's requests lie between %s before its first point and %s after its last.\n",
		report.SeriesStep, report.PyroscopeWindow, report.SeriesStep, report.PyroscopeWindow)
	return sticky.Err
}
