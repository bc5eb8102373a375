package main

import (
	"encoding/json"
	"math"
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

// TestPyroscopeConnectionGoroutinesOfSeveralRuns: a report that sums two
// runs (no --run-id, no k6 results) of a Pyroscope server, whose merged
// profile is then the whole service's, still counts the connection's loops
// in their own row and in no name or run row.
func TestPyroscopeConnectionGoroutinesOfSeveralRuns(t *testing.T) {
	run := recordConnRun(t)
	p, err := profile.ParseData(run.profile)
	if err != nil {
		t.Fatal(err)
	}
	second := p.Copy()
	for _, s := range second.Sample {
		if len(s.Label[report.LabelRunID]) > 0 {
			s.Label[report.LabelRunID] = []string{"conn2"}
		}
	}
	merged, err := profile.Merge([]*profile.Profile{p, second})
	if err != nil {
		t.Fatal(err)
	}
	srv := pyroscopetest.NewServer(t, nil)
	srv.AddProfile("shop", merged)
	both := connRun{conn: 2 * run.conn, work: 2 * run.work}
	checkConnReport(t, both, "report", "--pyroscope", srv.URL, "--service", "shop", "--wait", "0", "--by", "name")
	file := filepath.Join(t.TempDir(), "both.pb.gz")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := merged.Write(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	checkConnReport(t, both, "report", file, "--by", "name") // the file's source, which splits them apart itself

	code, out, stderr := runCLI(t, "report", "--format", "json", "--pyroscope", srv.URL, "--service", "shop", "--wait", "0", "--by", "run")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep struct {
		Rows []struct {
			Values []string `json:"values"`
			CPU    float64  `json:"cpu_seconds"`
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if len(rep.Rows) != 2 {
		t.Fatalf("%d run rows, want 2:\n%s", len(rep.Rows), out)
	}
	for _, r := range rep.Rows {
		if math.Abs(r.CPU-run.work.Seconds()) > 1e-9 {
			t.Errorf("run %v: %.3fs, want its request work %.3fs, without its connection goroutines' %.3fs", r.Values, r.CPU, run.work.Seconds(), run.conn.Seconds())
		}
	}
}
