package report_test

import (
	"bytes"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/k6labels/k6labels/cmd/k6labels/output"
	"github.com/k6labels/k6labels/cmd/k6labels/report"
)

// grafanaReports are two one-row reports of runs fx1 and fx2 with links.
func grafanaReports(t *testing.T) (*report.Report, *report.Report) {
	t.Helper()
	mk := func(run string, start time.Time) *report.Report {
		g, err := report.NewGrafana("https://example.grafana.net/?var-dataSource=pyroscope-uid", "rideshare.k6labels", start, start.Add(2*time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		return &report.Report{Source: "Pyroscope", RunID: run, Grafana: g, Confidence: 0.95, Rows: []report.Row{
			{By: report.ByName, Values: []string{"http://127.0.0.1:18080/car"}, Count: report.Count{Samples: 100, CPU: time.Second}},
		}}
	}
	start := time.Date(2026, 12, 2, 18, 2, 15, 0, time.UTC)
	return mk("fx1", start), mk("fx2", start.Add(10*time.Minute))
}

// The links as docs/report.md documents them (Grafana Profiles Drilldown,
// the grafana-pyroscope-app plugin's explore page).
const (
	goldenRowURL = "https://example.grafana.net/a/grafana-pyroscope-app/explore?explorationType=flame-graph&from=1796234535000&to=1796234655000" +
		"&var-dataSource=pyroscope-uid&var-filters=k6_test_run_id%7C%3D%7Cfx1%2Ck6_name%7C%3D%7Chttp%3A%2F%2F127.0.0.1%3A18080%2Fcar" +
		"&var-profileMetricId=process_cpu%3Acpu%3Ananoseconds%3Acpu%3Ananoseconds&var-serviceName=rideshare.k6labels"
	goldenDiffURL = "https://example.grafana.net/a/grafana-pyroscope-app/explore?diffFrom=1796234535000&diffFrom-2=1796235135000" +
		"&diffTo=1796234655000&diffTo-2=1796235255000&explorationType=diff-flame-graph&from=1796234535000&to=1796235255000" +
		"&var-dataSource=pyroscope-uid&var-filtersBaseline=k6_test_run_id%7C%3D%7Cfx1%2Ck6_name%7C%3D%7Chttp%3A%2F%2F127.0.0.1%3A18080%2Fcar" +
		"&var-filtersComparison=k6_test_run_id%7C%3D%7Cfx2%2Ck6_name%7C%3D%7Chttp%3A%2F%2F127.0.0.1%3A18080%2Fcar" +
		"&var-profileMetricId=process_cpu%3Acpu%3Ananoseconds%3Acpu%3Ananoseconds&var-serviceName=rideshare.k6labels"
)

// TestGrafanaURLGolden: a row's link and a diff row's link are exactly the
// documented URLs, and they decode to the documented parameters.
func TestGrafanaURLGolden(t *testing.T) {
	b, a := grafanaReports(t)
	if got := b.GrafanaURL(&b.Rows[0]); got != goldenRowURL {
		t.Errorf("row link\n%s\nwant\n%s", got, goldenRowURL)
	}
	u, err := url.Parse(goldenRowURL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	for k, want := range map[string]string{
		"explorationType": "flame-graph", "var-serviceName": "rideshare.k6labels", "var-dataSource": "pyroscope-uid",
		"var-profileMetricId": "process_cpu:cpu:nanoseconds:cpu:nanoseconds",
		"var-filters":         "k6_test_run_id|=|fx1,k6_name|=|http://127.0.0.1:18080/car",
		"from":                "1796234535000", "to": "1796234655000",
	} {
		if q.Get(k) != want {
			t.Errorf("%s=%q, want %q", k, q.Get(k), want)
		}
	}
	d := &report.Diff{Before: b, After: a, Rows: []report.DiffRow{{By: report.ByName, Key: "/car", Before: &b.Rows[0], After: &a.Rows[0]}}}
	if got := d.GrafanaURL(&d.Rows[0]); got != goldenDiffURL {
		t.Errorf("diff link\n%s\nwant\n%s", got, goldenDiffURL)
	}
	d.Rows[0].Before = nil
	if got := d.GrafanaURL(&d.Rows[0]); got != "" {
		t.Errorf("a row of one run links to %s", got)
	}
}

// TestGrafanaURLInOutputs: text, markdown and json carry each row's link.
func TestGrafanaURLInOutputs(t *testing.T) {
	b, _ := grafanaReports(t)
	for _, f := range []output.Format{output.Text, output.Markdown, output.JSON} {
		var out bytes.Buffer
		if err := output.WriteReport(&out, b, f); err != nil {
			t.Fatal(err)
		}
		s := out.String()
		if f == output.JSON {
			var j struct {
				Rows []struct {
					URL string `json:"grafana_url"`
				} `json:"rows"`
			}
			if err := json.Unmarshal(out.Bytes(), &j); err != nil {
				t.Fatal(err)
			}
			s = j.Rows[0].URL
		}
		if !strings.Contains(s, goldenRowURL) {
			t.Errorf("%s output lacks the row's link:\n%s", f, out.String())
		}
	}
}

// TestGrafanaURLChecked: --grafana must be an http(s) URL without
// credentials, which every output would print.
func TestGrafanaURLChecked(t *testing.T) {
	for _, bad := range []string{"grafana.example", "ftp://grafana.example", "https://admin:secret@grafana.example"} {
		_, err := report.NewGrafana(bad, "s", time.Time{}, time.Time{})
		if err == nil {
			t.Errorf("%q accepted", bad)
		} else if strings.Contains(err.Error(), "secret") {
			t.Errorf("%q: the error repeats the password: %v", bad, err)
		}
	}
}
