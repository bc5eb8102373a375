package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/google/pprof/profile"
)

// ErrMergedProfile is returned, wrapped with [ErrNoData], for a profile
// that Pyroscope (or Grafana) merged: its samples carry no labels at all.
var ErrMergedProfile = fmt.Errorf("a profile merged by Pyroscope")

// pyroscopeMerged tells whether p has the shape of a profile that
// Pyroscope's SelectMergeProfile returns (what Grafana's "download as
// pprof" saves): no sample carries any label, no samples/count value and no
// duration, or a period of a second or more. runtime/pprof writes a
// samples/count value, a duration and a 10 ms period.
func pyroscopeMerged(p *profile.Profile) bool {
	if p == nil || len(p.Sample) == 0 {
		return false
	}
	for _, s := range p.Sample {
		if len(s.Label) > 0 || len(s.NumLabel) > 0 {
			return false
		}
	}
	return CountIndex(p) < 0 && (p.DurationNanos == 0 || time.Duration(p.Period) >= time.Second)
}

// wholeSource is a [Source] that holds all its samples in one profile,
// which Whole returns: a profile file, whose shape tells where it came from.
type wholeSource interface {
	Source
	Whole() *profile.Profile
}

// unlabelledError returns the error of New for a source whose CPU carries
// no k6 label: what to do about a Pyroscope-merged profile, or about a
// service or k6 script that sets no labels.
func unlabelledError(src Source, total Count, name string) error {
	if ws, ok := src.(wholeSource); ok && pyroscopeMerged(ws.Whole()) {
		return fmt.Errorf("%w: %w: none of the %.2fs of CPU in %s carries a label of any kind, and it has the shape of a profile merged by Pyroscope or Grafana (period %s, no sample count): Pyroscope keeps labels as series, not in the profiles it returns; use --pyroscope URL --service NAME to query them per label",
			ErrNoData, ErrMergedProfile, total.CPU.Seconds(), name, time.Duration(ws.Whole().Period))
	}
	return fmt.Errorf("%w: none of the %.2fs of CPU in %s carries k6 labels: is the service wrapped with k6labels (e.g. k6labels.LabelsFromBaggageHandler), and does k6 send baggage (http-instrumentation-pyroscope)?",
		ErrNoData, total.CPU.Seconds(), name)
}

// scopeToRun keeps the CPU of other test runs out of a report of one run:
// its total is the run's CPU and the CPU without k6 labels, and a note says
// what was left out, so that no share is of another run's CPU.
func (r *Report) scopeToRun(runs []string, totals map[string]Count) {
	if r.RunID == "" {
		return
	}
	var other Count
	var names []string
	for _, id := range runs {
		if id != r.RunID && id != ConnectionRow {
			other = other.Plus(totals[id])
			names = append(names, fmt.Sprintf("%s (%s)", id, Secs(totals[id].CPU)))
		}
	}
	if other.Samples == 0 && other.CPU == 0 {
		return
	}
	r.Total = totals[r.RunID].Plus(totals[""]).Plus(totals[ConnectionRow])
	r.OtherRuns = other
	r.Notes = append(r.Notes, fmt.Sprintf("the source also holds %s of CPU of other test runs, left out of this report and of its shares: %s", Secs(other.CPU), strings.Join(names, ", ")))
}

// asyncPreempt is the frame the runtime puts on a goroutine's stack when it
// preempts it by a signal: an artifact of preemption, not a cost.
const asyncPreempt = "runtime.asyncPreempt"

// selfFunc returns the function a sample's self CPU is of: the leaf frame,
// or its caller when the leaf is runtime.asyncPreempt.
func selfFunc(s *profile.Sample) string {
	fn := "(unknown)"
	for _, loc := range s.Location {
		for _, ln := range loc.Line {
			if ln.Function == nil {
				continue
			}
			if fn = ln.Function.Name; fn != asyncPreempt {
				return fn
			}
		}
		if fn == "(unknown)" {
			return fn // the leaf has no function
		}
	}
	return fn
}
