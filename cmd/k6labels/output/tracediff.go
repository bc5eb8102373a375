package output

import (
	"fmt"
	"io"
	"math"

	"github.com/k6labels/k6labels/cmd/k6labels/texttab"
	"github.com/k6labels/k6labels/cmd/k6labels/trace"
)

// Write writes the trace comparison in format f.
func (d traceDiffOut) Write(w io.Writer, f Format) error {
	if f == JSON {
		return writeJSON(w, d.jsonTraceDiff())
	}
	md := f == Markdown
	pct := trace.FormatChange
	fmt.Fprintf(w, "Per-request CPU and wall time, new run against base, from execution traces. Intervals: %.0f%% for the log ratio of means (delta method), Bonferroni over %d rows (family-wise alpha %g).\n",
		100*(1-d.Alpha/float64(max(len(d.Rows), 1))), len(d.Rows), d.Alpha)
	tb := texttab.New("row", "requests", "cpu ms", "median", "change", "interval", "wall ms", "median", "change", "interval", "verdict")
	for _, r := range d.Rows {
		v := string(r.Verdict)
		if r.Why != "" {
			v += " (" + r.Why + ")"
		}
		tb.Add(r.Grouping.String()+"="+r.Key, fmt.Sprintf("%d → %d", r.Before, r.After),
			fmt.Sprintf("%s → %s", msStr(r.CPU.BeforeMean), msStr(r.CPU.AfterMean)), fmt.Sprintf("%s → %s", msStr(r.CPU.BeforeMedian), msStr(r.CPU.AfterMedian)),
			pct(r.CPU.Change), pct(r.CPU.Low)+" … "+pct(r.CPU.High),
			fmt.Sprintf("%s → %s", msStr(r.Wall.BeforeMean), msStr(r.Wall.AfterMean)), fmt.Sprintf("%s → %s", msStr(r.Wall.BeforeMedian), msStr(r.Wall.AfterMedian)),
			pct(r.Wall.Change), pct(r.Wall.Low)+" … "+pct(r.Wall.High), v)
	}
	fmt.Fprintln(w)
	if err := tb.Write(w, md); err != nil {
		return err
	}
	for _, r := range d.Rows {
		if len(r.GrownStacks) == 0 {
			continue
		}
		fmt.Fprintf(w, "\nBlocking stacks that grew in %s=%s:\n", r.Grouping, r.Key)
		for _, s := range r.GrownStacks {
			fmt.Fprintf(w, "  +%s ms per request, %s:\n", msStr(s.PerRequest), s.Reason)
			for _, fr := range s.Frames {
				fmt.Fprintf(w, "      %s\n", fr)
			}
		}
	}
	for _, o := range d.Only {
		fmt.Fprintf(w, "note: %s\n", o)
	}
	return nil
}

// The json output of a trace comparison (diff with --trace and --format
// json): means and medians in milliseconds per request, changes as
// fractions (0 where undefined).
type (
	jsonTraceDiff struct {
		Version int                `json:"version"`
		Alpha   float64            `json:"alpha"`
		Rows    []jsonTraceDiffRow `json:"rows"`
		Notes   []string           `json:"notes,omitempty"`
	}

	jsonTraceDiffRow struct {
		Grouping string          `json:"grouping"`
		Key      string          `json:"key"`
		Before   int             `json:"before_requests"`
		After    int             `json:"after_requests"`
		CPU      jsonTraceChange `json:"cpu"`
		Wall     jsonTraceChange `json:"wall"`
		Verdict  string          `json:"verdict,omitempty"`
		Why      string          `json:"why,omitempty"`
	}

	jsonTraceChange struct {
		BeforeMs       float64 `json:"before_ms"`
		AfterMs        float64 `json:"after_ms"`
		BeforeMedianMs float64 `json:"before_median_ms"`
		AfterMedianMs  float64 `json:"after_median_ms"`
		Change         float64 `json:"change"`
		Low            float64 `json:"low"`
		High           float64 `json:"high"`
	}
)

// jc returns c in milliseconds, with 0 for NaN.
func jc(c trace.Change) jsonTraceChange {
	f := func(x float64) float64 {
		if math.IsNaN(x) {
			return 0
		}
		return x
	}
	return jsonTraceChange{c.BeforeMean / 1e6, c.AfterMean / 1e6, c.BeforeMedian / 1e6, c.AfterMedian / 1e6, f(c.Change), f(c.Low), f(c.High)}
}

func (d traceDiffOut) jsonTraceDiff() jsonTraceDiff {
	out := jsonTraceDiff{Version: 1, Alpha: d.Alpha, Rows: []jsonTraceDiffRow{}, Notes: d.Only}
	for _, r := range d.Rows {
		out.Rows = append(out.Rows, jsonTraceDiffRow{r.Grouping.String(), r.Key, r.Before, r.After, jc(r.CPU), jc(r.Wall), string(r.Verdict), r.Why})
	}
	return out
}
