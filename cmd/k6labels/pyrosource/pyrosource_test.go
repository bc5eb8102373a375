package pyrosource_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/k6labels/k6labels/cmd/k6labels/pyroscope"
	"github.com/k6labels/k6labels/cmd/k6labels/pyroscope/pyroscopetest"
	"github.com/k6labels/k6labels/cmd/k6labels/pyrosource"
	"github.com/k6labels/k6labels/cmd/k6labels/report"
)

// TestSplit: fx1's CPU by k6_name and by k6_scenario is one SelectSeries
// each, and each value's CPU is that of its recorded merged profile
// (README: car 13.44 s, scooter 8.31 s, bike 2.02 s, no sample of "/";
// rush_hour 17.66 s, off_peak 6.11 s), in 10 ms samples.
func TestSplit(t *testing.T) {
	xs, err := pyroscopetest.Load(filepath.Join(pyroscopetest.Fixtures(t), "pyroscope"))
	if err != nil {
		t.Fatal(err)
	}
	srv := pyroscopetest.NewServer(t, xs)
	c, err := pyroscope.NewClient(srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	src := pyrosource.New(c, srv.URL, "rideshare.k6labels", time.UnixMilli(1796234535000), time.UnixMilli(1796234640000)).ForRun("fx1")
	scope := []report.Matcher{{Name: report.LabelRunID, Value: "fx1"}}
	for _, tc := range []struct {
		g    report.Grouping
		want map[string]time.Duration
	}{
		{report.ByName, map[string]time.Duration{"http://127.0.0.1:18080/car": 13440 * time.Millisecond,
			"http://127.0.0.1:18080/scooter": 8310 * time.Millisecond, "http://127.0.0.1:18080/bike": 2020 * time.Millisecond}},
		{report.ByScenario, map[string]time.Duration{"rush_hour": 17660 * time.Millisecond, "off_peak": 6110 * time.Millisecond}},
	} {
		before := srv.Hits()
		parts, err := src.Split(t.Context(), tc.g, scope)
		if err != nil {
			t.Fatal(err)
		}
		if len(parts) != len(tc.want) {
			t.Errorf("%s: %d parts, want %d: %v", tc.g, len(parts), len(tc.want), parts)
		}
		for v, cpu := range tc.want {
			p := parts[report.TupleKey([]string{v})]
			if p.Profile != nil || p.Count.CPU != cpu || p.Count.Samples != int64(cpu/(10*time.Millisecond)) {
				t.Errorf("%s=%s: %+v, want %v in %d samples and no profile", tc.g, v, p, cpu, cpu/(10*time.Millisecond))
			}
		}
		queries := 0
		for name, n := range srv.Hits() {
			queries += n - before[name]
		}
		if queries != 1 {
			t.Errorf("%s: %d queries, want one SelectSeries", tc.g, queries)
		}
	}
}
