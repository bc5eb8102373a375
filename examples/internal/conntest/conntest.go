// Package conntest records, for the tests of connection roots, real CPU
// profiles of a service whose client's connection goroutines start in a
// k6-labelled request, and counts their ground truth from the stacks.
package conntest

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/k6labels/k6labels"
	"github.com/k6labels/k6labels/cmd/k6labels/report"
	"github.com/k6labels/k6labels/internal/profiletest"
)

// Record serves h, labelled from k6's baggage, and runs traffic under the CPU
// profiler; checkout sends a k6 request to /checkout (test run runID, scenario
// "shop") and fails t unless it is served. It returns the profile and k6's json results.
func Record(t testing.TB, runID string, h http.Handler, traffic func(checkout func())) (*profile.Profile, string) {
	t.Helper()
	front := httptest.NewServer(k6labels.LabelsFromBaggageHandler(h))
	defer front.Close()
	name := front.URL + "/checkout"
	var k6 strings.Builder
	checkout := func() {
		req, _ := http.NewRequest(http.MethodGet, name, nil)
		req.Header.Set("Baggage", "k6.test_run_id="+runID+",k6.scenario=shop,k6.name="+name)
		fmt.Fprintf(&k6, `{"metric":"http_reqs","type":"Point","data":{"time":%q,"value":1,"tags":{"method":"GET","name":%q,"scenario":"shop"}}}`+"\n",
			time.Now().UTC().Format(time.RFC3339Nano), name)
		resp, err := front.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("checkout: %s: %s", resp.Status, body)
		}
	}
	p := profiletest.Record(t, func() { traffic(checkout) })
	return p, k6.String()
}

// Truth returns the CPU of p's k6-labelled samples whose bottom three frames
// hold one of roots or a function that one of prefixes begins, that of the
// other k6-labelled samples, and the former by root: the bottommost such frame.
func Truth(p *profile.Profile, roots, prefixes []string) (conn, work time.Duration, byRoot map[string]time.Duration) {
	byRoot = map[string]time.Duration{}
	for _, s := range p.Sample {
		if len(s.Label[report.LabelName]) == 0 {
			continue
		}
		var frames []string
		for _, loc := range s.Location {
			for _, ln := range loc.Line {
				frames = append(frames, ln.Function.Name)
			}
		}
		root := ""
		for _, f := range slices.Backward(frames[max(0, len(frames)-3):]) {
			if root == "" && (slices.Contains(roots, f) || slices.ContainsFunc(prefixes, func(pre string) bool { return strings.HasPrefix(f, pre) })) {
				root = f
			}
		}
		if root != "" {
			conn += time.Duration(s.Value[1])
			byRoot[root] += time.Duration(s.Value[1])
		} else {
			work += time.Duration(s.Value[1])
		}
	}
	return conn, work, byRoot
}

// CheckCPU fails t unless r counts conn, the CPU the profile has in where (the
// connection's goroutines), in its connection row, and work in its k6 rows.
func CheckCPU(t testing.TB, r *report.Report, conn, work time.Duration, where string) {
	t.Helper()
	var rows time.Duration
	for _, row := range r.Rows {
		rows += row.CPU
	}
	if r.Connections.CPU != conn || r.K6.CPU != work || rows != work {
		t.Errorf("connection goroutines %s, k6 rows %s, k6 %s; the profile has %s in %s and %s of request work",
			r.Connections.CPU, rows, r.K6.CPU, conn, where, work)
	}
}
