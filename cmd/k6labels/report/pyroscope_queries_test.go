package report_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/k6labels/k6labels/cmd/k6labels/pprofsource"
	"github.com/k6labels/k6labels/cmd/k6labels/pyroscope"
	"github.com/k6labels/k6labels/cmd/k6labels/pyrosource"
	"github.com/k6labels/k6labels/cmd/k6labels/report"
)

// TestPyroscopeQueriesOnlyLabelledNames: k6 names requests by URL, ids in
// the path included, and the middleware caps k6_name at 1000 values: the
// k6 names that LabelValues does not list get a row of 0 s without a
// SelectMergeProfile query of their own.
func TestPyroscopeQueriesOnlyLabelledNames(t *testing.T) {
	const names = 2000
	var merges atomic.Int64
	// The middleware's cap: the first 1000 names are label values, the rest _overflow.
	vals := []string{`"_overflow"`}
	for i := range 1000 {
		vals = append(vals, fmt.Sprintf(`"http://h:1/users/%d"`, i))
	}
	nameValues := `{"names":[` + strings.Join(vals, ",") + `]}`
	p := buildProfile(sample{n: 300})
	p.SampleType = p.SampleType[1:] // Pyroscope's merged profiles: cpu only
	for _, s := range p.Sample {
		s.Value = s.Value[1:]
	}
	var prof bytes.Buffer
	if err := p.WriteUncompressed(&prof); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch {
		case strings.HasSuffix(r.URL.Path, "/SelectSeries"):
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"series":[{"labels":[{"name":"k6_test_run_id","value":"r1"}],"points":[{"value":3e9,"timestamp":"1796234565000"}]}]}`)
		case strings.HasSuffix(r.URL.Path, "/LabelValues"):
			w.Header().Set("Content-Type", "application/json")
			if bytes.Contains(body, []byte(`"k6_name"`)) {
				fmt.Fprint(w, nameValues)
			} else {
				fmt.Fprint(w, `{"names":["s"]}`)
			}
		case strings.HasSuffix(r.URL.Path, "/SelectMergeProfile"):
			merges.Add(1)
			w.Header().Set("Content-Type", "application/proto")
			w.Write(prof.Bytes())
		default:
			http.Error(w, "no", http.StatusNotFound)
		}
	}))
	defer srv.Close()

	var k6 strings.Builder
	for i := range names {
		fmt.Fprintf(&k6, `{"metric":"http_reqs","type":"Point","data":{"time":"2026-12-02T18:15:54Z","value":1,"tags":{"name":"http://h:1/users/%d","scenario":"s"}}}`+"\n", i)
	}
	k := readK6(t, k6.String())
	c, err := pyroscope.NewClient(srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	end := time.Date(2026, 12, 2, 18, 16, 30, 0, time.UTC)
	src := pyrosource.New(c, srv.URL, "svc", end.Add(-time.Hour), end)
	r := newReport(t, src, k)
	if row := r.Row(report.ByName, "http://h:1/users/1500"); row == nil || row.Requests != 1 || row.Samples != 0 {
		t.Errorf("row of a name without a label value: %+v, want 1 request and no samples", row)
	}
	// One query for the run and one per scenario row at most: the rows'
	// CPU is one SelectSeries per grouping, whatever the number of names.
	if n, need := merges.Load(), int64(1+1); n > need {
		t.Errorf("%d SelectMergeProfile queries, %d of them for k6 names LabelValues said no profile carries (1 scenario, 1001 k6_name values; k6 results with %d distinct names)", n, n-need, names)
	}
}

// TestManyRows: a report of 10,001 name rows (more than the 10,000 row
// profiles it once refused to fetch) makes every row, from one pass over
// the samples.
func TestManyRows(t *testing.T) {
	var samples []sample
	for i := range 10_001 {
		samples = append(samples, sample{labels: map[string]string{"k6_test_run_id": "r1", "k6_name": fmt.Sprintf("/users/%d", i)}, n: 1})
	}
	src, err := pprofsource.New("many.pb.gz", buildProfile(samples...))
	if err != nil {
		t.Fatal(err)
	}
	r, err := report.New(t.Context(), src, report.Options{By: []report.Grouping{report.ByName}})
	if err != nil {
		t.Fatalf("10,001 name rows: %v", err)
	}
	rows := r.RowsBy(report.ByName)
	if len(rows) != 10_001 {
		t.Fatalf("%d name rows, want 10001", len(rows))
	}
	for _, row := range rows {
		if row.Samples != 1 {
			t.Fatalf("row %s: %d samples, want 1", row.Key(), row.Samples)
		}
	}
	if _, err := report.New(t.Context(), src, report.Options{By: []report.Grouping{report.ByRun}}); err != nil {
		t.Errorf("run rows only: %v", err)
	}
}
