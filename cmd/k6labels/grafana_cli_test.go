package main

import (
	"encoding/json"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
)

// TestGrafanaLinks: with --grafana, report's json rows and diff's html and
// markdown carry links to Grafana Profiles Drilldown of the replayed
// Pyroscope service, its query window and each row's labels.
func TestGrafanaLinks(t *testing.T) {
	t.Parallel() // no CPU profile, environment or global of the package
	srv, _, fx := pyrServer(t)
	const grafana = "https://grafana.example/?var-dataSource=pyro"
	code, out, errOut := pyrRun(t, pyrArgs("report", srv.URL, "--grafana", grafana, "--k6", filepath.Join(fx, "k6", "run-fx1.json.gz"),
		"--run-id", "fx1", "--by", "scenario,name", "--format", "json")...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var r struct {
		Rows []struct {
			By     []string `json:"by"`
			Values []string `json:"values"`
			URL    string   `json:"grafana_url"`
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	for _, row := range r.Rows {
		u, err := url.Parse(row.URL)
		if err != nil || u.Host != "grafana.example" || u.Path != "/a/grafana-pyroscope-app/explore" {
			t.Errorf("%v=%v: link %q", row.By, row.Values, row.URL)
			continue
		}
		q := u.Query()
		want := "k6_test_run_id|=|fx1," + row.By[0] + "|=|" + row.Values[0]
		if q.Get("var-filters") != want || q.Get("var-serviceName") != pyrService || q.Get("var-dataSource") != "pyro" ||
			q.Get("from") != "1796234535000" || q.Get("to") != "1796234640000" {
			t.Errorf("%v=%v: link %s, want var-filters=%s and the window 18:02:15–18:04:00", row.By, row.Values, row.URL, want)
		}
	}
	if len(r.Rows) < 5 {
		t.Errorf("%d rows", len(r.Rows))
	}

	for _, format := range []string{"html", "markdown"} {
		code, out, errOut = pyrRun(t, pyrArgs("diff", srv.URL, "--grafana", grafana,
			"--base-k6", filepath.Join(fx, "k6", "run-fx1.json.gz"), "--base-run-id", "fx1",
			"--k6", filepath.Join(fx, "k6", "run-fx2.json.gz"), "--run-id", "fx2",
			"--by", "scenario,name", "--format", format, "--write-profiles", filepath.Join(t.TempDir(), "d"))...)
		if code != exitOK {
			t.Fatalf("diff --format %s: exit %d: %s", format, code, errOut)
		}
		if n := strings.Count(out, "explorationType=diff-flame-graph"); n < 5 {
			t.Errorf("diff --format %s: %d diff flame graph links, want one per row:\n%s", format, n, out)
		}
	}

	if code, _, errOut := pyrRun(t, "report", "--grafana", grafana, filepath.Join(fx, "local", "fx4.cpu.pb.gz")); code != exitUsage ||
		!strings.Contains(errOut, "--grafana links rows to the profiles of a Pyroscope server") {
		t.Errorf("--grafana without --pyroscope: exit %d: %s", code, errOut)
	}
}
