package trace

import (
	"fmt"

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

// CPUScale returns what the rows' CPU statistics are multiplied by when
// written: CPURatio if ScaleCPU is set and the ratio is known, else 1.
func (r *Report) CPUScale() float64 {
	if q := r.CPURatio(); r.ScaleCPU && q > 0 {
		return q
	}
	return 1
}

// Latency returns k6's http_req_duration and http_req_waiting samples (ms)
// for row, merged over the k6 keys the row covers; nil, nil without K6.
func (r *Report) Latency(row *Row) (dur, wait []float64) {
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

// ShownReasons returns the reasons with blocked time in any row, in the
// order of Reason: the blocked-time columns a written report has.
func (r *Report) ShownReasons() []Reason {
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
