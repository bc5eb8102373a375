package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/k6labels/k6labels/cmd/k6labels/k6results"
)

// serve runs -serve with args in the background and returns its base URL,
// its output and a function that stops it and returns its error.
func serve(t *testing.T, args ...string) (string, *syncBuffer, func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out := newSyncBuffer()
	done := make(chan error, 1)
	go func() { done <- run(ctx, append([]string{"-serve", "127.0.0.1:0"}, args...), out) }()
	re := regexp.MustCompile(`listening on (http://127\.0\.0\.1:[0-9]+)`)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			return m[1], out, func() error { cancel(); return <-done }
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("-serve printed no address:\n%s", out.String())
		}
	}
}

// -target -k6-out writes k6's json format: k6labels' own reader counts
// exactly the requests sent, per scenario and route, with the names k6
// gives untagged requests. -serve -cpuprofile writes the service's profile,
// whose samples carry the load's labels; -car-extra makes /car costlier.
func TestK6OutAndCPUProfile(t *testing.T) {
	dir := t.TempDir()
	prof := filepath.Join(dir, "svc.pprof")
	base, serveOut, stop := serve(t, "-cpuprofile", prof, "-car-extra", "2")
	if !strings.Contains(serveOut.String(), "/car does 5 units of work instead of 3") {
		t.Errorf("-serve -car-extra 2 output:\n%s", serveOut.String())
	}
	k6file := filepath.Join(dir, "run.json")
	var out bytes.Buffer
	const requests = 300
	err := run(context.Background(), []string{"-target", base, "-requests", strconv.Itoa(requests), "-duration", "10m",
		"-test-run-id", "k6out", "-k6-out", k6file}, &out)
	if err != nil {
		t.Fatalf("-target: %v\n%s", err, out.String())
	}
	if err := stop(); err != nil {
		t.Fatalf("-serve: %v\n%s", err, serveOut.String())
	}
	if !strings.Contains(serveOut.String(), "CPU profile of the service written to "+prof) {
		t.Errorf("-serve did not say where the profile went:\n%s", serveOut.String())
	}

	res, err := k6results.ReadFile(k6file)
	if err != nil {
		t.Fatal(err)
	}
	if res.Format != "json" || res.Total != requests || res.LeftOut != 0 {
		t.Errorf("k6results read format %q, %d requests (%d left out), want json, %d", res.Format, res.Total, res.LeftOut, requests)
	}
	perScenario := map[string]int64{}
	for k, n := range res.Requests {
		perScenario[k.Scenario] += n
		path := strings.TrimPrefix(k.Name, base)
		if routeUnits(path) == 0 && path != "/" || k.Name == path {
			t.Errorf("request name %q is not a route of %s", k.Name, base)
		}
	}
	if r, o := perScenario["rush_hour"], perScenario["off_peak"]; r+o != requests || r == 0 || o == 0 {
		t.Errorf("requests per scenario %v", perScenario)
	}

	data, err := os.ReadFile(prof)
	if err != nil {
		t.Fatal(err)
	}
	p, err := profile.ParseData(data)
	if err != nil {
		t.Fatalf("the -cpuprofile file: %v", err)
	}
	n := 0
	for _, s := range profilesWithLabel(p, labelRunID) {
		if got := s.Label[labelRunID][0]; got != "k6out" {
			t.Fatalf("a sample has k6_test_run_id %q, want k6out", got)
		}
		n++
	}
	if n == 0 {
		t.Error("no sample of the -cpuprofile file carries k6_test_run_id")
	}
}
