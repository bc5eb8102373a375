package main

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// cpuProfile builds a profile shaped like runtime/pprof's CPU profiles, with
// one sample of n samples (10 ms each) per label set.
func cpuProfile(samples map[int64]map[string]string) *profile.Profile {
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:     10e6,
	}
	for n, labels := range samples {
		s := &profile.Sample{Value: []int64{n, n * 10e6}, Label: map[string][]string{}}
		for k, v := range labels {
			s.Label[k] = []string{v}
		}
		p.Sample = append(p.Sample, s)
	}
	return p
}

func TestReportShares(t *testing.T) {
	const target = "http://127.0.0.1:1"
	p := cpuProfile(map[int64]map[string]string{
		60: {labelScenario: "rush_hour", labelName: target + "/car", labelRunID: "9"},
		30: {labelScenario: "off_peak", labelName: target + "/bike", labelRunID: "9"},
		10: {},
	})
	sent := &counts{bySP: map[string]map[string]int64{
		"rush_hour": {"/car": 10}, // 30 units
		"off_peak":  {"/bike": 10, "/": 5},
	}}
	r := newReport(p, sent, target)
	if r.samples != 100 || r.total.Seconds() != 1 || r.unlabelled.Seconds() != 0.1 {
		t.Fatalf("samples %d, total %s, unlabelled %s; want 100, 1s, 0.1s", r.samples, r.total, r.unlabelled)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	want := []row{
		{value: "rush_hour", share: 0.6, ofK6: 60.0 / 90, work: 0.75},
		{value: "off_peak", share: 0.3, ofK6: 30.0 / 90, work: 0.25},
	}
	for i, w := range want {
		g := r.scenarios[i]
		if g.value != w.value || !near(g.share, w.share) || !near(g.ofK6, w.ofK6) || !near(g.work, w.work) {
			t.Errorf("scenario row %d = %+v, want %+v", i, g, w)
		}
	}
	// "/" got requests but no CPU: it still has a row, so that a route whose
	// labels went missing shows up as 0%.
	if len(r.names) != 3 || r.names[2].value != target+"/" || r.names[2].cpu != 0 {
		t.Errorf("name rows %+v, want car, bike and an empty /", r.names)
	}

	var b bytes.Buffer
	r.write(&b)
	for _, s := range []string{"k6_scenario", "rush_hour", "60.0%", "75.0%", "(no k6 labels)", "10.0%", "k6_test_run_id=9 on 90.0%"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("report lacks %q:\n%s", s, b.String())
		}
	}
}

func TestReportEmpty(t *testing.T) {
	var b bytes.Buffer
	newReport(cpuProfile(nil), nil, "").write(&b)
	newReport(&profile.Profile{}, nil, "").write(&b)
	if !strings.Contains(b.String(), "no samples") {
		t.Errorf("empty report: %q", b.String())
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"rideshare.cpu.pprof":     "rideshare.cpu.pprof",
		"/tmp/a b.pprof":          "'/tmp/a b.pprof'",
		"it's.pprof":              `'it'\''s.pprof'`,
		"http://h:1/p?seconds=10": "'http://h:1/p?seconds=10'",
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -1000: "-1,000"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %s, want %s", n, got, want)
		}
	}
}
