package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/k6labels/k6labels/cmd/k6labels/internal/fixture"
)

// shiftedFx4 writes the http_reqs points of the real local/ run's k6 json
// with their times moved by d, and returns the file and how many requests
// end up in [from, to].
func shiftedFx4(t *testing.T, d time.Duration, from, to time.Time) (string, int) {
	t.Helper()
	return shiftedK6(t, filepath.Join("local", "run-fx4.json.gz"), d, from, to)
}

// shiftedK6 writes the http_reqs points of the fixtures' k6 json file rel
// with their times moved by d, and returns the file and how many requests
// end up in [from, to].
func shiftedK6(t *testing.T, rel string, d time.Duration, from, to time.Time) (string, int) {
	t.Helper()
	f, err := os.Open(filepath.Join(fixture.Dir(t), rel))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	in := 0
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if !bytes.Contains(sc.Bytes(), []byte(`"http_reqs"`)) {
			continue
		}
		var p map[string]any
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			t.Fatal(err)
		}
		if p["type"] != "Point" {
			continue
		}
		data := p["data"].(map[string]any)
		tm, err := time.Parse(time.RFC3339Nano, data["time"].(string))
		if err != nil {
			t.Fatal(err)
		}
		tm = tm.Add(d)
		data["time"] = tm.Format(time.RFC3339Nano)
		if !tm.Before(from) && !tm.After(to) {
			in++
		}
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		out.Write(append(b, '\n'))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	name := strings.TrimSuffix(filepath.Base(rel), ".json.gz")
	path := filepath.Join(t.TempDir(), fmt.Sprintf("%s-shifted-%s.json", name, d))
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, in
}

// TestTimeAlignment: the real local/ profile (18:15:52.294–18:16:14.296)
// with its own k6 results moved in time. Moved an hour: no request in
// the profile's span, refused with both spans. Moved 10 s: the 10.9 s in
// common are more than half of the 20 s run: only the requests inside the
// span are counted, and the report says so with the numbers. Moved 15 s:
// 5.9 s in common, refused.
func TestTimeAlignment(t *testing.T) {
	t.Parallel() // no CPU profile, environment or global of the package
	cpu := filepath.Join(fixture.Dir(t), "local", "fx4.cpu.pb.gz")
	start := time.Date(2026, 12, 2, 18, 15, 52, 294096038, time.UTC)
	end := start.Add(22001806416)
	slack := 100 * time.Millisecond

	later, _ := shiftedFx4(t, time.Hour, start, end)
	code, _, stderr := runCLI(t, "report", "--k6", later, cpu)
	if code != exitError {
		t.Errorf("k6 results an hour later: exit %d, want %d: %s", code, exitError, stderr)
	}
	for _, w := range []string{"the k6 results are not of the profiled time", "none of its 9764 requests",
		"2026-12-02T19:15:53.384792196Z", "2026-12-02T18:15:52.294096038Z", "give the k6 results of the run the profiles were taken during"} {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr does not say %q: %s", w, stderr)
		}
	}

	partial, inside := shiftedFx4(t, 10*time.Second, start.Add(-slack), end.Add(slack))
	code, out, stderr := runCLI(t, "report", "--k6", partial, "--by", "run", cpu)
	if code != exitOK {
		t.Fatalf("k6 results 10 s later: exit %d: %s", code, stderr)
	}
	if inside == 0 || inside >= 9764 {
		t.Fatalf("%d requests inside: the shift does not make a partial overlap", inside)
	}
	for _, w := range []string{fmt.Sprintf("k6 results: %d requests", inside),
		fmt.Sprintf("Counted: only the %d of 9764 k6 requests made while the profiles ran; the %d others", inside, 9764-inside)} {
		if !strings.Contains(out, w) {
			t.Errorf("report does not say %q:\n%s", w, out)
		}
	}

	// diff says it of the side whose requests were left out, in text and json.
	k6 := filepath.Join(fixture.Dir(t), "local", "run-fx4.json.gz")
	code, out, stderr = runCLI(t, "diff", "--base-profile", cpu, "--base-k6", k6, "--profile", cpu, "--k6", partial)
	if code != exitOK {
		t.Fatalf("diff with k6 results 10 s later: exit %d: %s", code, stderr)
	}
	if w := fmt.Sprintf("after: Counted: only the %d of 9764 k6 requests made while the profiles ran", inside); !strings.Contains(out, w) || strings.Contains(out, "before: Counted") {
		t.Errorf("diff does not say %q of the after run alone:\n%s", w, out)
	}
	_, out, _ = runCLI(t, "diff", "--format", "json", "--base-profile", cpu, "--base-k6", k6, "--profile", cpu, "--k6", partial)
	if w := fmt.Sprintf(`"requests_outside_profiles": %d`, 9764-inside); !strings.Contains(out, w) {
		t.Errorf("diff json does not say %s:\n%s", w, out)
	}
	// Two runs per side: the sums.
	_, out, _ = runCLI(t, "diff", "--base-profile", cpu, "--base-k6", k6, "--base-profile", cpu, "--base-k6", k6,
		"--profile", cpu, "--k6", partial, "--profile", cpu, "--k6", partial)
	if w := fmt.Sprintf("after: Counted: only the %d of %d k6 requests made while the profiles ran", 2*inside, 2*9764); !strings.Contains(out, w) {
		t.Errorf("diff of two runs per side does not say %q:\n%s", w, out)
	}

	little, _ := shiftedFx4(t, 15*time.Second, start, end)
	code, _, stderr = runCLI(t, "report", "--k6", little, cpu)
	if code != exitError || !strings.Contains(stderr, "have only 5.9s in common, less than 50% of the shorter") {
		t.Errorf("k6 results 15 s later: exit %d, want %d and the overlap: %s", code, exitError, stderr)
	}
}
