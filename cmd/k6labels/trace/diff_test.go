package trace

import (
	"math/rand/v2"
	"testing"

	"github.com/k6labels/k6labels/cmd/k6labels/report"
)

// synthetic returns a trace whose rows have n requests each, with CPU per
// request drawn around the given ms (±20% uniform) and wall twice that; the
// k6_name values are URLs on host, and each request blocks on stack for
// blockedMs.
func synthetic(seed uint64, host string, n int, cpuMs map[string]float64, blockedMs float64) *Trace {
	rng := rand.New(rand.NewPCG(seed, 1))
	t := &Trace{Cut: map[int]int{}, BlockedStacks: map[StackKey]int64{}, Stacks: []Stack{{Reason: Sync, Frames: []string{"sync.(*Mutex).Lock x.go:1"}}}}
	for path, ms := range cpuMs {
		li := len(t.Labels)
		t.Labels = append(t.Labels, map[string]string{report.LabelName: host + path, report.LabelScenario: "s"})
		for range n {
			c := ms * 1e6 * (0.8 + 0.4*rng.Float64())
			r := Request{Labels: li, CPU: int64(c), Wall: int64(2*c + blockedMs*1e6)}
			r.Blocked[Sync] = int64(blockedMs * 1e6)
			t.Requests = append(t.Requests, r)
		}
		t.BlockedStacks[StackKey{li, 0}] = int64(float64(n) * blockedMs * 1e6)
	}
	return t
}

// TestDiffVerdicts: a route whose CPU per request doubled is a regression
// at --fail-above 20%; an unchanged one is ok; one with fewer than
// MinRequests requests is inconclusive; a change of 20% ± noise that the
// interval cannot separate from the threshold is inconclusive. Rows on
// different ports match by path, and the lock's growth is listed. How the
// comparison is written is output's TestWriteTraceDiff.
func TestDiffVerdicts(t *testing.T) {
	before := synthetic(1, "http://127.0.0.1:1000", 200, map[string]float64{"/double": 2, "/same": 4, "/edge": 5}, 1)
	after := synthetic(2, "http://127.0.0.1:2000", 200, map[string]float64{"/double": 4, "/same": 4, "/edge": 6}, 3)
	few := synthetic(3, "http://127.0.0.1:1000", 10, map[string]float64{"/few": 2}, 0)
	few2 := synthetic(4, "http://127.0.0.1:2000", 10, map[string]float64{"/few": 8}, 0)
	merge := func(a, b *Trace) *Trace {
		off := len(a.Labels)
		a.Labels = append(a.Labels, b.Labels...)
		for _, r := range b.Requests {
			r.Labels += off
			a.Requests = append(a.Requests, r)
		}
		return a
	}
	before, after = merge(before, few), merge(after, few2)
	d := Diff(before, after, []report.Grouping{report.ByName}, true, 0.20, 0.05, 3)
	want := map[string]Verdict{"/double": Regression, "/same": OK, "/edge": Inconclusive, "/few": Inconclusive}
	if len(d.Rows) != len(want) {
		t.Fatalf("%d rows, want %d: %+v", len(d.Rows), len(want), d.Rows)
	}
	for _, r := range d.Rows {
		if r.Verdict != want[r.Key] {
			t.Errorf("%s: %s (%s), CPU change %s [%s, %s]; want %s", r.Key, r.Verdict, r.Why, FormatChange(r.CPU.Change), FormatChange(r.CPU.Low), FormatChange(r.CPU.High), want[r.Key])
		}
		if r.Key == "/double" && (r.CPU.Low > 1 || r.CPU.High < 1) {
			t.Errorf("/double: interval %s to %s does not hold the true +100%%", FormatChange(r.CPU.Low), FormatChange(r.CPU.High))
		}
		if r.Key == "/same" && (len(r.GrownStacks) != 1 || r.GrownStacks[0].PerRequest != 2e6) {
			t.Errorf("/same: grown stacks %+v, want the lock +2 ms per request", r.GrownStacks)
		}
	}
	if regs := d.Regressions(); len(regs) != 1 || regs[0].Key != "/double" {
		t.Errorf("regressions %+v", regs)
	}
}

// TestDiffCoverage: with both runs drawn from the same distribution, the
// 95% intervals of 200 rows hold the true change (0) in about 95% of rows,
// and at --fail-above 10% none is a regression (the family-wise rate).
func TestDiffCoverage(t *testing.T) {
	cpu := map[string]float64{}
	for i := range 200 {
		cpu["/r"+string(rune('a'+i%26))+string(rune('a'+i/26))] = 1 + float64(i%7)
	}
	before := synthetic(10, "http://h", 60, cpu, 0)
	after := synthetic(11, "http://h", 60, cpu, 0)
	d := Diff(before, after, []report.Grouping{report.ByName}, true, 0.10, 0.05, 0)
	d95 := Diff(before, after, []report.Grouping{report.ByName}, true, -1, 0.05*200, 0) // per-row 95%
	held := 0
	for _, r := range d95.Rows {
		if r.CPU.Low <= 0 && r.CPU.High >= 0 {
			held++
		}
	}
	if held < 180 || held > 199 {
		t.Errorf("per-row 95%% intervals held the true change in %d of 200 rows", held)
	}
	if regs := d.Regressions(); len(regs) != 0 {
		t.Errorf("%d false regressions", len(regs))
	}
}
