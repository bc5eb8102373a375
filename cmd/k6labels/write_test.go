package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/k6labels/k6labels/cmd/k6labels/internal/fixture"
)

// TestWriteProfiles: report --write-profiles keeps the profile read from a
// URL even when the report then fails (k6 names that match no label), and
// the file is the profile served; without it the error says where the
// profile is kept instead (TestProfileKeptAfterError). An existing file is
// refused before the read, untouched, unless --force.
func TestWriteProfiles(t *testing.T) {
	fx := fixture.Dir(t)
	served, err := os.ReadFile(filepath.Join(fx, "local", "fx4.cpu.pb.gz"))
	if err != nil {
		t.Fatal(err)
	}
	reads := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reads++
		w.Write(served)
	}))
	defer srv.Close()
	url := srv.URL + "/debug/pprof/profile?seconds=30"
	dir := t.TempDir()
	otherNames := writeGz(t, dir, "named.json.gz",
		`{"metric":"http_reqs","type":"Point","data":{"time":"2026-12-02T18:15:54Z","value":1,"tags":{"name":"order car","scenario":"rush_hour"}}}`+"\n")
	prefix := filepath.Join(dir, "kept")

	t.Setenv("TMPDIR", t.TempDir())
	code, _, stderr := runCLI(t, "report", "--k6", otherNames, url)
	if code != exitError || !strings.Contains(stderr, "is kept in "+os.TempDir()) {
		t.Errorf("without --write-profiles: exit %d, stderr does not say where the profile is kept: %s", code, stderr)
	}
	code, _, stderr = runCLI(t, "report", "--k6", otherNames, "--write-profiles", prefix, url)
	if code != exitError || !strings.Contains(stderr, "k6 names match no label") {
		t.Errorf("exit %d, want the report's error: %s", code, stderr)
	}
	b, err := os.ReadFile(prefix + ".pb.gz")
	if err != nil {
		t.Fatalf("the profile read was not kept after the error: %v", err)
	}
	got, err := profile.ParseData(b)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := profile.ParseData(served)
	if got.TimeNanos != want.TimeNanos || len(got.Sample) != len(want.Sample) {
		t.Errorf("kept profile: %d samples at %d, served %d samples at %d", len(got.Sample), got.TimeNanos, len(want.Sample), want.TimeNanos)
	}

	// It exists now: refused before the URL is read, the file untouched.
	reads = 0
	os.WriteFile(prefix+".pb.gz", []byte("mine"), 0o644)
	code, _, stderr = runCLI(t, "report", "--write-profiles", prefix, url)
	if code != exitUsage || !strings.Contains(stderr, "kept.pb.gz exists: choose another PREFIX, or pass --force to overwrite it") || reads != 0 {
		t.Errorf("existing file: exit %d, %d reads: %s", code, reads, stderr)
	}
	if b, _ := os.ReadFile(prefix + ".pb.gz"); string(b) != "mine" {
		t.Error("the existing file was overwritten without --force")
	}
	code, _, stderr = runCLI(t, "report", "--write-profiles", prefix, "--force", url)
	if b, _ := os.ReadFile(prefix + ".pb.gz"); code != exitOK || bytes.Equal(b, []byte("mine")) {
		t.Errorf("--force: exit %d, file not overwritten: %s", code, stderr)
	}
}

// TestDiffWritesOnlyWhenAsked: diff writes no file by default, and with
// --write-profiles refuses files that exist unless --force.
func TestDiffWritesOnlyWhenAsked(t *testing.T) {
	cpu := filepath.Join(fixture.Dir(t), "local", "fx4.cpu.pb.gz")
	dir := t.TempDir()
	t.Chdir(dir)
	if code, _, stderr := runCLI(t, "diff", "--base-profile", cpu, "--profile", cpu); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("diff without --write-profiles wrote %v", ents)
	}
	os.WriteFile("out.after.pb.gz", []byte("mine"), 0o644)
	code, _, stderr := runCLI(t, "diff", "--base-profile", cpu, "--profile", cpu, "--write-profiles", "out")
	if code != exitUsage || !strings.Contains(stderr, "out.after.pb.gz exists") {
		t.Errorf("existing file: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat("out.before.pb.gz"); err == nil {
		t.Error("refused, yet wrote out.before.pb.gz")
	}
	code, out, stderr := runCLI(t, "diff", "--base-profile", cpu, "--profile", cpu, "--write-profiles", "out", "--force")
	if b, _ := os.ReadFile("out.after.pb.gz"); code != exitOK || string(b) == "mine" || !strings.Contains(out, "-diff_base=out.before.pb.gz") {
		t.Errorf("--force: exit %d, out.after.pb.gz not overwritten: %s\n%s", code, stderr, out)
	}
}

// TestFlagsAfterArguments: flags may follow the profile arguments, and
// after "--" a name that starts with "-" is a profile.
func TestFlagsAfterArguments(t *testing.T) {
	fx := fixture.Dir(t)
	cpu := filepath.Join(fx, "local", "fx4.cpu.pb.gz")
	code, out, stderr := runCLI(t, "report", cpu, "--by", "name", "--format", "markdown")
	if code != exitOK || !strings.Contains(out, "| k6_name |") || strings.Contains(out, "| k6_scenario |") {
		t.Errorf("report cpu --by name --format markdown: exit %d: %s\n%s", code, stderr, out)
	}
	code, _, stderr = runCLI(t, "report", "--by", "name", "--", "--by")
	if code != exitError || !strings.Contains(stderr, "--by") || !strings.Contains(stderr, "no such file") {
		t.Errorf(`after "--", "--by" is not read as a profile: exit %d: %s`, code, stderr)
	}
}

// TestWriteProfilesPyroscope: with --pyroscope, report --write-profiles
// writes the run's merged profile as the recorded server returned it: fx1's
// CPU (23.77 s, the fixtures README).
func TestWriteProfilesPyroscope(t *testing.T) {
	srv, _, fx := pyrServer(t)
	prefix := filepath.Join(t.TempDir(), "fx1")
	code, _, errOut := pyrRun(t, pyrArgs("report", srv.URL, "--k6", filepath.Join(fx, "k6", "run-fx1.json.gz"), "--run-id", "fx1", "--by", "run", "--write-profiles", prefix)...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	b, err := os.ReadFile(prefix + ".pb.gz")
	if err != nil {
		t.Fatal(err)
	}
	p, err := profile.ParseData(b)
	if err != nil {
		t.Fatal(err)
	}
	var cpu int64
	for _, s := range p.Sample {
		cpu += s.Value[0]
	}
	if got := float64(cpu) / 1e9; !pyrClose(float64(int64(got*100+0.5))/100, 23.77) {
		t.Errorf("written profile holds %.3fs of CPU, want fx1's 23.77s", got)
	}
}

// TestWriteProfilesSomeRead: of two profile URLs, one fails; with
// --write-profiles the one read is kept, and the error says where.
func TestWriteProfilesSomeRead(t *testing.T) {
	served, err := os.ReadFile(filepath.Join(fixture.Dir(t), "local", "fx4.cpu.pb.gz"))
	if err != nil {
		t.Fatal(err)
	}
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(served) }))
	defer ok.Close()
	prefix := filepath.Join(t.TempDir(), "cpu")
	code, _, stderr := runCLI(t, "report", "--write-profiles", prefix, ok.URL+"/debug/pprof/profile", fixture.ClosedURL(t)+"/debug/pprof/profile")
	if code != exitError || !strings.Contains(stderr, "connection refused") || !strings.Contains(stderr, "the profiles that were read are kept: "+prefix+".1.pb.gz") {
		t.Errorf("exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(prefix + ".1.pb.gz")
	if err != nil {
		t.Fatalf("the profile read was not kept: %v", err)
	}
	got, err := profile.ParseData(b)
	want, _ := profile.ParseData(served)
	if err != nil || len(got.Sample) != len(want.Sample) || got.TimeNanos != want.TimeNanos {
		t.Errorf("kept profile: %v, not the one served", err)
	}
	if _, err := os.Stat(prefix + ".2.pb.gz"); err == nil {
		t.Error("a file was written for the profile that could not be read")
	}
}
