package main

import (
	"bytes"
	"context"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/k6labels/k6labels/cmd/k6labels/k6results"
)

// TestTargetK6JSON: -target -k6-json writes one http_reqs point per
// response in k6's json format: k6labels' reader counts as many requests
// per route as the driver says it got, by the scenarios of the load.
func TestTargetK6JSON(t *testing.T) {
	srv := httptest.NewServer(newService())
	defer srv.Close()
	path := filepath.Join(t.TempDir(), "run.json")
	var out bytes.Buffer
	if err := run(context.Background(), []string{"-target", srv.URL, "-duration", "1s", "-test-run-id", "ci-1", "-k6-json", path}, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "k6 results (k6 run --out json format) written to "+path) {
		t.Errorf("output does not say where the k6 results are:\n%s", out.String())
	}
	k, err := k6results.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	byPath := map[string]int64{}
	for key, n := range k.Requests {
		byPath[strings.TrimPrefix(key.Name, srv.URL)] += n
		if key.Scenario != "rush_hour" && key.Scenario != "off_peak" {
			t.Errorf("scenario %q", key.Scenario)
		}
	}
	lines := regexp.MustCompile(`(?m)^  (/\S*)\s+([\d,]+) responses$`).FindAllStringSubmatch(out.String(), -1)
	if len(lines) == 0 {
		t.Fatalf("no response counts in the output:\n%s", out.String())
	}
	for _, l := range lines {
		n, _ := strconv.ParseInt(strings.ReplaceAll(l[2], ",", ""), 10, 64)
		if byPath[l[1]] != n {
			t.Errorf("%s: %d requests in the k6 json, the driver got %d responses", l[1], byPath[l[1]], n)
		}
	}
	if k.Total == 0 || !k.End.After(k.Start) {
		t.Errorf("k6 json: %d requests from %s to %s", k.Total, k.Start, k.End)
	}
}
