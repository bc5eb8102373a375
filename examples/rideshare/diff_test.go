package main

import (
	"bytes"
	"context"
	"net/http"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"github.com/k6labels/k6labels/cmd/k6labels/output"
	"github.com/k6labels/k6labels/cmd/k6labels/report"
)

// diffHz is the profiling rate of the real-pair test: ten times Go's
// default, so that a few seconds of CPU give the samples of a 30 s run at
// 100 Hz and the test stays short on a shared machine.
const diffHz = 250

// diffRequests is how many requests each run of the real-pair test sends:
// some 2,000 units of work, about 4 s of CPU.
const diffRequests = 2000

// recordAt profiles f at hz samples per second. runtime/pprof writes its
// 100 Hz period into the profile whatever the rate, so the period and the
// cpu values are set here from the sample counts.
func recordAt(t *testing.T, hz int, f func()) *profile.Profile {
	t.Helper()
	runtime.SetCPUProfileRate(hz)
	var buf bytes.Buffer
	if err := pprof.StartCPUProfile(&buf); err != nil {
		runtime.SetCPUProfileRate(0)
		t.Fatal(err)
	}
	f()
	pprof.StopCPUProfile()
	p, err := profile.ParseData(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	period := int64(time.Second) / int64(hz)
	p.Period = period
	for _, s := range p.Sample {
		s.Value[1] = s.Value[0] * period
	}
	return p
}

// pairRun sends diffRequests to h under a profile and returns its report.
func pairRun(t *testing.T, h http.Handler, id string) *report.Report {
	t.Helper()
	return pairRunN(t, h, id, diffRequests)
}

// pairRunN sends n requests to h under a profile and returns its report.
func pairRunN(t *testing.T, h http.Handler, id string, n int) *report.Report {
	t.Helper()
	srv, err := startServer("127.0.0.1:0", h)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	d := newDriver(srv.URL, id, defaultScenarios)
	d.maxRequests = int64(n)
	start := time.Now()
	p := recordAt(t, diffHz, func() { d.run(context.Background()) })
	if err := d.err(); err != nil {
		t.Fatal(err)
	}
	r, err := newDemoReport(context.Background(), p, d.counts(), srv.URL, id, start, time.Now(),
		report.ByScenario, report.ByName, report.ByScenarioName)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// flagged returns the keys of rows with a verdict of worse or better.
func flagged(d *report.Diff) []string {
	var out []string
	for _, dr := range d.Rows {
		if dr.Verdict == report.Worse || dr.Verdict == report.Better {
			out = append(out, strings.Join(dr.By, ",")+"="+dr.Key+" "+dr.Verdict)
		}
	}
	return out
}

// TestDiffRealPair: three real in-process runs with real CPU profiles.
// Between two runs of the same service the diff flags nothing; against a
// run whose /car costs 4 units instead of 3 (+33%) it flags /car, and only
// the rows that contain /car.
func TestDiffRealPair(t *testing.T) {
	base := pairRun(t, newService(), "base")
	same := pairRun(t, newService(), "same")
	costlier := pairRun(t, newCostlierService(costlierUnits), "costlier")

	d, err := report.NewDiff(base, same, report.DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	output.WriteDiff(&out, d, output.Text)
	t.Logf("no change:\n%s", out.String())
	if f := flagged(d); len(f) > 0 {
		t.Errorf("no-change pair flagged %v", f)
	}

	d, err = report.NewDiff(base, costlier, report.DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	output.WriteDiff(&out, d, output.Text)
	t.Logf("/car costlier:\n%s", out.String())
	allowed := []string{
		"k6_name=/car worse",
		"k6_scenario,k6_name=rush_hour /car worse",
		"k6_scenario=rush_hour worse", // rush_hour orders cars: it is costlier too
	}
	got := flagged(d)
	for _, f := range got {
		if !slices.Contains(allowed, f) {
			t.Errorf("flagged %s: only rows with /car may be", f)
		}
	}
	// /car is found, or the verdict says it cannot tell: at the default
	// between-run spread a short run may not see +33%.
	v := verdict(d)
	if slices.Contains(got, allowed[0]) {
		if !strings.Contains(v, "grew beyond noise on /car +") || strings.Contains(v, "/scooter +") {
			t.Errorf("verdict %q", v)
		}
	} else if !strings.Contains(v, "cannot tell") || !strings.Contains(v, "/car (sees") {
		t.Errorf("/car not flagged (%v) and the verdict does not say it cannot tell: %q", got, v)
	}
}

// TestVerdictSaysWhatItCannotSee: the demo's verdict names a costlier
// route; never says "no route got costlier" when a route was inconclusive;
// and names a common change.
func TestVerdictSaysWhatItCannotSee(t *testing.T) {
	row := func(key, verdict string, change, detectable float64) report.DiffRow {
		return report.DiffRow{By: report.ByName, Key: key, Verdict: verdict, Normalized: change, Detectable: detectable}
	}
	for _, c := range []struct {
		name    string
		d       report.Diff
		want    []string
		notWant []string
	}{
		{"found", report.Diff{Detect: 0.1, Rows: []report.DiffRow{row("/car", report.Worse, 0.33, 0.2), row("/bike", report.Same, 0, 0.08)}},
			[]string{"grew beyond noise on /car +33.0%"}, []string{"cannot tell", "no route"}},
		{"found, another unsure", report.Diff{Detect: 0.1, Rows: []report.DiffRow{row("/car", report.Worse, 0.33, 0.2), row("/bike", report.Inconclusive, 0, 0.4)}},
			[]string{"/car +33.0%", "cannot tell for /bike (sees +40.0% at best)"}, []string{"no route"}},
		{"cannot see /car", report.Diff{Detect: 0.1, Rows: []report.DiffRow{row("/car", report.Inconclusive, 0.2, 0.35), row("/bike", report.Same, 0, 0.08)}},
			[]string{"cannot tell", "/car (sees +35.0% at best)"}, []string{"no route got costlier per request"}},
		{"nothing", report.Diff{Detect: 0.1, Rows: []report.DiffRow{row("/car", report.Same, 0.01, 0.08)}},
			[]string{"no route got costlier per request beyond noise"}, []string{"cannot tell"}},
		{"common change", report.Diff{Detect: 0.1, Uniform: &report.Shift{Change: 0.2, Rows: 3}, Rows: []report.DiffRow{row("/car", report.Same, 0.01, 0.08)}},
			[]string{"every route moved together, +20.0%"}, nil},
	} {
		v := verdict(&c.d)
		for _, w := range c.want {
			if !strings.Contains(v, w) {
				t.Errorf("%s: verdict %q does not say %q", c.name, v, w)
			}
		}
		for _, w := range c.notWant {
			if strings.Contains(v, w) {
				t.Errorf("%s: verdict %q says %q", c.name, v, w)
			}
		}
	}
}
