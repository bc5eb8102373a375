package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/k6labels/k6labels/cmd/k6labels/internal/fixture"
)

// TestWaitsForK6Flush: k6 writes its results file while a profile URL is
// read; the requests of the profile's last second reach the file only when
// k6 flushes it, after the profile is read. The command waits for that
// flush before it reads the file, so it counts them. The real local/
// profile is served; the k6 points are inside its span.
func TestWaitsForK6Flush(t *testing.T) {
	served, err := os.ReadFile(filepath.Join(fixture.Dir(t), "local", "fx4.cpu.pb.gz"))
	if err != nil {
		t.Fatal(err)
	}
	k6file := filepath.Join(t.TempDir(), "run.json")
	points := func(n int, second int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, `{"metric":"http_reqs","type":"Point","data":{"time":"2026-12-02T18:16:%02d.5Z","value":1,"tags":{"method":"GET","name":"http://127.0.0.1:18080/car?vehicle_id=%d","scenario":"rush_hour"}}}`+"\n", second, i)
		}
		return b.String()
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// k6 writes most of the run while the profile is read.
		if err := os.WriteFile(k6file, []byte(points(3000, 5)), 0o644); err != nil {
			t.Error(err)
		}
		w.Write(served)
	}))
	defer srv.Close()
	waited := 0
	orig := waitK6Flush
	defer func() { waitK6Flush = orig }()
	waitK6Flush = func(context.Context) error {
		// k6 flushes the requests of the profile's last second.
		waited++
		f, err := os.OpenFile(k6file, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = f.WriteString(points(316, 13))
		return err
	}
	code, out, stderr := runCLI(t, "report", "--k6", k6file, "--by", "name", "--format", "json", srv.URL+"/debug/pprof/profile?seconds=22")
	if code != exitOK || waited != 1 || !strings.Contains(out, `"requests": 3316`) {
		t.Errorf("exit %d, waited %d times, want once and 3316 requests: %s\n%s", code, waited, stderr, out)
	}
}
