package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/k6labels/k6labels/cmd/k6labels/internal/fixture"
)

// k6Content returns the decompressed content of a local/ fixture.
func k6Content(t *testing.T, name string) []byte {
	t.Helper()
	b, err := io.ReadAll(fixture.Gunzip(t, filepath.Join(fixture.Dir(t), "local", name)))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestK6StillWritingRefused: k6 results cut before the profile's end (the
// gzip json cut as k6 leaves it until it exits, the plain json and csv cut
// mid-line ten seconds into the run) are refused with an error that says k6
// is still writing them, the two times, and what to do.
func TestK6StillWritingRefused(t *testing.T) {
	t.Parallel() // no CPU profile, environment or global of the package
	fx := fixture.Dir(t)
	cpu := filepath.Join(fx, "local", "fx4.cpu.pb.gz")
	gz, err := os.ReadFile(filepath.Join(fx, "local", "run-fx4.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files := map[string][]byte{
		"run.json.gz": gz[:400000],
		"run.json":    k6Content(t, "run-fx4.json.gz")[:20000123],
		"run.csv":     k6Content(t, "run-fx4.csv.gz")[:10000123],
	}
	for name, b := range files {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, stderr := runCLI(t, "report", "--k6", path, cpu)
		for _, want := range []string{
			"k6 results " + path + ": k6 is still writing the file",
			"before the profiles' end (2026-12-02T18:16:14.295902454Z)",
			"wait for k6 to finish, or run it with a plain --out json=FILE",
			"k6 completes gzip output only when it exits",
		} {
			if code != exitError || out != "" || !strings.Contains(stderr, want) {
				t.Errorf("%s: exit %d, stderr does not say %q: %s", name, code, want, stderr)
			}
		}
		if !regexp.MustCompile(`its last request \(2026-12-02T18:16:0\d(\.\d+)?Z\)`).MatchString(stderr) {
			t.Errorf("%s: the last request's time is not said: %s", name, stderr)
		}
	}
}

// TestK6CutCoveringProfile: the json cut in the middle of its last
// http_reqs line still covers the profile's span: the report is made, with
// the requests of the complete lines and a note that the last line was
// left out.
func TestK6CutCoveringProfile(t *testing.T) {
	t.Parallel() // no CPU profile, environment or global of the package
	content := k6Content(t, "run-fx4.json.gz")
	last := bytes.LastIndex(content, []byte(`{"metric":"http_reqs"`))
	cut := content[:last+60]
	// Counted apart: the http_reqs lines before the cut (all of value 1,
	// in a scenario and in the profile's span in this run).
	want := bytes.Count(content[:last], []byte(`{"metric":"http_reqs"`))
	if want != 9763 {
		t.Fatalf("%d http_reqs lines before the cut, want the run's 9764 less one", want)
	}
	path := filepath.Join(t.TempDir(), "run.json")
	if err := os.WriteFile(path, cut, 0o644); err != nil {
		t.Fatal(err)
	}
	cpu := filepath.Join(fixture.Dir(t), "local", "fx4.cpu.pb.gz")
	code, out, stderr := runCLI(t, "report", "--k6", path, "--format", "json", cpu)
	if code != exitOK || !strings.Contains(out, `"requests": 9763,`) {
		t.Errorf("exit %d, want 9763 requests: %s\n%.600s", code, stderr, out)
	}
	note := fmt.Sprintf(`"the k6 results file was still being written: the last line (%d) is incomplete (its 60 bytes are left out); the requests counted are those of its complete lines"`,
		bytes.Count(content[:last], []byte("\n"))+1)
	if !strings.Contains(out, note) {
		t.Errorf("no note of the incomplete line: %s", out)
	}
	code, out, _ = runCLI(t, "report", "--k6", path, cpu)
	if code != exitOK || !strings.Contains(out, "Note: the k6 results file was still being written: the last line") {
		t.Errorf("text: exit %d, no note: %s", code, out)
	}
	// diff says it too, of the run it is of.
	whole := filepath.Join(fixture.Dir(t), "local", "run-fx4.json.gz")
	code, out, stderr = runCLI(t, "diff", "--base-k6", whole, "--base-profile", cpu, "--k6", path, "--profile", cpu)
	if code != exitOK || !strings.Contains(out, "Note: new run: the k6 results file was still being written: the last line") {
		t.Errorf("diff: exit %d, no note of the new run's file: %s\n%s", code, stderr, out)
	}
}

// TestK6CutOtherRun: results cut mid-line whose requests are a day before
// the profile's are another run's (not refused as still being written, which
// waiting could not mend); with --pyroscope, cut results are refused, since
// a run still going has not all its CPU in Pyroscope either.
func TestK6CutOtherRun(t *testing.T) {
	t.Parallel() // no CPU profile, environment or global of the package
	fx := fixture.Dir(t)
	dir := t.TempDir()
	cut := func(name string, b []byte) string {
		last := bytes.LastIndexByte(b[:len(b)-1], '\n') + 1 // the last line, cut in its middle
		path := filepath.Join(dir, "cut-"+name+".json")
		if err := os.WriteFile(path, b[:last+(len(b)-last)/2], 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	dayBefore, _ := shiftedFx4(t, -24*time.Hour, time.Time{}, time.Time{})
	b, err := os.ReadFile(dayBefore)
	if err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, "report", "--k6", cut("day-before", b), filepath.Join(fx, "local", "fx4.cpu.pb.gz"))
	if code != exitError || !strings.Contains(stderr, "the k6 results are not of the profiled time") || strings.Contains(stderr, "still writing") {
		t.Errorf("another run's cut results: exit %d, want %d and not of the profiled time: %s", code, exitError, stderr)
	}

	srv, _, _ := pyrServer(t)
	b, err = io.ReadAll(fixture.Gunzip(t, filepath.Join(fx, "k6", "run-fx1.json.gz")))
	if err != nil {
		t.Fatal(err)
	}
	fx1 := cut("fx1", b)
	code, _, stderr = pyrRun(t, pyrArgs("report", srv.URL, "--run-id", "fx1", "--k6", fx1)...)
	if code != exitError || !strings.Contains(stderr, "k6 is still writing the file") || !strings.Contains(stderr, "before the profiles' end (2026-12-02T18:04:00Z)") {
		t.Errorf("--pyroscope, --end after the cut: exit %d, want %d and still writing: %s", code, exitError, stderr)
	}
	// Without --start and --end, the window is the k6 results' own.
	code, _, stderr = pyrRun(t, "report", "--pyroscope", srv.URL, "--service", pyrService, "--run-id", "fx1", "--k6", fx1)
	if code != exitError || !strings.Contains(stderr, "k6 is still writing the file") || !strings.Contains(stderr, "with --pyroscope the run must be over") {
		t.Errorf("--pyroscope with cut results: exit %d, want %d and the run must be over: %s", code, exitError, stderr)
	}
}
