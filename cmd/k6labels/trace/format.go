package trace

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/k6labels/k6labels/cmd/k6labels/output"
	"github.com/k6labels/k6labels/cmd/k6labels/texttab"

	"github.com/k6labels/k6labels/cmd/k6labels/k6results"
	"github.com/k6labels/k6labels/cmd/k6labels/report"
)

// Report is a trace report: the rows of a trace with, when given, k6's own
// latency of the same rows and the process CPU the host really gave.
type Report struct {
	Source string
	Trace  *Trace
	Rows   []*Row
	K6     *k6results.Results // nil: no k6 columns
	// ProcessCPU is the process's CPU time over the window, in nanoseconds,
	// from a CPU profile taken alongside (0: unknown). ScaleCPU multiplies
	// the rows' CPU by CPURatio.
	ProcessCPU int64
	ScaleCPU   bool
}

// CPURatio returns the process's CPU over the trace's on-CPU time (all
// goroutines' time running on a P) for the window, or 0 if ProcessCPU is
// unknown. Below 1, the host took CPU away from threads that held a P; the
// trace counts that time as on-CPU. System calls are not in the trace's
// on-CPU time (most are waits) but their CPU is in the process's, so a
// service heavy in syscalls reads slightly high.
func (r *Report) CPURatio() float64 {
	on := r.Trace.GoroutineCPU
	if r.ProcessCPU <= 0 || on <= 0 {
		return 0
	}
	return float64(r.ProcessCPU) / float64(on)
}

// TrustedCPURatio is the lowest CPURatio at which the trace's CPU per
// request is reported without a warning: below it the host took so much CPU
// from the process's threads that on-P time is not CPU time, and, as longer
// requests are descheduled more often, scaling by the ratio is approximate.
const TrustedCPURatio = 0.9

// CPUWarning returns why the CPU columns are not exact, or "".
func (r *Report) CPUWarning() string {
	if q := r.CPURatio(); q > 0 && q < TrustedCPURatio {
		return fmt.Sprintf("the host ran this process only %.0f%% of the time its goroutines held a P (a loaded or throttled machine): CPU per request is inflated by the host's waits, and --scale-cpu corrects the total, not each row exactly; measure CPU on a machine with spare cores", 100*q)
	}
	return ""
}

// cpuScale is what CPU statistics are multiplied by.
func (r *Report) cpuScale() float64 {
	if q := r.CPURatio(); r.ScaleCPU && q > 0 {
		return q
	}
	return 1
}

// latency returns k6's duration and waiting samples for row, merged over
// the k6 keys the row covers.
func (r *Report) latency(row *Row) (dur, wait []float64) {
	if r.K6 == nil {
		return nil, nil
	}
	for k, l := range r.K6.Latency {
		ok := true
		for i, name := range row.Grouping {
			switch name {
			case report.LabelScenario:
				ok = ok && k.Scenario == row.Values[i]
			case report.LabelName:
				ok = ok && k.Name == row.Values[i]
			}
		}
		if ok {
			dur = append(dur, l.Duration...)
			wait = append(wait, l.Waiting...)
		}
	}
	return dur, wait
}

// shownReasons are the reasons with blocked time in any row.
func (r *Report) shownReasons() []Reason {
	var out []Reason
	for re := range NumReasons {
		for _, row := range r.Rows {
			if row.Stats[Blocked+Metric(re)].Mean > 0 {
				out = append(out, re)
				break
			}
		}
	}
	return out
}

func msStr(ns float64) string { return fmt.Sprintf("%.3f", ns/1e6) }

// Write renders the report as text, markdown or json.
func (r *Report) Write(w io.Writer, f output.Format) error {
	if f == output.JSON {
		return r.writeJSON(w)
	}
	t := r.Trace
	md := f == output.Markdown
	h := func(s string) {
		if md {
			fmt.Fprintf(w, "\n### %s\n\n", s)
		} else {
			fmt.Fprintf(w, "\n%s\n", s)
		}
	}
	fmt.Fprintf(w, "Execution trace %s: %.1f s window, %d requests measured, %d cut by the window (not measured), %d unlabelled tasks.\n",
		r.Source, t.Window.Seconds(), len(t.Requests), sumCut(t), t.Unlabelled)
	fmt.Fprintf(w, "Times in ms per request; CPU is time running on a P.\n")
	if q := r.CPURatio(); q > 0 {
		fmt.Fprintf(w, "Process CPU %.3f s over trace on-CPU %.3f s (goroutines running on a P; %.3f s more in system calls): ratio %.3f",
			float64(r.ProcessCPU)/1e9, float64(t.GoroutineCPU)/1e9, float64(t.SyscallTime)/1e9, q)
		if r.ScaleCPU {
			fmt.Fprintf(w, "; CPU columns scaled by it.\n")
		} else {
			fmt.Fprintf(w, "; CPU columns not scaled (--scale-cpu scales them).\n")
		}
		if msg := r.CPUWarning(); msg != "" {
			fmt.Fprintf(w, "warning: %s.\n", msg)
		}
	} else {
		fmt.Fprintf(w, "The host's share of that time is unknown: give a --profile of the same window to check it.\n")
	}
	reasons := r.shownReasons()
	scale := r.cpuScale()
	var g report.Grouping
	for i, row := range r.Rows {
		if i == 0 || row.Grouping.String() != g.String() {
			g = row.Grouping
			h("By " + strings.Join(g, " × "))
			tb := &texttab.Table{}
			head := []string{strings.Join(g, " × "), "requests", "cut", "wall mean", "p50", "p95", "p99", "cpu mean", "p50", "p95", "p99", "runnable mean", "p95", "blocked mean"}
			for _, re := range reasons {
				head = append(head, re.String())
			}
			if r.K6 != nil {
				head = append(head, "k6 duration mean", "p95", "k6 waiting mean", "p95")
			}
			tb.Head = head
			for _, row := range r.Rows {
				if row.Grouping.String() != g.String() {
					continue
				}
				s := row.Stats
				cells := []string{row.Key(), fmt.Sprint(row.Requests), fmt.Sprint(row.Cut),
					msStr(s[Wall].Mean), msStr(s[Wall].P50), msStr(s[Wall].P95), msStr(s[Wall].P99),
					msStr(s[CPU].Mean * scale), msStr(s[CPU].P50 * scale), msStr(s[CPU].P95 * scale), msStr(s[CPU].P99 * scale),
					msStr(s[Runnable].Mean), msStr(s[Runnable].P95), msStr(s[BlockedAll].Mean)}
				for _, re := range reasons {
					cells = append(cells, msStr(s[Blocked+Metric(re)].Mean))
				}
				if r.K6 != nil {
					d, wt := r.latency(row)
					ds, ws := summarize(d), summarize(wt)
					cells = append(cells, latStr(d, ds.Mean), latStr(d, ds.P95), latStr(wt, ws.Mean), latStr(wt, ws.P95))
				}
				tb.Add(cells...)
			}
			if err := tb.Write(w, md); err != nil {
				return err
			}
			for _, row := range r.Rows {
				if row.Grouping.String() != g.String() || len(row.Top) == 0 {
					continue
				}
				fmt.Fprintf(w, "\nTop blocking stacks of %s:\n", row.Key())
				if md {
					fmt.Fprintln(w)
				}
				for _, st := range row.Top {
					fmt.Fprintf(w, "  %s ms per request, %s:\n", msStr(st.PerRequest), st.Reason)
					for _, fr := range st.Frames {
						fmt.Fprintf(w, "      %s\n", fr)
					}
				}
			}
		}
	}
	return nil
}

// latStr formats a k6 latency in ms, or "-" when k6 recorded none.
func latStr(samples []float64, v float64) string {
	if len(samples) == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f", v)
}

func sumCut(t *Trace) int {
	n := t.CutUnknown
	for _, c := range t.Cut {
		n += c
	}
	return n
}

// The json output of a trace report (--trace with --format json), documented
// in docs/report.md. Times are milliseconds per request; CPU seconds for
// process totals.
type jsonTrace struct {
	Version       int       `json:"version"`
	Source        string    `json:"source"`
	WindowSeconds float64   `json:"window_seconds"`
	Requests      int       `json:"requests"`
	Cut           int       `json:"cut"`
	Unlabelled    int       `json:"unlabelled"`
	TraceCPUSec   float64   `json:"trace_cpu_seconds"`
	SyscallSec    float64   `json:"trace_syscall_seconds"`
	ProcessCPUSec float64   `json:"process_cpu_seconds,omitempty"`
	CPURatio      float64   `json:"cpu_ratio,omitempty"`
	CPUScaled     bool      `json:"cpu_scaled"`
	CPUWarning    string    `json:"cpu_warning,omitempty"`
	Rows          []jsonRow `json:"rows"`
}

type jsonRow struct {
	Grouping string                 `json:"grouping"`
	Values   []string               `json:"values"`
	Requests int                    `json:"requests"`
	Cut      int                    `json:"cut"`
	Ms       map[string]jsonSummary `json:"ms"`
	K6       map[string]jsonSummary `json:"k6_ms,omitempty"`
	Stacks   []jsonStack            `json:"top_blocking_stacks,omitempty"`
}

type jsonSummary struct {
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
}

type jsonStack struct {
	Reason       string   `json:"reason"`
	MsPerRequest float64  `json:"ms_per_request"`
	Frames       []string `json:"frames"`
}

func msSummary(s Summary, scale float64) jsonSummary {
	return jsonSummary{Mean: s.Mean * scale / 1e6, P50: s.P50 * scale / 1e6, P95: s.P95 * scale / 1e6, P99: s.P99 * scale / 1e6}
}

func (r *Report) writeJSON(w io.Writer) error {
	t := r.Trace
	out := jsonTrace{Version: 1, Source: r.Source, WindowSeconds: t.Window.Seconds(), Requests: len(t.Requests),
		Cut: sumCut(t), Unlabelled: t.Unlabelled, TraceCPUSec: float64(t.GoroutineCPU) / 1e9, SyscallSec: float64(t.SyscallTime) / 1e9,
		ProcessCPUSec: float64(r.ProcessCPU) / 1e9, CPURatio: r.CPURatio(), CPUScaled: r.ScaleCPU && r.CPURatio() > 0, CPUWarning: r.CPUWarning(), Rows: []jsonRow{}}
	scale := r.cpuScale()
	for _, row := range r.Rows {
		jr := jsonRow{Grouping: row.Grouping.String(), Values: slices.Clone(row.Values), Requests: row.Requests, Cut: row.Cut, Ms: map[string]jsonSummary{}}
		for m := range NumMetrics {
			sc := 1.0
			if m == CPU {
				sc = scale
			}
			jr.Ms[m.String()] = msSummary(row.Stats[m], sc)
		}
		if r.K6 != nil {
			d, wt := r.latency(row)
			jr.K6 = map[string]jsonSummary{"http_req_duration": msSummary(summarize(d), 1e6), "http_req_waiting": msSummary(summarize(wt), 1e6)}
		}
		for _, st := range row.Top {
			jr.Stacks = append(jr.Stacks, jsonStack{Reason: st.Reason.String(), MsPerRequest: st.PerRequest / 1e6, Frames: st.Frames})
		}
		out.Rows = append(out.Rows, jr)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
