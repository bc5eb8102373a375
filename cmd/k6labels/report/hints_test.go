package report_test

import (
	"slices"
	"testing"
	"time"

	"github.com/k6labels/k6labels/cmd/k6labels/report"
)

// TestAsyncPreemptFolded: in the real local/ profile, samples whose leaf
// is runtime.asyncPreempt (a goroutine preempted by a signal) count for
// the function it interrupted: no top function is runtime.asyncPreempt,
// and main.findNearestVehicle's self CPU in rush_hour is that of the
// samples whose first frame but asyncPreempt is it.
func TestAsyncPreemptFolded(t *testing.T) {
	p := fxProfile(t, "local/fx4.cpu.pb.gz")
	var want, preempted time.Duration
	for _, s := range p.Sample {
		if !slices.Contains(s.Label["k6_scenario"], "rush_hour") {
			continue
		}
		var frames []string
		for _, loc := range s.Location {
			for _, ln := range loc.Line {
				frames = append(frames, ln.Function.Name)
			}
		}
		if len(frames) > 1 && frames[0] == "runtime.asyncPreempt" {
			preempted += time.Duration(s.Value[1])
			frames = frames[1:]
		}
		if frames[0] == "main.findNearestVehicle" {
			want += time.Duration(s.Value[1])
		}
	}
	if preempted == 0 {
		t.Fatal("the fixture has no asyncPreempt sample in rush_hour: the test proves nothing")
	}
	r := fx4Report(t, report.Options{Top: 50, TopEveryRow: true})
	for _, row := range r.Rows {
		for _, f := range row.Top {
			if f.Name == "runtime.asyncPreempt" {
				t.Errorf("%s=%s lists runtime.asyncPreempt (%s)", row.By, row.Key(), f.CPU)
			}
		}
	}
	row := r.Row(report.ByScenario, "rush_hour")
	if row == nil || len(row.Top) == 0 || row.Top[0].Name != "main.findNearestVehicle" || row.Top[0].CPU != want {
		t.Errorf("rush_hour top: %+v, want main.findNearestVehicle %s (with %s preempted)", row.Top, want, preempted)
	}
}

// TestOtherRunsNoShare: the recorded Pyroscope service holds fx1 and fx2;
// the report of fx1 shows no fx2 row, its total is fx1's CPU and the CPU
// without k6 labels, and a note names what was left out.
func TestOtherRunsNoShare(t *testing.T) {
	r := fxPyroscopeReport(t, "fx1")
	if rows := r.RowsBy(report.ByRun); len(rows) != 1 || rows[0].Key() != "fx1" {
		t.Errorf("run rows: %v, want fx1 only", rows)
	}
	fx1 := cpuSum(fxProfile(t, "profiles/fx1.cpu.pb.gz"))
	fx2 := cpuSum(fxProfile(t, "profiles/fx2.cpu.pb.gz"))
	if r.K6.CPU != fx1 || r.Total.CPU != fx1+r.Unlabelled.CPU || r.OtherRuns.CPU != fx2 {
		t.Errorf("k6 %s total %s other %s; want fx1 %s, total fx1 + %s unlabelled, other fx2 %s", r.K6.CPU, r.Total.CPU, r.OtherRuns.CPU, fx1, r.Unlabelled.CPU, fx2)
	}
	for _, row := range r.Rows {
		if row.OfAll > 1 || row.OfK6 > 1 {
			t.Errorf("%s=%s: of all %.3f, of k6 %.3f", row.By, row.Key(), row.OfAll, row.OfK6)
		}
	}
	if !slices.ContainsFunc(r.Notes, func(n string) bool {
		return n == "the source also holds 23.09s of CPU of other test runs, left out of this report and of its shares: fx2 (23.09s)"
	}) {
		t.Errorf("no note of fx2: %q", r.Notes)
	}
}
