package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/k6labels/k6labels/cmd/k6labels/internal/fixture"
)

// TestMain runs the tests with the OS temp folder in a folder of their
// own, removed at the end: a profile read from a URL is kept there when a
// command fails after the read.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "k6labels-test-")
	if err != nil {
		panic(err)
	}
	os.Setenv("TMPDIR", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// servePprof serves the local/ profile at /debug/pprof/profile on
// 127.0.0.1, and returns its URL and the bytes served.
func servePprof(t *testing.T) (string, []byte) {
	t.Helper()
	served, err := os.ReadFile(filepath.Join(fixture.Dir(t), "local", "fx4.cpu.pb.gz"))
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/profile", func(w http.ResponseWriter, r *http.Request) { w.Write(served) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL + "/debug/pprof/profile?seconds=22", served
}

var keptRE = regexp.MustCompile(`\(the profile read from (\S+) is kept in (\S+): pass (\S+) instead of the URL to try again\)`)

// checkKept checks that stderr says where the profile read from url is
// kept, in the temp folder tmp, and that the file is the profile served.
func checkKept(t *testing.T, stderr, url, tmp string, served []byte) {
	t.Helper()
	m := keptRE.FindAllStringSubmatch(stderr, -1)
	if len(m) != 1 || m[0][1] != url || m[0][2] != m[0][3] {
		t.Fatalf("want one kept profile of %s in the error: %s", url, stderr)
	}
	path := m[0][2]
	if filepath.Dir(path) != tmp || !strings.HasPrefix(filepath.Base(path), "k6labels-profile-") || !strings.HasSuffix(path, ".pb.gz") {
		t.Errorf("kept in %s, want a k6labels-profile-*.pb.gz in the temp folder %s", path, tmp)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the kept profile: %v", err)
	}
	got, err := profile.ParseData(b)
	if err != nil {
		t.Fatalf("the kept profile is no profile: %v", err)
	}
	want, _ := profile.ParseData(served)
	if got.String() != want.String() {
		t.Error("the kept profile is not the one served")
	}
}

// TestProfileKeptAfterError: report and diff, given a profile URL and no
// --write-profiles, fail after the read (k6 results still being written;
// k6 names that match no label; another profile URL that fails; report --trace, whose trace is missing):
// the profile read is kept in a new file of
// the OS temp folder, which the error names, and nothing is written to the
// current folder.
func TestProfileKeptAfterError(t *testing.T) {
	url, served := servePprof(t)
	orig := waitK6Flush
	defer func() { waitK6Flush = orig }()
	waitK6Flush = func(context.Context) error { return nil }
	gz, err := os.ReadFile(filepath.Join(fixture.Dir(t), "local", "run-fx4.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	stillWriting := filepath.Join(dir, "run.json.gz")
	if err := os.WriteFile(stillWriting, gz[:400000], 0o644); err != nil {
		t.Fatal(err)
	}
	otherNames := writeGz(t, dir, "named.json.gz",
		`{"metric":"http_reqs","type":"Point","data":{"time":"2026-12-02T18:15:54Z","value":1,"tags":{"name":"order car","scenario":"rush_hour"}}}`+"\n")
	cwd := t.TempDir()
	t.Chdir(cwd)
	for _, c := range []struct {
		name, want string
		args       []string
	}{
		{"report, k6 still writing", "k6 is still writing the file", []string{"report", "--k6", stillWriting, url}},
		{"diff, k6 still writing", "k6 is still writing the file", []string{"diff", "--base-k6", stillWriting, "--k6", stillWriting, "--base-profile", url, "--profile", url}},
		{"report, no names match", "k6 names match no label", []string{"report", "--k6", otherNames, url}},
		{"report, another URL fails", "connection refused", []string{"report", url, fixture.ClosedURL(t) + "/debug/pprof/profile"}},
		{"report --trace, no trace", "reading trace", []string{"report", "--trace", filepath.Join(dir, "missing.trace"), "--profile", url}},
	} {
		t.Run(c.name, func(t *testing.T) {
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp)
			code, _, stderr := runCLI(t, c.args...)
			if code != exitError || !strings.Contains(stderr, c.want) {
				t.Fatalf("exit %d, want the error %q: %s", code, c.want, stderr)
			}
			checkKept(t, stderr, url, tmp, served)
		})
	}
	if ents, _ := os.ReadDir(cwd); len(ents) > 0 {
		t.Errorf("files written to the current folder: %v", ents)
	}
	// With --write-profiles the profile is in its file: no other is made.
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	prefix := filepath.Join(dir, "kept")
	code, _, stderr := runCLI(t, "report", "--k6", stillWriting, "--write-profiles", prefix, url)
	if ents, _ := os.ReadDir(tmp); code != exitError || strings.Contains(stderr, "is kept in") || len(ents) > 0 {
		t.Errorf("--write-profiles: exit %d, %d files in the temp folder: %s", code, len(ents), stderr)
	}
	if _, err := os.Stat(prefix + ".pb.gz"); err != nil {
		t.Error(err)
	}
}
