package report_test

import (
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/k6labels/k6labels/cmd/k6labels/k6results"
	"github.com/k6labels/k6labels/cmd/k6labels/report"
)

// sample is n 10 ms samples in function fn (main.work if empty) carrying
// labels.
type sample struct {
	labels map[string]string
	n      int64
	fn     string
}

// buildProfile builds a runtime/pprof-like CPU profile (samples/count,
// cpu/nanoseconds, 100 Hz) of samples.
func buildProfile(samples ...sample) *profile.Profile {
	p := &profile.Profile{
		SampleType:    []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType:    &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:        10_000_000,
		TimeNanos:     1,
		DurationNanos: 20e9,
	}
	fns := map[string]*profile.Location{}
	for _, s := range samples {
		fn := s.fn
		if fn == "" {
			fn = "main.work"
		}
		loc := fns[fn]
		if loc == nil {
			f := &profile.Function{ID: uint64(len(p.Function) + 1), Name: fn, SystemName: fn}
			p.Function = append(p.Function, f)
			loc = &profile.Location{ID: uint64(len(p.Location) + 1), Line: []profile.Line{{Function: f}}}
			p.Location = append(p.Location, loc)
			fns[fn] = loc
		}
		smp := &profile.Sample{Location: []*profile.Location{loc}, Value: []int64{s.n, s.n * 10_000_000}}
		if len(s.labels) > 0 {
			smp.Label = map[string][]string{}
			for k, v := range s.labels {
				smp.Label[k] = []string{v}
			}
		}
		p.Sample = append(p.Sample, smp)
	}
	return p
}

// readK6 reads k6 json results, failing the test on an error.
func readK6(t testing.TB, json string) *k6results.Results {
	t.Helper()
	k, err := k6results.Read(strings.NewReader(json))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// newReport is report.New with k6 results k, failing the test on an error.
func newReport(t testing.TB, src report.Source, k *k6results.Results) *report.Report {
	t.Helper()
	r, err := report.New(t.Context(), src, report.Options{K6: k})
	if err != nil {
		t.Fatal(err)
	}
	return r
}
