package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/k6labels/k6labels/cmd/k6labels/pyroscope/pyroscopetest"
	"github.com/k6labels/k6labels/cmd/k6labels/report"
)

// TestPyroscopeConnectionGoroutines: the run of TestConnectionGoroutines
// pushed to a Pyroscope server (the replay server answering from its real
// profile) gives the same report as its pprof file: the connection's loops
// in the row of connection goroutines, in no k6 row, with the note; one
// SelectMergeProfile per name row finds them. Without them (their samples
// dropped from the profile) the report asks one SelectMergeProfile only.
func TestPyroscopeConnectionGoroutines(t *testing.T) {
	run := recordConnRun(t)
	p, err := profile.ParseData(run.profile)
	if err != nil {
		t.Fatal(err)
	}
	k6file := filepath.Join(t.TempDir(), "run.json")
	if err := os.WriteFile(k6file, []byte(run.k6), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := pyroscopetest.NewServer(t, nil)
	srv.AddProfile("shop", p)
	args := []string{"report", "--pyroscope", srv.URL, "--service", "shop", "--wait", "0", "--k6", k6file, "--by", "name"}
	checkConnReport(t, run, args...)
	names := map[string]bool{}
	for _, s := range p.Sample {
		if v := s.Label[report.LabelName]; len(v) > 0 && !report.ConnGoroutine(s) {
			names[v[0]] = true
		}
	}
	// Two reports (json, text), each of the run's profile and one per row.
	if got, want := srv.Hits()["profile SelectMergeProfile"], 2*(1+len(names)); got != want {
		t.Errorf("%d SelectMergeProfile queries, want %d: the run's and one per name row (%d), twice", got, want, len(names))
	}

	plain := p.Copy()
	plain.Sample = slices.DeleteFunc(plain.Sample, report.ConnGoroutine)
	srv = pyroscopetest.NewServer(t, nil)
	srv.AddProfile("shop", plain)
	args[2] = srv.URL
	if code, out, stderr := runCLI(t, args...); code != exitOK || strings.Contains(out, report.ConnectionRow) {
		t.Errorf("exit %d, %s; without connection goroutines the report has their row:\n%s", code, stderr, out)
	}
	if got := srv.Hits()["profile SelectMergeProfile"]; got != 1 {
		t.Errorf("without connection goroutines: %d SelectMergeProfile queries, want the run's only", got)
	}
}
