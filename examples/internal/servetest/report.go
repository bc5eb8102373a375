package servetest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/k6labels/k6labels/cmd/k6labels/k6results"
	"github.com/k6labels/k6labels/cmd/k6labels/pprofsource"
	"github.com/k6labels/k6labels/cmd/k6labels/report"
	"github.com/k6labels/k6labels/internal/profiletest"
)

// A RouteLoad is N k6 requests for a path (a format with one %d, such as
// "/bike/%d") that the service names Route.
type RouteLoad struct {
	Path, Route string
	N           int
}

// CheckReportByRoute sends the loads' requests to base, served by [Spin],
// as k6 sends them ([NamedBaggage]: k6.name is the URL with its query)
// under the CPU profiler, writes k6's json results of them (method and URL
// tags), and fails t unless the k6labels command's report of the profile
// gives each route exactly its requests and CPU per request, with no k6
// name unmatched.
func CheckReportByRoute(t testing.TB, base string, loads ...RouteLoad) {
	t.Helper()
	var k6 strings.Builder
	p := profiletest.Record(t, func() {
		for _, l := range loads {
			for i := range l.N {
				url := fmt.Sprintf(base+l.Path+"?x=%d", i+1, i)
				fmt.Fprintf(&k6, `{"metric":"http_reqs","type":"Point","data":{"time":%q,"value":1,"tags":{"method":"GET","name":%q,"scenario":"rides","status":"200","url":%q}}}`+"\n",
					time.Now().UTC().Format(time.RFC3339Nano), url, url)
				Get(t, url, NamedBaggage(url))
			}
		}
	})
	r := ReportByName(t, "profile", p, k6.String())
	for _, l := range loads {
		row := r.Row(report.ByName, l.Route)
		if row == nil || row.Requests != int64(l.N) || row.CPU == 0 || row.PerRequest.Est == 0 {
			t.Errorf("route %s: row %+v, want %d requests with their CPU", l.Route, row, l.N)
		}
	}
	if len(r.Unmatched) > 0 {
		t.Errorf("k6 names matched to no route: %v", r.Unmatched)
	}
}

// ReportByName is the k6labels command's report, by k6 name, of profile p
// (called name in errors) with k6's json results k6; it fails t on an error.
func ReportByName(t testing.TB, name string, p *profile.Profile, k6 string) *report.Report {
	t.Helper()
	k, err := k6results.Read(strings.NewReader(k6))
	if err != nil {
		t.Fatal(err)
	}
	src, err := pprofsource.New(name, p)
	if err != nil {
		t.Fatal(err)
	}
	r, err := report.New(t.Context(), src, report.Options{K6: k, By: []report.Grouping{report.ByName}})
	if err != nil {
		t.Fatal(err)
	}
	return r
}
