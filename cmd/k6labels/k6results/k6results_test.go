package k6results_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/k6labels/k6labels/cmd/k6labels/internal/fixture"
	"github.com/k6labels/k6labels/cmd/k6labels/k6results"
)

func TestFixtures(t *testing.T) {
	dir := fixture.Dir(t)
	const base = "http://127.0.0.1:18080"
	// Figures from the fixtures README.
	readme := map[string]struct {
		total, points int64
		car, bike     int64
		firstMs       int64
		lastMs        int64
	}{
		"k6/run-fx1":    {7273, 101852, 2479, 1185, 1796234565970, 1796234580965},
		"k6/run-fx2":    {6971, 97624, 2340, 1154, 1796234586090, 1796234601094},
		"local/run-fx4": {9764, 0, 3316, 1597, 0, 0},
	}
	for name, want := range readme {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(dir, name+".json.gz")
			js, err := k6results.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			cs, err := k6results.ReadFile(filepath.Join(dir, name+".csv.gz"))
			if err != nil {
				t.Fatal(err)
			}
			counts, first, last := fixture.CountHTTPReqs(t, path)
			if !maps.Equal(js.Requests, counts) {
				t.Errorf("json counts %v, counted independently %v", js.Requests, counts)
			}
			if !maps.Equal(cs.Requests, counts) {
				t.Errorf("csv counts %v, json counted independently %v", cs.Requests, counts)
			}
			if !js.Start.Equal(first) || !js.End.Equal(last) {
				t.Errorf("json range %s – %s, independently %s – %s", js.Start, js.End, first, last)
			}
			if cs.Start.Unix() != first.Unix() || cs.End.Unix() != last.Unix() {
				t.Errorf("csv range %s – %s, want the seconds of %s – %s", cs.Start, cs.End, first, last)
			}
			if js.Format != "json" || cs.Format != "csv" {
				t.Errorf("formats %q, %q", js.Format, cs.Format)
			}
			if js.Total != want.total || cs.Total != want.total {
				t.Errorf("totals json %d, csv %d, README %d", js.Total, cs.Total, want.total)
			}
			if want.points > 0 && js.Points != want.points {
				t.Errorf("json points %d, README %d", js.Points, want.points)
			}
			if got := js.Requests[k6results.Key{Scenario: "rush_hour", Name: base + "/car"}]; got != want.car {
				t.Errorf("rush_hour /car: %d, README %d", got, want.car)
			}
			if got := js.Requests[k6results.Key{Scenario: "off_peak", Name: base + "/bike"}]; got != want.bike {
				t.Errorf("off_peak /bike: %d, README %d", got, want.bike)
			}
			if want.firstMs > 0 && (js.Start.UnixMilli() != want.firstMs || js.End.UnixMilli() != want.lastMs) {
				t.Errorf("range %d – %d ms, README %d – %d", js.Start.UnixMilli(), js.End.UnixMilli(), want.firstMs, want.lastMs)
			}
			if len(js.Requests) != 5 {
				t.Errorf("%d (scenario, name) pairs, want 5: %v", len(js.Requests), js.Keys())
			}
		})
	}
}

func TestReadPlainAndNames(t *testing.T) {
	in := `{"type":"Metric","data":{"name":"http_reqs"},"metric":"http_reqs"}
{"metric":"http_reqs","type":"Point","data":{"time":"2026-01-01T00:00:01Z","value":1,"tags":{"name":"http://h:1/car?id=1","scenario":"a"}}}

{"metric":"http_req_duration","type":"Point","data":{"time":"2026-01-01T00:00:09Z","value":7,"tags":{"name":"http://h:1/car?id=1","scenario":"a"}}}
{"metric":"http_reqs","type":"Point","data":{"time":"2026-01-01T00:00:03Z","value":1,"tags":{"name":"http://h:1/car?id=2","scenario":"a"}}}
{"metric":"http_reqs","type":"Point","data":{"time":"2026-01-01T00:00:02Z","value":1,"tags":{"name":"order%20bike","scenario":"b"}}}`
	res, err := k6results.Read(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := map[k6results.Key]int64{{Scenario: "a", Name: "http://h:1/car"}: 2, {Scenario: "b", Name: "order bike"}: 1}
	if !maps.Equal(res.Requests, want) {
		t.Errorf("counts %v, want %v", res.Requests, want)
	}
	if res.Start.Second() != 1 || res.End.Second() != 3 || res.Points != 4 {
		t.Errorf("range %s – %s (the duration point at :09 must not count), points %d", res.Start, res.End, res.Points)
	}
}

func TestReadErrors(t *testing.T) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(`{"metric":"vus","type":"Point","data":{"time":"2026-01-01T00:00:01Z","value":1,"tags":{}}}` + "\n"))
	zw.Close()
	for name, c := range map[string]struct {
		in   string
		want error
		text string
	}{
		"profile":       {"\x0a\x04\x08\x01\x10\x02", k6results.ErrFormat, "--out json=FILE"},
		"empty":         {"", k6results.ErrFormat, "--out json=FILE"},
		"no http_reqs":  {gz.String(), k6results.ErrNoHTTPReqs, "among 1 points"},
		"csv no reqs":   {"metric_name,timestamp,metric_value,scenario,name\nvus,1,1,a,b\n", k6results.ErrNoHTTPReqs, "k6/http"},
		"csv columns":   {"metric_name,timestamp\nhttp_reqs,1\n", k6results.ErrFormat, "no metric_value column"},
		"broken json":   {`{"metric":"http_reqs","type":"Point","data":{` + "\n", k6results.ErrFormat, "line 1 is not JSON"},
		"broken gzip":   {"\x1f\x8bxx", k6results.ErrFormat, "gzip"},
		"csv timestamp": {"metric_name,timestamp,metric_value,scenario,name\nhttp_reqs,x,1,a,b\n", k6results.ErrFormat, "timestamp"},
	} {
		_, err := k6results.Read(strings.NewReader(c.in))
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.text) {
			t.Errorf("%s: %v, want %v mentioning %q", name, err, c.want, c.text)
		}
	}
	if _, err := k6results.ReadFile(filepath.Join(t.TempDir(), "missing.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestLongLine(t *testing.T) {
	in := `{"metric":"x","pad":"` + strings.Repeat("a", 17<<20) + `"}`
	if _, err := k6results.Read(strings.NewReader(in)); !errors.Is(err, k6results.ErrFormat) || !strings.Contains(err.Error(), "longer than") {
		t.Errorf("17 MB line: %v", err)
	}
}

// TestSetupTeardownLeftOut: http_reqs of setup() and teardown() (group
// ::setup or ::teardown, nested groups too, no scenario tag) are left out
// of the counts and the time range, in json and csv, and counted in LeftOut.
func TestSetupTeardownLeftOut(t *testing.T) {
	const point = `{"metric":"http_reqs","type":"Point","data":{"time":"2026-01-01T00:00:%02dZ","value":1,"tags":{"group":%q,"name":"http://h:1/login"%s}}}` + "\n"
	const csvHead = "metric_name,timestamp,metric_value,check,error,error_code,expected_response,group,method,name,proto,scenario,service,status,subproto,tls_version,url,extra_tags,metadata\n"
	const row = "http_reqs,%d,1.000000,,,,true,%s,POST,http://h:1/login,HTTP/1.1,%s,,200,,,http://h:1/login,,\n"
	var js, cs strings.Builder
	cs.WriteString(csvHead)
	for i, p := range []struct{ group, scenario string }{
		{"::setup", ""}, {"::setup::login", ""}, {"", "s"}, {"::checkout", "s"}, {"::teardown", ""}, {"", ""},
	} {
		tag := ""
		if p.scenario != "" {
			tag = `,"scenario":"` + p.scenario + `"`
		}
		fmt.Fprintf(&js, point, 10*i, p.group, tag)
		fmt.Fprintf(&cs, row, 1767225600+10*i, p.group, p.scenario)
	}
	for format, in := range map[string]string{"json": js.String(), "csv": cs.String()} {
		res, err := k6results.Read(strings.NewReader(in))
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		want := map[k6results.Key]int64{{Scenario: "s", Name: "http://h:1/login"}: 2}
		if !maps.Equal(res.Requests, want) || res.Total != 2 || res.LeftOut != 4 {
			t.Errorf("%s: counts %v, total %d, left out %d; want %v, 2, 4", format, res.Requests, res.Total, res.LeftOut, want)
		}
		if res.Start.Second() != 20 || res.End.Second() != 30 {
			t.Errorf("%s: range %s – %s, want :20 – :30 (the scenario's requests)", format, res.Start, res.End)
		}
	}
	setupOnly := fmt.Sprintf(point, 1, "::setup", "")
	if _, err := k6results.Read(strings.NewReader(setupOnly)); !errors.Is(err, k6results.ErrNoHTTPReqs) || !strings.Contains(err.Error(), "setup() or teardown()") {
		t.Errorf("setup() requests only: %v", err)
	}
}
