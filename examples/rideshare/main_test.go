package main

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
)

// syncBuffer is a bytes.Buffer safe for a writer and a reader goroutine.
type syncBuffer struct {
	lockedWriter
	b bytes.Buffer
}

func newSyncBuffer() *syncBuffer {
	s := new(syncBuffer)
	s.w = &s.b
	return s
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startIngest serves h on 127.0.0.1 as a stand-in for Pyroscope until the
// test ends, and returns its URL.
func startIngest(t *testing.T, h http.Handler) string {
	t.Helper()
	is, err := startServer("127.0.0.1:0", h)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { is.Close() })
	return is.URL
}

// TestRunDemo runs the command's default mode in-process, as the README's
// first command does, only shorter.
func TestRunDemo(t *testing.T) {
	out := filepath.Join(t.TempDir(), "demo.pprof")
	var w bytes.Buffer
	if err := run(context.Background(), []string{"-duration", "1s", "-o", out}, &w); err != nil {
		t.Fatalf("run: %v\n%s", err, w.String())
	}
	got := w.String()
	for _, want := range []string{
		"requests sent:",
		"k6_scenario", "rush_hour", "off_peak",
		"k6_name", "/car ", "/bike ",
		"(no k6 labels)",
		"go tool pprof -top -tagfocus=k6_scenario=rush_hour " + out,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	p, err := profile.ParseData(data)
	if err != nil {
		t.Fatalf("written profile: %v", err)
	}
	if len(profilesWithLabel(p, labelScenario)) == 0 {
		t.Error("written profile has no sample with k6_scenario")
	}
	// The html report goes next to the profile, and the output says where.
	page := strings.TrimSuffix(out, ".pprof") + ".html"
	if !strings.Contains(got, "HTML report with flame graphs (k6labels report --format html): "+page) {
		t.Errorf("output does not say where the html report is:\n%s", got)
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(html, []byte(`<svg xmlns="http://www.w3.org/2000/svg" id="fg1" class="fg"`)) || !bytes.Contains(html, []byte("k6_scenario=rush_hour")) {
		t.Errorf("the html report has no flame graph of rush_hour:\n%.500s", html)
	}
}

// TestRunDemoPush runs the demo pushing to a local stand-in for Pyroscope:
// each upload is reported in the output, and the report is built from what
// was uploaded.
func TestRunDemoPush(t *testing.T) {
	ingest := &ingestServer{}
	ingestURL := startIngest(t, ingest)
	out := filepath.Join(t.TempDir(), "demo.pprof")
	var w bytes.Buffer
	if err := run(context.Background(), []string{"-duration", "1s", "-o", out, "-pyroscope", ingestURL, "-app", "demo.test"}, &w); err != nil {
		t.Fatalf("run: %v\n%s", err, w.String())
	}
	got := w.String()
	for _, want := range []string{"pyroscope: CPU profile upload accepted (", "accepted", "k6_scenario", "rush_hour"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	ingest.mu.Lock()
	defer ingest.mu.Unlock()
	if len(ingest.bad) > 0 || len(ingest.cpu) == 0 {
		t.Errorf("pushed %d CPU profiles, bad uploads %v", len(ingest.cpu), ingest.bad)
	}
}

func profilesWithLabel(p *profile.Profile, key string) []*profile.Sample {
	var out []*profile.Sample
	for _, s := range p.Sample {
		if len(s.Label[key]) > 0 {
			out = append(out, s)
		}
	}
	return out
}

// TestRunServeAndTarget runs -serve (pushing to a local stand-in for
// Pyroscope) and -target against each other, and takes a CPU profile from the
// served /debug/pprof/profile meanwhile: it must work while pyroscope-go holds
// the CPU profiler.
func TestRunServeAndTarget(t *testing.T) {
	ingest := &ingestServer{}
	ingestURL := startIngest(t, ingest)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	serveOut := newSyncBuffer()
	served := make(chan error, 1)
	go func() {
		served <- run(ctx, []string{"-serve", "127.0.0.1:0", "-pyroscope", ingestURL, "-app", "serve.test"}, serveOut)
	}()

	re := regexp.MustCompile(`listening on (http://127\.0\.0\.1:[0-9]+)`)
	var base string
	for deadline := time.Now().Add(10 * time.Second); base == ""; time.Sleep(10 * time.Millisecond) {
		if m := re.FindStringSubmatch(serveOut.String()); m != nil {
			base = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("-serve printed no address:\n%s", serveOut.String())
		}
	}
	for _, want := range []string{
		"k6 run --no-usage-report -e BASE_URL=" + base + " -e DURATION=60s -e K6_CLOUDRUN_TEST_RUN_ID=build-1 --out json=run.json examples/rideshare/load.js",
		"k6labels report --pyroscope " + ingestURL + " --service serve.test --k6 run.json --run-id build-1",
		"-target " + base,
	} {
		if !strings.Contains(serveOut.String(), want) {
			t.Errorf("-serve output lacks %q:\n%s", want, serveOut.String())
		}
	}

	profiled := make(chan *profile.Profile, 1)
	go func() {
		resp, err := http.Get(base + "/debug/pprof/profile?seconds=1")
		if err != nil {
			profiled <- nil
			return
		}
		defer resp.Body.Close()
		p, _ := profile.Parse(resp.Body)
		profiled <- p
	}()

	var targetOut bytes.Buffer
	if err := run(ctx, []string{"-target", base, "-duration", "2s", "-test-run-id", "77"}, &targetOut); err != nil {
		t.Fatalf("-target: %v\n%s", err, targetOut.String())
	}
	if !strings.Contains(targetOut.String(), "/car") || !strings.Contains(targetOut.String(), "responses") {
		t.Errorf("-target output:\n%s", targetOut.String())
	}
	p := <-profiled
	if p == nil {
		t.Fatal("no profile from /debug/pprof/profile")
	}
	found := false
	for _, s := range profilesWithLabel(p, labelRunID) {
		if s.Label[labelRunID][0] != "77" {
			t.Fatalf("sample with labels %v", s.Label)
		}
		found = true
	}
	if !found {
		t.Error("the served profile has no sample with k6_test_run_id")
	}

	cancel()
	if err := <-served; err != nil {
		t.Errorf("-serve returned %v", err)
	}
	for _, want := range []string{"pyroscope: CPU profile upload accepted (", "accepted"} {
		if !strings.Contains(serveOut.String(), want) {
			t.Errorf("-serve printed no %q:\n%s", want, serveOut.String())
		}
	}
	ingest.mu.Lock()
	defer ingest.mu.Unlock()
	if len(ingest.bad) > 0 || len(ingest.cpu) == 0 {
		t.Fatalf("pushed %d CPU profiles, bad uploads %v", len(ingest.cpu), ingest.bad)
	}
	labelled := 0
	for _, p := range ingest.cpu {
		labelled += len(profilesWithLabel(p, labelScenario))
	}
	if labelled == 0 {
		t.Error("no pushed sample carries k6_scenario")
	}
}

func TestRunTargetDown(t *testing.T) {
	var w bytes.Buffer
	err := run(context.Background(), []string{"-target", "http://127.0.0.1:1", "-duration", "300ms"}, &w)
	if !errors.Is(err, errNoResponses) {
		t.Fatalf("run against a closed port = %v, want errNoResponses", err)
	}
}

func TestFlagErrors(t *testing.T) {
	for _, args := range [][]string{
		{"-serve", "127.0.0.1:0", "-target", "http://127.0.0.1:1"},
		{"-target", "127.0.0.1:8080"},
		{"-target", "http://127.0.0.1:1", "-pyroscope", "http://127.0.0.1:2"},
		{"-duration", "0s"},
		{"-test-run-id", "a, b"},
		{"extra"},
		{"-nosuchflag"},
		{"-k6-out", "x.json"},
		{"-serve", "127.0.0.1:0", "-k6-out", "x.json"},
		{"-requests", "10"},
		{"-target", "http://127.0.0.1:1", "-requests", "-1"},
		{"-cpuprofile", "x.pprof"},
		{"-serve", "127.0.0.1:0", "-cpuprofile", "x.pprof", "-pyroscope", "http://127.0.0.1:2"},
		{"-car-extra", "1"},
		{"-serve", "127.0.0.1:0", "-car-extra", "-1"},
	} {
		var w bytes.Buffer
		if err := run(context.Background(), args, &w); !errors.Is(err, errUsage) {
			t.Errorf("run(%q) = %v, want a usage error", args, err)
		}
		if !strings.Contains(w.String(), "Usage:") {
			t.Errorf("run(%q) printed no usage:\n%s", args, w.String())
		}
	}
}
