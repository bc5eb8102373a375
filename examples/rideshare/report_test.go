package main

import (
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"github.com/k6labels/k6labels/cmd/k6labels/k6results"
	"github.com/k6labels/k6labels/cmd/k6labels/output"
	"github.com/k6labels/k6labels/cmd/k6labels/report"
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

func TestK6Results(t *testing.T) {
	sent := counts{bySP: map[string]map[string]int64{
		"rush_hour": {"/car": 10, "/scooter": 0},
		"off_peak":  {"/bike": 4, "/": 5},
	}}
	res := k6Results(sent, "http://127.0.0.1:1", time.Unix(1, 0), time.Unix(2, 0))
	want := map[k6results.Key]int64{
		{Scenario: "rush_hour", Name: "http://127.0.0.1:1/car"}: 10,
		{Scenario: "off_peak", Name: "http://127.0.0.1:1/bike"}: 4,
		{Scenario: "off_peak", Name: "http://127.0.0.1:1/"}:     5,
	}
	if !maps.Equal(res.Requests, want) || res.Total != 19 {
		t.Errorf("k6Results = %v (total %d), want %v (19)", res.Requests, res.Total, want)
	}
}

func TestDemoReport(t *testing.T) {
	const target = "http://127.0.0.1:1"
	p := cpuProfile(map[int64]map[string]string{
		60: {labelScenario: "rush_hour", labelName: target + "/car", labelRunID: "9"},
		30: {labelScenario: "off_peak", labelName: target + "/bike", labelRunID: "9"},
		10: {},
	})
	sent := counts{bySP: map[string]map[string]int64{"rush_hour": {"/car": 100}, "off_peak": {"/bike": 100, "/": 50}}}
	r, err := newDemoReport(context.Background(), p, sent, target, "9", time.Unix(1, 0), time.Unix(2, 0))
	if err != nil {
		t.Fatal(err)
	}
	car := r.Row(report.ByName, target+"/car")
	if car == nil || car.Requests != 100 || car.PerRequest.Est != 6*time.Millisecond || car.OfAll != 0.6 {
		t.Fatalf("car row %+v, want 100 requests, 6ms each, 60%% of all", car)
	}
	if root := r.Row(report.ByName, target+"/"); root == nil || root.CPU != 0 || root.Requests != 50 {
		t.Errorf("/ row %+v: a route with requests and no CPU must show", root)
	}
	var b strings.Builder
	if err := output.WriteReport(&b, r, output.Text); err != nil {
		t.Fatal(err)
	}
	writeGroundTruth(&b, r)
	for _, s := range []string{"k6_scenario", "rush_hour", "60.0%", "(no k6 labels)", "10.0%", "6.000", "/car      2.000 ms per unit"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("report lacks %q:\n%s", s, b.String())
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
