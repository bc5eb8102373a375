package report_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/k6labels/k6labels"
	"github.com/k6labels/k6labels/cmd/k6labels/pprofsource"
	"github.com/k6labels/k6labels/cmd/k6labels/pyroscope"
	"github.com/k6labels/k6labels/cmd/k6labels/pyroscope/pyroscopetest"
	"github.com/k6labels/k6labels/cmd/k6labels/pyrosource"
	"github.com/k6labels/k6labels/cmd/k6labels/report"
)

// spinFor burns CPU for d of this goroutine's time, checked every
// 64k rounds.
func spinFor(d time.Duration) uint64 {
	x, start := uint64(1), time.Now()
	for time.Since(start) < d {
		for range 1 << 16 {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
		}
	}
	return x
}

// TestQueryStringLabels: a service built with WithQueryStrings labels
// /car?id=1 and /car?id=2 apart, while k6's results name both
// http://host/car (the query string kept aside). In a real profile the
// k6_name row http://host/car holds every request and the CPU of both
// labels, read from the profile file and from Pyroscope.
func TestQueryStringLabels(t *testing.T) {
	var sink uint64
	mux := http.NewServeMux()
	mux.HandleFunc("/car", func(w http.ResponseWriter, r *http.Request) {
		sink += spinFor(time.Duration(len(r.URL.Query().Get("id"))) * 4 * time.Millisecond)
	})
	srv := httptest.NewServer(k6labels.NewHandler(mux, k6labels.WithQueryStrings(true)))
	defer srv.Close()
	var buf bytes.Buffer
	if err := pprof.StartCPUProfile(&buf); err != nil {
		t.Fatal(err)
	}
	var k6 strings.Builder
	for i := range 200 {
		u := fmt.Sprintf("%s/car?id=%d", srv.URL, 1+9*(i%2)) // id=1, id=10: one and two digits of spin
		req, _ := http.NewRequest(http.MethodGet, u, nil)
		req.Header.Set("Baggage", "k6.test_run_id=q,k6.scenario=default,k6.name="+u)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		fmt.Fprintf(&k6, `{"metric":"http_reqs","type":"Point","data":{"time":%q,"value":1,"tags":{"method":"GET","name":%q,"scenario":"default"}}}`+"\n",
			time.Now().UTC().Format(time.RFC3339Nano), u)
	}
	pprof.StopCPUProfile()
	p, err := profile.ParseData(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	byLabel := map[string]time.Duration{}
	for _, s := range p.Sample {
		if v := s.Label[report.LabelName]; len(v) > 0 {
			byLabel[v[0]] += time.Duration(s.Value[1])
		}
	}
	car := srv.URL + "/car"
	if byLabel[car+"?id=1"] == 0 || byLabel[car+"?id=10"] == 0 || len(byLabel) != 2 {
		t.Fatalf("the profile's k6_name labels: %v; want %s?id=1 and ?id=10 with CPU", byLabel, car)
	}
	src, err := pprofsource.New("cpu.pb.gz", p)
	if err != nil {
		t.Fatal(err)
	}
	// The same profile pushed to Pyroscope: rows from label series, the
	// name row's functions from the merged profiles of its two labels.
	pyro := pyroscopetest.NewServer(t, nil)
	pyro.AddProfile("cars", p)
	c, err := pyroscope.NewClient(pyro.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for _, src := range []report.Source{src, pyrosource.New(c, pyro.URL, "cars", now.Add(-time.Minute), now).ForRun("q")} {
		r, err := report.New(t.Context(), src, report.Options{K6: readK6(t, k6.String()), TopEveryRow: true})
		if err != nil {
			t.Fatal(err)
		}
		row := r.Row(report.ByName, car)
		if want := byLabel[car+"?id=1"] + byLabel[car+"?id=10"]; row == nil || row.CPU != want || row.Requests != 200 {
			t.Fatalf("%s: k6_name row %s: %+v; want %v of CPU (its two labels') and 200 requests", src, car, row, want)
		}
		if len(r.Unmatched) != 0 || len(r.RowsBy(report.ByName)) != 1 {
			t.Errorf("%s: unmatched k6 names %v, name rows %d; want none and one", src, r.Unmatched, len(r.RowsBy(report.ByName)))
		}
		if row := r.Row(report.ByScenarioName, "default", car); row == nil || row.Requests != 200 {
			t.Errorf("%s: scenario × name row: %+v; want 200 requests", src, row)
		}
		if len(row.Top) == 0 || row.Top[0].Name != "github.com/k6labels/k6labels/cmd/k6labels/report_test.spinFor" {
			t.Errorf("%s: k6_name row's top functions %+v; want spinFor first, from its labels' profiles", src, row.Top)
		}
	}
	t.Logf("id=1 %v, id=10 %v", byLabel[car+"?id=1"], byLabel[car+"?id=10"])
}
