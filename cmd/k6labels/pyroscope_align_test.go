package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The time of the recorded runs' CPU in Pyroscope, from the SelectSeries in
// 1 s steps (README, exchange 36): fx1's one point at 18:02:41, fx2's at
// 18:02:41 (7.55 s) and 18:03:11 (15.54 s). A point at t holds profiles
// stamped in (t−1s, t], each holding the 30 s after its stamp.
const (
	fx1CPUSpan = "2026-12-02T18:02:40Z – 2026-12-02T18:03:11Z (31.0s)"
	fx2CPUSpan = "2026-12-02T18:02:40Z – 2026-12-02T18:03:41Z (61.0s)"
)

// TestPyroscopeStaleK6Refused: a run's CPU with the k6 results of the
// other run is refused (exit 1, nothing on stdout), with both time ranges.
// fx1's CPU lies in 18:02:40–18:03:11, fx2's requests in 18:03:06–18:03:21:
// 4.9 s in common, less than half. fx2's CPU lies in 18:02:40–18:03:41,
// which holds all of fx1's requests (18:02:45–18:03:00), but 15.54 s of its
// 23.09 s is in the profile stamped at 18:03:10.9, whose 30 s hold none of
// them: fx1's requests can account for 7.55 s at most, less than half.
func TestPyroscopeStaleK6Refused(t *testing.T) {
	t.Parallel() // no CPU profile, environment or global of the package
	for _, c := range []struct {
		run, k6 string
		want    []string
	}{
		{"fx2", "run-fx1.json.gz", []string{
			"can account for only 7.55s of the 23.09s of CPU in the profiles (" + fx2CPUSpan + "), less than 50%: the other 15.54s is in profiles whose time holds none of them",
			"its requests (2026-12-02T18:02:45.970286149Z – 2026-12-02T18:03:00.965577796Z (15.0s))",
		}},
		{"fx1", "run-fx2.json.gz", []string{
			"its requests (2026-12-02T18:03:06.090137908Z – 2026-12-02T18:03:21.094083218Z (15.0s)) and the profiles (" + fx1CPUSpan + ") have only 4.9s in common, less than 50% of the shorter",
			"the profiles' time span is that of run fx1's CPU in Pyroscope",
		}},
		{"fx1", "run-fx2.csv.gz", []string{
			"its requests (2026-12-02T18:03:06Z – 2026-12-02T18:03:21Z (15.0s)) and the profiles (" + fx1CPUSpan + ") have only 5.0s in common",
		}},
	} {
		t.Run(c.run+" with "+c.k6, func(t *testing.T) {
			srv, _, fx := pyrServer(t)
			k6 := filepath.Join(fx, "k6", c.k6)
			code, out, errOut := pyrRun(t, pyrArgs("report", srv.URL, "--run-id", c.run, "--k6", k6, "--by", "run")...)
			if code != exitError || out != "" {
				t.Fatalf("exit %d, want %d and no report: %s\n%s", code, exitError, errOut, out)
			}
			for _, w := range append(c.want, "k6 results "+k6+": the k6 results are not of the profiled time",
				"give the k6 results of the run the profiles were taken during",
				"a profile is stamped with the start of pyroscope-go's 30s window, to the second") {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr does not say %q:\n%s", w, errOut)
				}
			}
		})
	}
}

// TestPyroscopeDiffStaleK6Refused: diff checks each side as report does:
// the k6 results of the other run on either side are refused, naming it.
func TestPyroscopeDiffStaleK6Refused(t *testing.T) {
	t.Parallel() // no CPU profile, environment or global of the package
	for _, c := range []struct {
		side           string
		baseK6, newK6  string
		want           string
		baseRun, newID string
	}{
		{"base", "run-fx2.json.gz", "run-fx2.json.gz", "base run: k6 results", "fx1", "fx2"},
		{"new", "run-fx1.json.gz", "run-fx1.json.gz", "new run: k6 results", "fx1", "fx2"},
	} {
		t.Run(c.side, func(t *testing.T) {
			srv, _, fx := pyrServer(t)
			code, out, errOut := pyrRun(t, pyrArgs("diff", srv.URL,
				"--base-k6", filepath.Join(fx, "k6", c.baseK6), "--base-run-id", c.baseRun,
				"--k6", filepath.Join(fx, "k6", c.newK6), "--run-id", c.newID, "--by", "scenario")...)
			if code != exitError || out != "" {
				t.Fatalf("exit %d, want %d and no diff: %s\n%s", code, exitError, errOut, out)
			}
			for _, w := range []string{c.want, "the k6 results are not of the profiled time"} {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr does not say %q:\n%s", w, errOut)
				}
			}
		})
	}
}

// TestPyroscopeOwnK6Aligned: each recorded run with its own k6 results,
// json or csv (whole seconds), counts every request and says nothing of
// alignment: the run's requests are inside its CPU's time.
func TestPyroscopeOwnK6Aligned(t *testing.T) {
	t.Parallel() // no CPU profile, environment or global of the package
	want := map[string]string{"fx1": "7273", "fx2": "6971"}
	for _, id := range []string{"fx1", "fx2"} {
		for _, ext := range []string{"json", "csv"} {
			t.Run(id+" "+ext, func(t *testing.T) {
				srv, _, fx := pyrServer(t)
				k6 := filepath.Join(fx, "k6", "run-"+id+"."+ext+".gz")
				code, out, errOut := pyrRun(t, pyrArgs("report", srv.URL, "--run-id", id, "--k6", k6, "--by", "run")...)
				if code != exitOK || errOut != "" {
					t.Fatalf("exit %d: %s", code, errOut)
				}
				if !strings.Contains(out, "k6 results: "+want[id]+" requests") || strings.Contains(out, "Counted:") {
					t.Errorf("not every request counted, or a line of alignment:\n%s", out)
				}
			})
		}
	}
}

// TestPyroscopePartialK6: recorded k6 results moved in time, against the
// recorded CPU. fx1's moved 10 s earlier (18:02:35.97–18:02:50.97) are
// partly before fx1's CPU (from 18:02:40), 11 s in common of 15: only the
// requests inside are counted, and the header says so. fx2's moved 6 s
// later (18:03:12.09–18:03:27.09) are inside fx2's CPU, but the 7.55 s of
// the profile stamped at 18:02:40.9 (to 18:03:11) are before all of them:
// less than half of the run's CPU, so it is counted, with a warning and a
// note.
func TestPyroscopePartialK6(t *testing.T) {
	t.Parallel() // no CPU profile, environment or global of the package
	slack := 100 * time.Millisecond
	from := time.Date(2026, 12, 2, 18, 2, 40, 0, time.UTC).Add(-slack)
	to := time.Date(2026, 12, 2, 18, 3, 11, 0, time.UTC).Add(slack)
	t.Run("requests outside", func(t *testing.T) {
		k6, inside := shiftedK6(t, filepath.Join("k6", "run-fx1.json.gz"), -10*time.Second, from, to)
		if inside == 0 || inside >= 7273 {
			t.Fatalf("%d requests inside: the shift does not make a partial overlap", inside)
		}
		srv, _, _ := pyrServer(t)
		code, out, errOut := pyrRun(t, pyrArgs("report", srv.URL, "--run-id", "fx1", "--k6", k6, "--by", "run")...)
		if code != exitOK || errOut != "" {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		for _, w := range []string{fmt.Sprintf("k6 results: %d requests", inside),
			fmt.Sprintf("Counted: only the %d of 7273 k6 requests made while the profiles ran; the %d others", inside, 7273-inside)} {
			if !strings.Contains(out, w) {
				t.Errorf("report does not say %q:\n%s", w, out)
			}
		}
	})
	t.Run("CPU outside", func(t *testing.T) {
		k6, _ := shiftedK6(t, filepath.Join("k6", "run-fx2.json.gz"), 6*time.Second, from, to)
		srv, _, _ := pyrServer(t)
		code, out, errOut := pyrRun(t, pyrArgs("report", srv.URL, "--run-id", "fx2", "--k6", k6, "--by", "run")...)
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		const note = "7.55s of the run's CPU is in Pyroscope profiles whose time holds none of the k6 requests counted (2026-12-02T18:03:12.090137908Z"
		if !strings.Contains(out, "k6 results: 6971 requests") || strings.Contains(out, "Counted:") || !strings.Contains(out, note) {
			t.Errorf("report does not count every request with the note %q:\n%s", note, out)
		}
		if !strings.Contains(errOut, "k6labels: warning: "+note) {
			t.Errorf("no warning on stderr: %q", errOut)
		}
	})
}
