package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/k6labels/k6labels/cmd/k6labels/internal/fixture"
)

// syncBuffer is a bytes.Buffer safe for the status goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestStatusLine: a status line names the work, the latest progress
// message the report wrote (its "\r" rewrites and padding dropped) and the
// time since the work began, by the clock given.
func TestStatusLine(t *testing.T) {
	var out bytes.Buffer
	now := time.Date(2026, 12, 2, 18, 0, 0, 0, time.UTC)
	s := &statusLines{w: &out, what: "making the report", start: now, now: func() time.Time { return now }}
	s.tick()
	s.Write([]byte("\rk6labels: profile 1: k6_scenario=rush_hour   "))
	s.Write([]byte("\rk6labels: profile 2: k6_name=/car   \rk6labels: profile 3: k6_name=/bike   "))
	now = now.Add(7 * time.Second)
	s.tick()
	s.Write([]byte("\n"))
	now = now.Add(5 * time.Second)
	s.tick()
	want := "k6labels: making the report (0s)\n" +
		"k6labels: making the report: profile 3: k6_name=/bike (7s)\n" +
		"k6labels: making the report: profile 3: k6_name=/bike (12s)\n"
	if out.String() != want {
		t.Errorf("status lines\n%q\nwant\n%q", out.String(), want)
	}
}

// TestStatusQuiet: work that ends before the first status line prints
// nothing.
func TestStatusQuiet(t *testing.T) {
	var out syncBuffer
	_, stop := startStatus(&out, "reading 1 profile(s)", time.Hour, time.Hour, time.Now)
	stop()
	stop() // twice is fine
	if out.String() != "" {
		t.Errorf("quick work printed %q", out.String())
	}
}

// TestStatusWhileReadingURL: on a stderr that is no terminal, reading a
// profile URL that takes long prints status lines: the server answers only
// once the command's stderr has shown two of them. A quick report prints
// none (the first line is due after an hour here).
func TestStatusWhileReadingURL(t *testing.T) {
	defer func(a, e time.Duration) { statusAfter, statusEvery = a, e }(statusAfter, statusEvery)
	statusAfter, statusEvery = time.Millisecond, time.Millisecond
	dir := fixture.Dir(t)
	prof, err := os.ReadFile(filepath.Join(dir, "local", "fx4.cpu.pb.gz"))
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Bounded, so that a broken status fails the test below instead of
		// hanging it.
		giveUp := time.After(time.Minute)
		for strings.Count(stderr.String(), "k6labels: reading 1 profile(s) (") < 2 {
			select {
			case <-ctx.Done():
				return
			case <-giveUp:
				w.Write(prof)
				return
			case <-time.After(time.Millisecond):
			}
		}
		w.Write(prof)
	}))
	defer srv.Close()
	var stdout bytes.Buffer
	k6 := filepath.Join(dir, "local", "run-fx4.json.gz")
	if code := run(ctx, []string{"report", "--by", "scenario", "--k6", k6, srv.URL + "/debug/pprof/profile?seconds=30"}, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if n := strings.Count(stderr.String(), "k6labels: reading 1 profile(s) ("); n < 2 {
		t.Errorf("%d status lines while reading the URL, want 2 or more:\n%s", n, stderr.String())
	}
	if strings.Contains(stdout.String(), "k6labels: reading") {
		t.Errorf("status lines on stdout:\n%s", stdout.String())
	}
	for _, line := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		if line != "" && !strings.HasPrefix(line, "k6labels: reading 1 profile(s) (") && !strings.HasPrefix(line, "k6labels: making the report") {
			t.Errorf("stderr line %q is no status line", line)
		}
	}

	statusAfter = time.Hour
	var quiet syncBuffer
	if code := run(ctx, []string{"report", "--by", "scenario", "--k6", k6, filepath.Join(dir, "local", "fx4.cpu.pb.gz")}, &stdout, &quiet); code != exitOK {
		t.Fatalf("exit %d: %s", code, quiet.String())
	}
	if quiet.String() != "" {
		t.Errorf("a quick report wrote to stderr:\n%s", quiet.String())
	}
}

// TestVersion: version and --version print the module version of the
// build; a test binary's build info has none, so "(devel)".
func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), args, &out, &errb); code != exitOK || out.String() != "k6labels (devel)\n" {
			t.Errorf("%v: exit %d, %q %q", args, code, out.String(), errb.String())
		}
	}
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"version", "x"}, &out, &errb); code != exitUsage {
		t.Errorf("version x: exit %d, want %d", code, exitUsage)
	}
}

// TestStatusWhileQueryingRows: on a stderr that is no terminal, a report
// from Pyroscope prints status lines naming the row being fetched: a proxy
// before the replay server holds each row query after the second until the
// command's stderr names a row.
func TestStatusWhileQueryingRows(t *testing.T) {
	defer func(a, e time.Duration) { statusAfter, statusEvery = a, e }(statusAfter, statusEvery)
	statusAfter, statusEvery = time.Millisecond, time.Millisecond
	srv, _, fx := pyrServer(t)
	target, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncBuffer
	var merges atomic.Int64
	proxy := httputil.NewSingleHostReverseProxy(target)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/SelectMergeProfile") && merges.Add(1) > 2 {
			giveUp := time.After(time.Minute) // a broken status fails below instead of hanging
			for !strings.Contains(stderr.String(), "k6labels: making the report: profile ") {
				select {
				case <-giveUp:
					proxy.ServeHTTP(w, r)
					return
				case <-time.After(time.Millisecond):
				}
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	defer front.Close()
	var stdout bytes.Buffer
	args := pyrArgs("report", front.URL, "--k6", filepath.Join(fx, "k6", "run-fx1.json.gz"), "--run-id", "fx1", "--by", "scenario,name")
	if code := run(context.Background(), args, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !regexp.MustCompile(`(?m)^k6labels: making the report: profile \d+: k6_(scenario|name)=\S+ \(\d+s\)$`).MatchString(stderr.String()) {
		t.Errorf("no status line naming a row:\n%s", stderr.String())
	}
	if strings.Contains(stdout.String(), "k6labels: making") || strings.Contains(stderr.String(), "\r") {
		t.Errorf("status on stdout, or a terminal's \\r on a log")
	}
}
