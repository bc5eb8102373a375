package output_test

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/k6labels/k6labels/cmd/k6labels/output"
	"github.com/k6labels/k6labels/cmd/k6labels/report"
	"github.com/k6labels/k6labels/cmd/k6labels/trace"
)

// syntheticTrace returns a trace whose rows have n requests each, with CPU
// per request drawn around the given ms (±20% uniform) and wall twice that;
// the k6_name values are URLs on host, and each request blocks on stack for
// blockedMs. It is trace's test helper synthetic, through exported fields.
func syntheticTrace(seed uint64, host string, n int, cpuMs map[string]float64, blockedMs float64) *trace.Trace {
	rng := rand.New(rand.NewPCG(seed, 1))
	t := &trace.Trace{Cut: map[int]int{}, BlockedStacks: map[trace.StackKey]int64{},
		Stacks: []trace.Stack{{Reason: trace.Sync, Frames: []string{"sync.(*Mutex).Lock x.go:1"}}}}
	for path, ms := range cpuMs {
		li := len(t.Labels)
		t.Labels = append(t.Labels, map[string]string{report.LabelName: host + path, report.LabelScenario: "s"})
		for range n {
			c := ms * 1e6 * (0.8 + 0.4*rng.Float64())
			r := trace.Request{Labels: li, CPU: int64(c), Wall: int64(2*c + blockedMs*1e6)}
			r.Blocked[trace.Sync] = int64(blockedMs * 1e6)
			t.Requests = append(t.Requests, r)
		}
		t.BlockedStacks[trace.StackKey{Labels: li, Stack: 0}] = int64(float64(n) * blockedMs * 1e6)
	}
	return t
}

// TestWriteTraceDiff: the comparison of trace's TestDiffVerdicts, written as
// text, names the verdicts, why a row is inconclusive, and the lock whose
// blocked time grew.
func TestWriteTraceDiff(t *testing.T) {
	before := syntheticTrace(1, "http://127.0.0.1:1000", 200, map[string]float64{"/double": 2, "/same": 4, "/edge": 5}, 1)
	after := syntheticTrace(2, "http://127.0.0.1:2000", 200, map[string]float64{"/double": 4, "/same": 4, "/edge": 6}, 3)
	few := syntheticTrace(3, "http://127.0.0.1:1000", 10, map[string]float64{"/few": 2}, 0)
	few2 := syntheticTrace(4, "http://127.0.0.1:2000", 10, map[string]float64{"/few": 8}, 0)
	merge := func(a, b *trace.Trace) *trace.Trace {
		off := len(a.Labels)
		a.Labels = append(a.Labels, b.Labels...)
		for _, r := range b.Requests {
			r.Labels += off
			a.Requests = append(a.Requests, r)
		}
		return a
	}
	before, after = merge(before, few), merge(after, few2)
	d := trace.Diff(before, after, []report.Grouping{report.ByName}, true, 0.20, 0.05, 3)
	var out bytes.Buffer
	if err := output.WriteTraceDiff(&out, d, output.Text); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"regression", "inconclusive (fewer than 30 requests on a side)", "Blocking stacks that grew in k6_name=/same", "sync.(*Mutex).Lock"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("output lacks %q:\n%s", s, out.String())
		}
	}
}

// TestWriteTraceWarns: a trace report whose process CPU is below
// trace.TrustedCPURatio of the trace's on-CPU time warns of the host's share
// in text and markdown, and carries the warning in json.
func TestWriteTraceWarns(t *testing.T) {
	tr := syntheticTrace(1, "http://h", 50, map[string]float64{"/a": 2}, 1)
	tr.GoroutineCPU = 10e9
	rep := &trace.Report{Trace: tr, Rows: tr.Rows([]report.Grouping{report.ByName}, 3), ProcessCPU: 5e9, ScaleCPU: true}
	for f, want := range map[output.Format]string{output.Text: "warning: the host ran", output.Markdown: "warning: the host ran", output.JSON: `"cpu_warning": "the host ran`} {
		var out bytes.Buffer
		if err := output.WriteTrace(&out, rep, f); err != nil || !strings.Contains(out.String(), want) {
			t.Errorf("%s: the report does not warn of the host's share %.2f (%v):\n%s", f, rep.CPURatio(), err, out.String())
		}
	}
}
