package report_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/k6labels/k6labels/cmd/k6labels/pprofsource"
	"github.com/k6labels/k6labels/cmd/k6labels/report"
)

// TestRouteNamesListed: k6 names that match no route label, or two that
// ServeMux would refuse together, are listed as unmatched (the ambiguous
// one with its candidates in a note) and counted for no route; a name that
// matches one route is counted for it.
func TestRouteNamesListed(t *testing.T) {
	lbl := func(name string) map[string]string {
		return map[string]string{"k6_test_run_id": "r", "k6_scenario": "s", "k6_name": name}
	}
	src, err := pprofsource.New("routes", buildProfile(
		sample{labels: lbl("/a/{x}"), n: 10}, sample{labels: lbl("/{y}/b"), n: 10}, sample{labels: lbl("GET /c/{id}"), n: 30}))
	if err != nil {
		t.Fatal(err)
	}
	point := func(method, url string, n int) string {
		return strings.Repeat(`{"metric":"http_reqs","type":"Point","data":{"time":"2026-12-02T18:00:01Z","value":1,"tags":{"method":"`+method+`","name":"`+url+`","scenario":"s"}}}`+"\n", n)
	}
	k := readK6(t, point("GET", "http://h/a/b", 4)+point("GET", "http://h/c/1", 5)+point("GET", "http://h/c/2", 5)+point("GET", "http://h/nowhere", 3))
	r := newReport(t, src, k)
	if row := r.Row(report.ByName, "GET /c/{id}"); row == nil || row.Requests != 10 || row.PerRequest.Est <= 0 {
		t.Errorf("GET /c/{id}: %+v, want 10 requests with CPU per request", row)
	}
	for _, l := range []string{"/a/{x}", "/{y}/b"} {
		if row := r.Row(report.ByName, l); row == nil || row.Requests != 0 {
			t.Errorf("%s: %+v, want its CPU and no requests", l, row)
		}
	}
	want := []report.Unmatched{{Name: "http://h/a/b", Requests: 4}, {Name: "http://h/nowhere", Requests: 3}}
	if !slices.Equal(r.Unmatched, want) {
		t.Errorf("unmatched %v, want %v", r.Unmatched, want)
	}
	if !slices.ContainsFunc(r.Notes, func(n string) bool {
		return strings.Contains(n, "1 k6 request names match several route labels") && strings.Contains(n, "GET http://h/a/b (4 requests): /a/{x}, /{y}/b")
	}) {
		t.Errorf("no note of the ambiguous name: %q", r.Notes)
	}
}
