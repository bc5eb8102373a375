package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	httppprof "net/http/pprof"
	"os"
	"path/filepath"
	"regexp"
	"runtime/pprof"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/k6labels/k6labels/cmd/k6labels/internal/fixture"
)

// runCLI runs the command with args and returns its exit code and output.
func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// writeGz writes s gzip-compressed to a new file in dir.
func writeGz(t *testing.T, dir, name, s string) string {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write([]byte(s))
	zw.Close()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// heapProfile writes this process's heap profile (runtime/pprof) to a file.
func heapProfile(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "heap.pb.gz")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestErrorMessages runs the command on each kind of bad input a user can
// meet and checks the exit code and that the message names the problem and
// what to do about it.
func TestErrorMessages(t *testing.T) {
	fx := fixture.Dir(t)
	dir := t.TempDir()
	cpu := filepath.Join(fx, "local", "fx4.cpu.pb.gz")
	k6 := filepath.Join(fx, "local", "run-fx4.json.gz")
	unlabelled := filepath.Join(fx, "profiles", "fx1.cpu.pb.gz") // Pyroscope's merged profile: no labels
	heap := heapProfile(t, dir)
	noReqs := writeGz(t, dir, "vus.json.gz",
		`{"type":"Metric","data":{"name":"vus","type":"gauge"},"metric":"vus"}`+"\n"+
			`{"metric":"vus","type":"Point","data":{"time":"2026-12-02T18:15:53Z","value":3,"tags":{}}}`+"\n")
	// k6 results whose requests carry a tags.name that the service's labels
	// do not: they name the same routes by URL.
	var named strings.Builder
	for _, n := range []string{"order car", "order bike"} {
		named.WriteString(`{"metric":"http_reqs","type":"Point","data":{"time":"2026-12-02T18:15:54Z","value":1,"tags":{"name":"` + n + `","scenario":"rush_hour"}}}` + "\n")
	}
	otherNames := writeGz(t, dir, "named.json.gz", named.String())
	setupOnly := writeGz(t, dir, "setup.json.gz",
		`{"metric":"http_reqs","type":"Point","data":{"time":"2026-12-02T18:15:50Z","value":1,"tags":{"group":"::setup","name":"http://h:1/login"}}}`+"\n")
	badTime := writeGz(t, dir, "time.csv.gz", "metric_name,timestamp,metric_value,group,name,scenario\nhttp_reqs,42,1,,http://h:1/car,s\n")
	// A few requests of each of the fx4 run's routes, for the cases that
	// need k6 results but not the whole run.
	var few strings.Builder
	for _, r := range [][2]string{{"rush_hour", "/car"}, {"rush_hour", "/scooter"}, {"off_peak", "/scooter"}, {"off_peak", "/bike"}, {"off_peak", "/"}} {
		for i := range 50 {
			fmt.Fprintf(&few, `{"metric":"http_reqs","type":"Point","data":{"time":"2026-12-02T18:15:54Z","value":1,"tags":{"name":"http://127.0.0.1:18080%s?vehicle_id=%d","scenario":"%s"}}}`+"\n", r[1], i, r[0])
		}
	}
	smallK6 := writeGz(t, dir, "few.json.gz", few.String())
	notProfile := filepath.Join(dir, "notes.txt")
	os.WriteFile(notProfile, []byte("not a profile\n"), 0o644)

	heapSrv := httptest.NewServer(httppprof.Handler("heap"))
	defer heapSrv.Close()
	notFound := httptest.NewServer(http.NotFoundHandler())
	defer notFound.Close()
	down := fixture.ClosedURL(t) + "/debug/pprof/profile?seconds=1"

	for _, c := range []struct {
		name string
		args []string
		code int
		want []string // substrings of stderr, in any order
	}{
		// Unreachable /debug/pprof/profile URL.
		{"unreachable", []string{"report", "--k6", smallK6, down}, exitError,
			[]string{"reading profile", "connection refused", "is the service running and serving /debug/pprof/?"}},
		{"not found", []string{"report", notFound.URL + "/debug/pprof/profile"}, exitError,
			[]string{"404 Not Found", "/debug/pprof/profile once it imports net/http/pprof"}},
		// Not a CPU profile: a file and a URL.
		{"heap file", []string{"report", "--k6", smallK6, heap}, exitError,
			[]string{"not a CPU profile", "alloc_objects/count", "give a CPU profile (/debug/pprof/profile, not /debug/pprof/heap or allocs)"}},
		{"heap URL", []string{"report", heapSrv.URL}, exitError,
			[]string{"not a CPU profile", "inuse_space/bytes", "give a CPU profile"}},
		{"not pprof", []string{"report", notProfile}, exitError,
			[]string{"not a pprof profile", "give a CPU profile such as /debug/pprof/profile writes"}},
		{"missing profile", []string{"report", filepath.Join(dir, "missing.pb.gz")}, exitError,
			[]string{"missing.pb.gz", "no such file", "give pprof CPU profile files or /debug/pprof/profile URLs"}},
		{"missing k6 results", []string{"report", "--k6", filepath.Join(dir, "missing.json"), cpu}, exitError,
			[]string{"missing.json", "no such file", "give the file of k6 run --out json=FILE or --out csv=FILE"}},
		// k6 results without http_reqs; not k6 results.
		{"no http_reqs", []string{"report", "--k6", noReqs, cpu}, exitError,
			[]string{"vus.json.gz", "no http_reqs points among 1 points", "did the run send HTTP requests (k6/http), and is this its --out json or --out csv file?"}},
		{"setup() only", []string{"report", "--k6", setupOnly, cpu}, exitError,
			[]string{"no http_reqs points in a scenario: all 1 http_reqs points have no scenario tag or were made in setup() or teardown()", "--system-tags"}},
		{"csv time", []string{"report", "--k6", badTime, cpu}, exitError,
			[]string{"time.csv.gz", `csv row 1: timestamp "42" is no unix time between 2000 and 2100`}},
		{"k6 is a profile", []string{"report", "--k6", cpu, cpu}, exitError,
			[]string{"not k6 results", "want the output of k6 run --out json=FILE or --out csv=FILE"}},
		// Names in k6's results that match no label.
		{"names match no label", []string{"report", "--k6", otherNames, cpu}, exitError,
			[]string{"k6 names match no label", "order bike, order car", "http://127.0.0.1:18080/", `LabelValue("k6.name", name)`, "use --by run,scenario"}},
		// No data.
		{"Pyroscope-merged profile", []string{"report", unlabelled}, exitError,
			[]string{"no data", "carries a label of any kind", "merged by Pyroscope or Grafana (period 1s, no sample count)", "use --pyroscope URL --service NAME"}},
		{"unknown run id", []string{"report", "--run-id", "fx9", cpu}, exitError,
			[]string{`no CPU with k6_test_run_id="fx9"`, "it has fx4 (31.48s)"}},
		// Bad flags: exit 2, the problem and the way to the flags.
		{"no command", nil, exitUsage, []string{"Usage:", "k6labels report"}},
		{"unknown command", []string{"reprot"}, exitUsage, []string{`unknown command "reprot"`, "Usage:"}},
		{"unknown flag", []string{"report", "--frmat", "json", cpu}, exitUsage, []string{"flag provided but not defined: -frmat", "-format"}},
		{"format", []string{"report", "--format", "xml", cpu}, exitUsage, []string{`unknown format "xml": use text, markdown, json or html`, "Run 'k6labels report -h'"}},
		{"by", []string{"report", "--by", "route", cpu}, exitUsage, []string{`unknown grouping "route": use run, scenario, name or scenario+name`}},
		{"no profiles", []string{"report", "--k6", k6}, exitUsage, []string{"no profiles: give pprof CPU profiles (files or /debug/pprof/profile URLs), or --pyroscope URL --service NAME"}},
		{"pyroscope without service", []string{"report", "--pyroscope", fixture.ClosedURL(t)}, exitUsage, []string{"--pyroscope needs --service"}},
		{"pyroscope and profiles", []string{"report", "--pyroscope", fixture.ClosedURL(t), "--service", "s", cpu}, exitUsage,
			[]string{"give either --pyroscope or pprof profiles, not both"}},
		{"service without pyroscope", []string{"report", "--service", "x", cpu}, exitUsage, []string{"--service is for --pyroscope"}},
		{"diff one side", []string{"diff", "--profile", cpu}, exitUsage, []string{"give the profiles of both runs (--base-profile and --profile)"}},
		{"diff arguments", []string{"diff", cpu, cpu}, exitUsage, []string{"unexpected arguments", "give profiles with --base-profile and --profile"}},
		{"fail-above", []string{"diff", "--base-profile", cpu, "--profile", cpu, "--fail-above", "ten"}, exitUsage, []string{`--fail-above "ten": want a percentage with its % sign, such as 10%`}},
		{"fail-above bare number", []string{"diff", "--base-profile", cpu, "--profile", cpu, "--fail-above", "0.4"}, exitUsage,
			[]string{`--fail-above "0.4": want a percentage with its % sign, such as 10% (a bare number is ambiguous: 0.4 could mean 0.4% or 40%)`}},
		{"fail-above NaN", []string{"diff", "--base-profile", cpu, "--profile", cpu, "--fail-above", "NaN%"}, exitUsage, []string{`--fail-above "NaN%": want a finite percentage of 0% or more, such as 10%`}},
		{"fail-above Inf", []string{"diff", "--base-profile", cpu, "--profile", cpu, "--fail-above", "Inf%"}, exitUsage, []string{`--fail-above "Inf%": want a finite percentage`}},
		{"fail-above negative", []string{"diff", "--base-profile", cpu, "--profile", cpu, "--fail-above", "-5%"}, exitUsage, []string{`--fail-above "-5%": want a finite percentage`}},
		{"alpha NaN", []string{"diff", "--base-profile", cpu, "--profile", cpu, "--alpha", "NaN"}, exitUsage, []string{"--alpha NaN: want a rate between 0 and 1, such as 0.05"}},
		{"alpha Inf", []string{"diff", "--base-profile", cpu, "--profile", cpu, "--alpha", "+Inf"}, exitUsage, []string{"--alpha +Inf: want a rate between 0 and 1"}},
		{"run-sd", []string{"diff", "--base-profile", cpu, "--profile", cpu, "--run-sd", "NaN"}, exitUsage, []string{"--run-sd NaN: want a spread between 0 and 1, such as 0.05 for 5% per run"}},
		{"alpha", []string{"diff", "--base-profile", cpu, "--profile", cpu, "--alpha", "5"}, exitUsage, []string{"--alpha 5: want a rate between 0 and 1, such as 0.05"}},
		{"match", []string{"diff", "--base-profile", cpu, "--profile", cpu, "--match", "host"}, exitUsage, []string{`--match "host": use path or name`}},
		{"normalize", []string{"diff", "--base-profile", cpu, "--profile", cpu, "--base-k6", smallK6, "--k6", smallK6, "--normalize", "mean", "--write-profiles", ""}, exitError,
			[]string{`unknown method "mean": use median, total, none or row:KEY`}},
		{"control row", []string{"diff", "--base-profile", cpu, "--profile", cpu, "--base-k6", smallK6, "--k6", smallK6, "--normalize", "row:/health", "--write-profiles", ""}, exitError,
			[]string{`--normalize row:/health: no row "/health" in both runs; the k6_name rows are /car, /scooter, /bike, /`}},
		{"runs without pyroscope", []string{"runs"}, exitUsage, []string{"runs needs --pyroscope URL and --service NAME"}},
		{"start", []string{"runs", "--pyroscope", fixture.ClosedURL(t), "--service", "s", "--start", "yesterday"}, exitUsage,
			[]string{`--start "yesterday": want RFC 3339 such as 2026-12-02T18:02:15Z`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, c.args...)
			if code != c.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, c.code, stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr does not say %q:\n%s", w, stderr)
				}
			}
		})
	}
}

// TestQueryStringsMatch: k6 names every request by its URL with the query
// string; the report matches them to the labels (which drop it) by the
// library's own LabelValue, and leaves no name unmatched.
func TestQueryStringsMatch(t *testing.T) {
	t.Parallel() // no CPU profile, environment or global of the package
	fx := fixture.Dir(t)
	code, out, stderr := runCLI(t, "report", "--k6", filepath.Join(fx, "local", "run-fx4.json.gz"), "--format", "json",
		filepath.Join(fx, "local", "fx4.cpu.pb.gz"))
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, `"unmatched_names": []`) || !strings.Contains(out, `"http://127.0.0.1:18080/car"`) || strings.Contains(out, "vehicle_id") {
		t.Errorf("the fixture's URLs with query strings are not all matched:\n%s", out)
	}
}

// fx4Requests writes k6 results with the http_reqs of the real local/ run
// (the fixtures README's counts per scenario and name, k6's URLs with query
// strings) and none of its other points: the run's requests in a file
// that is fast to read under the race detector.
func fx4Requests(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	for _, r := range []struct {
		scenario, path string
		n              int
	}{{"rush_hour", "/car", 3316}, {"rush_hour", "/scooter", 1658}, {"off_peak", "/scooter", 1597}, {"off_peak", "/bike", 1597}, {"off_peak", "/", 1596}} {
		for i := range r.n {
			// Spread over the 20 s the real run took, inside the profile's
			// 22 s from 18:15:52.3.
			at := time.Date(2026, 12, 2, 18, 15, 53, 5e8, time.UTC).Add(time.Duration(i%20) * time.Second)
			fmt.Fprintf(&b, `{"metric":"http_reqs","type":"Point","data":{"time":%q,"value":1,"tags":{"name":"http://127.0.0.1:18080%s?vehicle_id=%d&city=berlin","scenario":%q}}}`+"\n",
				at.Format(time.RFC3339Nano), r.path, i, r.scenario)
		}
	}
	return writeGz(t, dir, "fx4-requests.json.gz", b.String())
}

// carCostlier writes to dir the profile at cpu with /car's samples made
// 30% costlier, and returns its path.
func carCostlier(t *testing.T, cpu, dir string) string {
	t.Helper()
	b, err := os.ReadFile(cpu)
	if err != nil {
		t.Fatal(err)
	}
	p, err := profile.ParseData(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range p.Sample {
		if slices.Contains(s.Label["k6_name"], "http://127.0.0.1:18080/car") {
			for i := range s.Value {
				s.Value[i] = s.Value[i] * 13 / 10
			}
		}
	}
	costlier := filepath.Join(dir, "costlier.pb.gz")
	f, err := os.Create(costlier)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Write(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return costlier
}

// TestDiffGate: --fail-above exits 3 and names the row when one route of a
// real profile is made 30% costlier, exits 0 for the same profile twice,
// and writes the merged profiles with the pprof command to look at them.
func TestDiffGate(t *testing.T) {
	t.Parallel() // no CPU profile, environment or global of the package
	fx := fixture.Dir(t)
	dir := t.TempDir()
	cpu := filepath.Join(fx, "local", "fx4.cpu.pb.gz")
	k6 := fx4Requests(t, dir)
	costlier := carCostlier(t, cpu, dir)
	prefix := filepath.Join(dir, "out")

	code, out, stderr := runCLI(t, "diff", "--base-profile", cpu, "--base-k6", k6, "--profile", costlier, "--k6", k6,
		"--normalize", "none", "--fail-above", "10%", "--write-profiles", prefix)
	if code != exitRegression {
		t.Errorf("exit %d, want %d; stderr: %s", code, exitRegression, stderr)
	}
	for _, w := range []string{"k6labels: regression: CPU per request grew by more than 10% beyond noise", "k6_name=/car +30.0%", "k6_scenario,k6_name=rush_hour /car +30.0%"} {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr does not say %q: %s", w, stderr)
		}
	}
	if strings.Contains(stderr, "/scooter") || strings.Contains(stderr, "/bike") {
		t.Errorf("a route that did not change failed the gate: %s", stderr)
	}
	if !strings.Contains(out, "go tool pprof -http=localhost:0 -diff_base="+prefix+".before.pb.gz -tagfocus='k6_name=/car$' "+prefix+".after.pb.gz") {
		t.Errorf("no pprof command for /car in:\n%s", out)
	}
	for _, side := range []string{".before.pb.gz", ".after.pb.gz"} {
		if _, err := os.Stat(prefix + side); err != nil {
			t.Error(err)
		}
	}

	// The same profile twice: no regression, but at the default σ of 5%
	// per run a 20 s run cannot vouch for 10%: exit 4, unless accepted.
	code, _, stderr = runCLI(t, "diff", "--base-profile", cpu, "--base-k6", k6, "--profile", cpu, "--k6", k6,
		"--fail-above", "10%", "--write-profiles", "")
	if code != exitInconclusive {
		t.Errorf("same profile twice: exit %d, want %d; stderr: %s", code, exitInconclusive, stderr)
	}
	for _, w := range []string{"k6labels: inconclusive: no regression found, but the diff cannot vouch for 10%", "k6_name=/bike sees +", "no run length is enough", "--allow-inconclusive accepts this"} {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr does not say %q: %s", w, stderr)
		}
	}
	// Said once for the rows it applies to, not once per row.
	if n := strings.Count(stderr, "no run length is enough"); n != 1 || !strings.Contains(stderr, "no run length is enough for all 9 rows: ") {
		t.Errorf("stderr says %d times that no run length is enough, want once with the rows: %s", n, stderr)
	}
	code, _, stderr = runCLI(t, "diff", "--base-profile", cpu, "--base-k6", k6, "--profile", cpu, "--k6", k6,
		"--fail-above", "10%", "--allow-inconclusive", "--write-profiles", "")
	if code != exitOK {
		t.Errorf("same profile twice, --allow-inconclusive: exit %d; stderr: %s", code, stderr)
	}
	// At 80% every tested row is testable: exit 0 without accepting.
	code, _, stderr = runCLI(t, "diff", "--base-profile", cpu, "--base-k6", k6, "--profile", cpu, "--k6", k6,
		"--fail-above", "80%", "--write-profiles", "")
	if code != exitOK {
		t.Errorf("same profile twice, --fail-above 80%%: exit %d; stderr: %s", code, stderr)
	}
}

// TestDiffGateUntestedRow: a route with CPU in both runs but no k6
// requests in the after run (its k6 name changed, say) has no CPU per
// request there: the gate cannot pass it as "no row got costlier" (exit 4,
// the row named), and the text lists it as untested.
func TestDiffGateUntestedRow(t *testing.T) {
	t.Parallel() // no CPU profile, environment or global of the package
	fx := fixture.Dir(t)
	dir := t.TempDir()
	cpu := filepath.Join(fx, "local", "fx4.cpu.pb.gz")
	k6 := fx4Requests(t, dir)
	b, err := os.ReadFile(k6)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	all, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	var kept strings.Builder
	for line := range strings.Lines(string(all)) {
		if !strings.Contains(line, "18080/bike?") {
			kept.WriteString(line)
		}
	}
	noBike := writeGz(t, dir, "no-bike.json.gz", kept.String())
	args := []string{"diff", "--base-profile", cpu, "--base-k6", k6, "--profile", cpu, "--fail-above", "70%", "--by", "name"}

	// The control: the same runs pass (70%: every row could have shown it).
	if code, _, stderr := runCLI(t, append(args, "--k6", k6)...); code != exitOK {
		t.Fatalf("the same run twice: exit %d, want %d: %s", code, exitOK, stderr)
	}
	code, out, stderr := runCLI(t, append(args, "--k6", noBike)...)
	if code != exitInconclusive {
		t.Errorf("exit %d, want %d: %s", code, exitInconclusive, stderr)
	}
	for _, w := range []string{"k6_name=/bike has 245 and 245 samples but no k6 requests in the after run", "not tested"} {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr does not say %q: %s", w, stderr)
		}
	}
	for _, w := range []string{"No row got costlier beyond noise, but the diff cannot vouch for every row", "Untested rows: CPU without k6 requests on one side", "k6_name=/bike: 245 and 245 samples"} {
		if !strings.Contains(out, w) {
			t.Errorf("output does not say %q:\n%s", w, out)
		}
	}
	if !regexp.MustCompile(`(?m)^\s+/bike\s+1\.534\s+–\s+no requests$`).MatchString(out) {
		t.Errorf("the /bike row does not show its after CPU per request as none (–):\n%s", out)
	}
}
