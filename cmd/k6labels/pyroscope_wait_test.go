package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/k6labels/k6labels/cmd/k6labels/k6results"
	"github.com/k6labels/k6labels/cmd/k6labels/report"
)

// simClock is a simulated clock shared by the command's wait and the
// replay server: sleeping advances it, so no test waits for real.
type simClock struct {
	mu    sync.Mutex
	t     time.Time
	slept time.Duration
}

func (s *simClock) Now() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.t
}

// useSimClock makes the command's wait run on a simulated clock set to t.
func useSimClock(t *testing.T, at time.Time) *simClock {
	sim := &simClock{t: at}
	oldNow, oldSleep := now, sleep
	now = sim.Now
	sleep = func(ctx context.Context, d time.Duration) error {
		sim.mu.Lock()
		defer sim.mu.Unlock()
		sim.t = sim.t.Add(d)
		sim.slept += d
		return ctx.Err()
	}
	t.Cleanup(func() { now, sleep = oldNow, oldSleep })
	return sim
}

// fx2Report runs report of fx2 in json against the replay server whose
// answers fill in on the simulated clock, which starts 1 s after fx2's last
// request; it returns the exit code, the k6 CPU, the notes and stderr.
func fx2Report(t *testing.T, args ...string) (int, float64, []string, string, *simClock) {
	t.Helper()
	srv, _, fx := pyrServer(t)
	k6 := filepath.Join(fx, "k6", "run-fx2.json.gz")
	k, err := k6results.ReadFile(k6)
	if err != nil {
		t.Fatal(err)
	}
	sim := useSimClock(t, k.End.Add(time.Second))
	srv.SetClock(sim.Now, report.PyroscopeWindow)
	code, out, errOut := pyrRun(t, pyrArgs("report", srv.URL, append([]string{"--k6", k6, "--run-id", "fx2", "--by", "run,scenario", "--format", "json"}, args...)...)...)
	var rep struct {
		K6CPU float64  `json:"k6_cpu_seconds"`
		Notes []string `json:"notes"`
	}
	if code == exitOK {
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
	}
	return code, rep.K6CPU, rep.Notes, errOut, sim
}

// TestPyroscopeWaitsForUpload: right after fx2's k6 exits, Pyroscope does
// not yet hold its last 30 s window (README: 15.54 s of its 23.09 s are in
// the profile stamped at 1796234590.9 s, uploaded when that window ends).
// The command waits, asking every 5 s, until a profile stamped within 30 s
// of the run's end is there, then answers with all of the run's CPU and no
// warning.
func TestPyroscopeWaitsForUpload(t *testing.T) {
	code, cpu, notes, errOut, sim := fx2Report(t)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !pyrClose(cpu, 23.09) {
		t.Errorf("k6 CPU %v s, want all of fx2's 23.09 s", cpu)
	}
	if !strings.Contains(errOut, "k6labels: waiting up to 45s (--wait)") || strings.Contains(errOut, "warning") {
		t.Errorf("stderr: %q", errOut)
	}
	for _, n := range notes {
		if strings.Contains(n, "uploaded") {
			t.Errorf("note of a complete answer: %q", n)
		}
	}
	// The window stamped 1796234590.9 s is uploaded at 1796234620.9 s:
	// 19.8 s after the run's last request, 1 s after the clock started.
	if sim.slept < 15*time.Second || sim.slept > 25*time.Second {
		t.Errorf("waited %s of simulated time, want about 19 s", sim.slept)
	}
}

// TestPyroscopeIncompleteWarns: with --wait 0 the same moment answers
// with only the uploaded part (7.55 s, README) and says so on stderr and in
// the report's notes; --strict refuses instead (exit 1).
func TestPyroscopeIncompleteWarns(t *testing.T) {
	code, cpu, notes, errOut, _ := fx2Report(t, "--wait", "0s")
	if code != exitOK || !pyrClose(cpu, 7.55) {
		t.Fatalf("exit %d, k6 CPU %v (want 0 and the 7.55 s uploaded so far): %s", code, cpu, errOut)
	}
	const want = "Pyroscope may not hold all of the run's CPU yet: no profile of the service is stamped after 2026-12-02T18:02:51Z (the run's end, 2026-12-02T18:03:21Z, less pyroscope-go's 30s window"
	if !strings.Contains(errOut, "k6labels: warning: "+want) {
		t.Errorf("stderr lacks the warning:\n%s", errOut)
	}
	found := false
	for _, n := range notes {
		found = found || strings.HasPrefix(n, want) && strings.HasSuffix(n, "use --strict to fail instead")
	}
	if !found {
		t.Errorf("notes lack the warning: %q", notes)
	}

	code, _, _, errOut, _ = fx2Report(t, "--wait", "0s", "--strict")
	if code != exitError || !strings.Contains(errOut, "k6labels report: incomplete: "+want) || !strings.Contains(errOut, "--strict refuses to answer") {
		t.Errorf("--strict: exit %d: %s", code, errOut)
	}
}
