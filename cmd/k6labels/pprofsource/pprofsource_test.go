package pprofsource_test

import (
	"testing"

	"github.com/google/pprof/profile"
	"github.com/k6labels/k6labels/cmd/k6labels/pprofsource"
	"github.com/k6labels/k6labels/cmd/k6labels/report"
)

// TestSplit: one pass puts each sample in the part of its value tuple,
// within the scope; samples lacking a label of the grouping are in none.
func TestSplit(t *testing.T) {
	fn := &profile.Function{ID: 1, Name: "main.work"}
	loc := &profile.Location{ID: 1, Line: []profile.Line{{Function: fn}}}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"}, Period: 1e7,
		Function: []*profile.Function{fn}, Location: []*profile.Location{loc},
	}
	add := func(n int64, labels ...string) {
		s := &profile.Sample{Location: []*profile.Location{loc}, Value: []int64{n, n * 1e7}, Label: map[string][]string{}}
		for i := 0; i < len(labels); i += 2 {
			s.Label[labels[i]] = []string{labels[i+1]}
		}
		p.Sample = append(p.Sample, s)
	}
	add(1, "k6_test_run_id", "r1", "k6_scenario", "s", "k6_name", "/a")
	add(2, "k6_test_run_id", "r1", "k6_scenario", "s", "k6_name", "/a")
	add(4, "k6_test_run_id", "r1", "k6_scenario", "t", "k6_name", "/a")
	add(8, "k6_test_run_id", "r1", "k6_scenario", "s")                   // no name: in no name part
	add(16, "k6_test_run_id", "r2", "k6_scenario", "s", "k6_name", "/a") // another run: out of scope
	src, err := pprofsource.New("p.pb.gz", p)
	if err != nil {
		t.Fatal(err)
	}
	scope := []report.Matcher{{Name: report.LabelRunID, Value: "r1"}}
	parts, err := src.Split(t.Context(), report.ByScenarioName, scope)
	if err != nil {
		t.Fatal(err)
	}
	count := func(key ...string) int64 {
		var n int64
		for _, s := range parts[report.TupleKey(key)].Profile.Sample {
			n += s.Value[0]
		}
		return n
	}
	if len(parts) != 2 || count("s", "/a") != 3 || count("t", "/a") != 4 {
		t.Errorf("scenario × name parts: %d, s /a %d, t /a %d; want 2 parts of 3 and 4 samples", len(parts), count("s", "/a"), count("t", "/a"))
	}
	if parts, err = src.Split(t.Context(), report.ByScenario, nil); err != nil || len(parts) != 2 || count("s") != 1+2+8+16 {
		t.Errorf("scenario parts without scope: %d, s %d (%v); want 2 parts, s of 27 samples", len(parts), count("s"), err)
	}
}
