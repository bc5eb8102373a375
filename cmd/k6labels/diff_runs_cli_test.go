package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/k6labels/k6labels/cmd/k6labels/internal/fixture"
)

// TestDiffSeveralRuns: five runs per side (repeated --base-k6/--base-profile
// pairs) are compared by the rank test: the same profile on both sides is
// within noise (and /bike inconclusive); /car made 30% costlier in every after run is worse and
// fails the gate; a side with more k6 files than profiles is refused.
func TestDiffSeveralRuns(t *testing.T) {
	t.Parallel() // no CPU profile, environment or global of the package
	fx := fixture.Dir(t)
	dir := t.TempDir()
	cpu := filepath.Join(fx, "local", "fx4.cpu.pb.gz")
	k6 := fx4Requests(t, dir)
	costlier := carCostlier(t, cpu, dir)
	runs := func(flagK6, flagProfile, profile string, n int) []string {
		var args []string
		for range n {
			args = append(args, flagK6, k6, flagProfile, profile)
		}
		return args
	}
	args := func(after string) []string {
		a := []string{"diff", "--by", "name", "--normalize", "none", "--fail-above", "10%", "--format", "json", "--write-profiles", ""}
		a = append(a, runs("--base-k6", "--base-profile", cpu, 5)...)
		return append(a, runs("--k6", "--profile", after, 5)...)
	}
	var d struct {
		Test string `json:"test"`
		Runs [2]int `json:"runs"`
		Rows []struct {
			Key     string `json:"key"`
			Verdict string `json:"verdict"`
		} `json:"rows"`
	}
	// The same profile five times: no row changed, and the rows with many
	// samples are same; /bike's 245 samples a run cannot vouch for 10% with
	// five runs, however well the runs agree (their Poisson noise).
	code, out, stderr := runCLI(t, args(cpu)...)
	if code != exitInconclusive || !strings.Contains(stderr, "k6_name=/bike sees +") {
		t.Errorf("same runs: exit %d, want %d for /bike; stderr: %s", code, exitInconclusive, stderr)
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, r := range d.Rows {
		if (r.Key == "/car" || r.Key == "/scooter") && r.Verdict != "same" || r.Verdict == "worse" || r.Verdict == "better" {
			t.Errorf("same runs: %s %s", r.Key, r.Verdict)
		}
	}
	if d.Test != "rank" || d.Runs != [2]int{5, 5} {
		t.Errorf("test %q, runs %v; want rank, [5 5]", d.Test, d.Runs)
	}
	code, out, stderr = runCLI(t, args(costlier)...)
	if code != exitRegression || !strings.Contains(stderr, "k6_name=/car +30.0%") {
		t.Errorf("/car +30%% in every after run: exit %d, want %d; stderr: %s", code, exitRegression, stderr)
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, r := range d.Rows {
		if (r.Key == "/car") != (r.Verdict == "worse") {
			t.Errorf("%s: %s", r.Key, r.Verdict)
		}
	}
	// Two runs per side cannot reach the level: inconclusive, with the runs
	// per side that would do.
	two := []string{"diff", "--by", "name", "--fail-above", "10%", "--write-profiles", ""}
	two = append(two, runs("--base-k6", "--base-profile", cpu, 2)...)
	two = append(two, runs("--k6", "--profile", cpu, 2)...)
	code, _, stderr = runCLI(t, two...)
	if code != exitInconclusive || !strings.Contains(stderr, "k6_name=/car cannot be tested with so few runs; about 5 runs per side would make it testable (2 and 2 now)") {
		t.Errorf("2 runs per side: exit %d, want %d; stderr: %s", code, exitInconclusive, stderr)
	}
	code, _, stderr = runCLI(t, "diff", "--base-k6", k6, "--base-k6", k6, "--base-profile", cpu, "--k6", k6, "--profile", cpu)
	if code != exitUsage || !strings.Contains(stderr, "2 k6 results files for the base run but 1 profiles: with several runs per side, give one profile per k6 file, in the same order") {
		t.Errorf("k6 files without profiles: exit %d; stderr: %s", code, stderr)
	}
}
