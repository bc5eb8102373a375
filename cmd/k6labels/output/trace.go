package output

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/k6labels/k6labels/cmd/k6labels/report"
	"github.com/k6labels/k6labels/cmd/k6labels/texttab"
	"github.com/k6labels/k6labels/cmd/k6labels/trace"
)

// Write writes the trace report in format f.
func (r traceOut) Write(w io.Writer, f Format) error {
	if f == JSON {
		return writeJSON(w, r.jsonTrace())
	}
	t := r.Trace
	md := f == Markdown
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
	reasons := r.ShownReasons()
	scale := r.CPUScale()
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
					msStr(s[trace.Wall].Mean), msStr(s[trace.Wall].P50), msStr(s[trace.Wall].P95), msStr(s[trace.Wall].P99),
					msStr(s[trace.CPU].Mean * scale), msStr(s[trace.CPU].P50 * scale), msStr(s[trace.CPU].P95 * scale), msStr(s[trace.CPU].P99 * scale),
					msStr(s[trace.Runnable].Mean), msStr(s[trace.Runnable].P95), msStr(s[trace.BlockedAll].Mean)}
				for _, re := range reasons {
					cells = append(cells, msStr(s[trace.Blocked+trace.Metric(re)].Mean))
				}
				if r.K6 != nil {
					d, wt := r.Latency(row)
					ds, ws := trace.Summarize(d), trace.Summarize(wt)
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

// msStr formats nanoseconds as milliseconds with three decimals.
func msStr(ns float64) string { return fmt.Sprintf("%.3f", ns/1e6) }

// latStr formats a k6 latency in ms, or "-" when k6 recorded none.
func latStr(samples []float64, v float64) string {
	if len(samples) == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f", v)
}

// sumCut returns the requests the trace's window cut, with or without
// labels.
func sumCut(t *trace.Trace) int {
	n := t.CutUnknown
	for _, c := range t.Cut {
		n += c
	}
	return n
}

// The json output of a trace report (--trace with --format json), documented
// in docs/report.md. Times are milliseconds per request; CPU seconds for
// process totals.
type (
	jsonTrace struct {
		Version       int            `json:"version"`
		Source        string         `json:"source"`
		WindowSeconds float64        `json:"window_seconds"`
		Requests      int            `json:"requests"`
		Cut           int            `json:"cut"`
		Unlabelled    int            `json:"unlabelled"`
		TraceCPUSec   float64        `json:"trace_cpu_seconds"`
		SyscallSec    float64        `json:"trace_syscall_seconds"`
		ProcessCPUSec float64        `json:"process_cpu_seconds,omitempty"`
		CPURatio      float64        `json:"cpu_ratio,omitempty"`
		CPUScaled     bool           `json:"cpu_scaled"`
		CPUWarning    string         `json:"cpu_warning,omitempty"`
		Rows          []jsonTraceRow `json:"rows"`
	}

	jsonTraceRow struct {
		Grouping string                      `json:"grouping"`
		Values   []string                    `json:"values"`
		Requests int                         `json:"requests"`
		Cut      int                         `json:"cut"`
		Ms       map[string]jsonTraceSummary `json:"ms"`
		K6       map[string]jsonTraceSummary `json:"k6_ms,omitempty"`
		Stacks   []jsonTraceStack            `json:"top_blocking_stacks,omitempty"`
	}

	jsonTraceSummary struct {
		Mean float64 `json:"mean"`
		P50  float64 `json:"p50"`
		P95  float64 `json:"p95"`
		P99  float64 `json:"p99"`
	}

	jsonTraceStack struct {
		Reason       string   `json:"reason"`
		MsPerRequest float64  `json:"ms_per_request"`
		Frames       []string `json:"frames"`
	}
)

// msSummary returns s, multiplied by scale, in milliseconds.
func msSummary(s trace.Summary, scale float64) jsonTraceSummary {
	return jsonTraceSummary{Mean: s.Mean * scale / 1e6, P50: s.P50 * scale / 1e6, P95: s.P95 * scale / 1e6, P99: s.P99 * scale / 1e6}
}

func (r traceOut) jsonTrace() jsonTrace {
	t := r.Trace
	out := jsonTrace{Version: 1, Source: r.Source, WindowSeconds: t.Window.Seconds(), Requests: len(t.Requests),
		Cut: sumCut(t), Unlabelled: t.Unlabelled, TraceCPUSec: float64(t.GoroutineCPU) / 1e9, SyscallSec: float64(t.SyscallTime) / 1e9,
		ProcessCPUSec: float64(r.ProcessCPU) / 1e9, CPURatio: r.CPURatio(), CPUScaled: r.ScaleCPU && r.CPURatio() > 0, CPUWarning: r.CPUWarning(), Rows: []jsonTraceRow{}}
	scale := r.CPUScale()
	for _, row := range r.Rows {
		jr := jsonTraceRow{Grouping: row.Grouping.String(), Values: slices.Clone(row.Values), Requests: row.Requests, Cut: row.Cut, Ms: map[string]jsonTraceSummary{}}
		for m := range trace.NumMetrics {
			sc := 1.0
			if m == trace.CPU {
				sc = scale
			}
			jr.Ms[m.String()] = msSummary(row.Stats[m], sc)
		}
		if r.K6 != nil {
			d, wt := r.Latency(row)
			jr.K6 = map[string]jsonTraceSummary{"http_req_duration": msSummary(trace.Summarize(d), 1e6), "http_req_waiting": msSummary(trace.Summarize(wt), 1e6)}
		}
		for _, st := range row.Top {
			jr.Stacks = append(jr.Stacks, jsonTraceStack{Reason: st.Reason.String(), MsPerRequest: st.PerRequest / 1e6, Frames: st.Frames})
		}
		out.Rows = append(out.Rows, jr)
	}
	return out
}
