package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/k6labels/k6labels/cmd/k6labels/pyroscope"
)

// TestPyroscopeRunsGolden: the text of runs is the same for two windows a
// few seconds apart (the window is widened to whole 15 s steps, so the
// points' stamps do not move with the time of asking), and exactly this.
func TestPyroscopeRunsGolden(t *testing.T) {
	srv, _, _ := pyrServer(t)
	const golden = `k6 test runs: Pyroscope URL service rideshare.k6labels, 2026-12-02T18:02:15Z to 2026-12-02T18:04:00Z

  k6_test_run_id           first point            last point     CPU
  fx1             2026-12-02T18:02:45Z  2026-12-02T18:02:45Z  23.77s
  fx2             2026-12-02T18:02:45Z  2026-12-02T18:03:15Z  23.09s

A point is the end of the 15s step holding a profile's stamp, the start of its 30s CPU window: a run's requests lie between 15s before its first point and 30s after its last.
`
	for _, w := range [][2]string{{"2026-12-02T18:02:15Z", "2026-12-02T18:04:00Z"}, {"2026-12-02T18:02:22Z", "2026-12-02T18:03:53Z"}} {
		code, out, errOut := pyrRun(t, "runs", "--pyroscope", srv.URL, "--service", pyrService, "--start", w[0], "--end", w[1])
		if got := strings.ReplaceAll(out, srv.URL, "URL"); code != exitOK || got != golden {
			t.Errorf("window %s – %s: exit %d\n%s\nwant:\n%s%s", w[0], w[1], code, got, golden, errOut)
		}
	}
}

// TestPyroscopeManyRunsGolden: k6 results and two runs in the window is an
// error that says so, and not "no data:" (there is data).
func TestPyroscopeManyRunsGolden(t *testing.T) {
	srv, _, fx := pyrServer(t)
	code, out, errOut := pyrRun(t, pyrArgs("report", srv.URL, "--k6", filepath.Join(fx, "k6", "run-fx1.json.gz"))...)
	const golden = "k6labels report: several test runs: Pyroscope URL service rideshare.k6labels holds 2 test runs from 2026-12-02T18:02:15Z to 2026-12-02T18:04:00Z: " +
		"fx1 (23.77s), fx2 (23.09s); pass --run-id to say which one the k6 results are of\n"
	if got := strings.ReplaceAll(errOut, srv.URL, "URL"); code != exitError || out != "" || got != golden {
		t.Errorf("exit %d\n%s%s\nwant:\n%s", code, out, got, golden)
	}
}

// TestPyroscopeFlagsPerCommand: --margin, --wait and --strict are flags of
// the commands that read one run (report, diff), not of runs; the
// connection flags are everyone's.
func TestPyroscopeFlagsPerCommand(t *testing.T) {
	for _, cmd := range []string{"report", "diff", "runs"} {
		code, _, help := pyrRun(t, cmd, "-h")
		if code != exitOK {
			t.Fatalf("%s -h: exit %d", cmd, code)
		}
		for _, f := range []string{"-margin", "-wait", "-strict"} {
			if has := strings.Contains(help, "\n  "+f+" ") || strings.Contains(help, "\n  "+f+"\n"); has != (cmd != "runs") {
				t.Errorf("%s -h lists %s: %v", cmd, f, has)
			}
		}
		for _, f := range []string{"-tenant", "-user", "-password", "-token", "-timeout", "-pyroscope-max-answer"} {
			if !strings.Contains(help, "\n  "+f+" ") {
				t.Errorf("%s -h lacks %s", cmd, f)
			}
		}
		if strings.Contains(help, "(default 45s)") != (cmd != "runs") {
			t.Errorf("%s -h: --wait's default:\n%s", cmd, help)
		}
	}
}

// TestPyroscopeDiffProfilesSayWhichRow: the profiles diff writes from
// Pyroscope are the worst row's; each says which run and row it holds, in a
// comment (server, selector, window) and as labels on its samples.
func TestPyroscopeDiffProfilesSayWhichRow(t *testing.T) {
	t.Parallel() // no CPU profile, environment or global of the package
	srv, _, fx := pyrServer(t)
	dir := t.TempDir()
	code, out, errOut := pyrRun(t, pyrArgs("diff", srv.URL,
		"--base-k6", filepath.Join(fx, "k6", "run-fx1.json.gz"), "--base-run-id", "fx1",
		"--k6", filepath.Join(fx, "k6", "run-fx2.json.gz"), "--run-id", "fx2",
		"--by", "name", "--write-profiles", filepath.Join(dir, "d"))...)
	if code != exitOK {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
	var names []string
	for i, run := range []string{"fx1", "fx2"} {
		f, err := os.Open(filepath.Join(dir, []string{"d.before.pb.gz", "d.after.pb.gz"}[i]))
		if err != nil {
			t.Fatal(err)
		}
		p, err := profile.Parse(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		comment := strings.Join(p.Comments, "\n")
		prefix := "k6labels: Pyroscope URL " + pyroscope.CPUProfileType + ` {service_name="rideshare.k6labels",k6_test_run_id="` + run + `",k6_name="http://127.0.0.1:18080/`
		if got := strings.ReplaceAll(comment, srv.URL, "URL"); !strings.HasPrefix(got, prefix) || !strings.HasSuffix(got, `"} from 2026-12-02T18:02:15Z to 2026-12-02T18:04:00Z`) {
			t.Errorf("%s: comment %q, want %s…", run, got, prefix)
		}
		if len(p.Sample) == 0 {
			t.Fatalf("%s: no samples", run)
		}
		for _, s := range p.Sample {
			if len(s.Label["k6_test_run_id"]) != 1 || s.Label["k6_test_run_id"][0] != run || len(s.Label["k6_name"]) != 1 {
				t.Fatalf("%s: sample labels %v", run, s.Label)
			}
		}
		names = append(names, p.Sample[0].Label["k6_name"][0])
	}
	if names[0] != names[1] {
		t.Errorf("the two files hold rows %q and %q", names[0], names[1])
	}
}

// TestPyroscopeDiffManyBaseRuns: a diff whose base k6 results span two runs
// and no --base-run-id says to pass --base-run-id, not --run-id.
func TestPyroscopeDiffManyBaseRuns(t *testing.T) {
	srv, _, fx := pyrServer(t)
	code, out, errOut := pyrRun(t, pyrArgs("diff", srv.URL, "--base-k6", filepath.Join(fx, "k6", "run-fx1.json.gz"),
		"--k6", filepath.Join(fx, "k6", "run-fx2.json.gz"), "--run-id", "fx2")...)
	const golden = "k6labels diff: base run: several test runs: Pyroscope URL service rideshare.k6labels holds 2 test runs from 2026-12-02T18:02:15Z to 2026-12-02T18:04:00Z: " +
		"fx1 (23.77s), fx2 (23.09s); pass --base-run-id to say which one the k6 results are of\n"
	if got := strings.ReplaceAll(errOut, srv.URL, "URL"); code != exitError || out != "" || got != golden {
		t.Errorf("exit %d\n%s%s\nwant:\n%s", code, out, got, golden)
	}
}
