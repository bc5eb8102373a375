package report_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/k6labels/k6labels/cmd/k6labels/k6results"
	"github.com/k6labels/k6labels/cmd/k6labels/pprofsource"
	"github.com/k6labels/k6labels/cmd/k6labels/report"
)

// BenchmarkManyNames makes the report of 10^5 or 10^6 samples over n
// k6_name values in 2 scenarios, with k6 results for every name, all four
// groupings: one pass over the samples and one over the k6 keys per
// grouping, so the time grows with the samples, not rows × samples.
//
//	go test -run '^$' -bench ManyNames -count 6 ./report
func BenchmarkManyNames(b *testing.B) {
	for _, c := range []struct{ n, samples int }{{1_000, 100_000}, {100_000, 1_000_000}} {
		n, samples := c.n, c.samples
		b.Run(fmt.Sprintf("names=%d/samples=%d", n, samples), func(b *testing.B) {
			var ss []sample
			k := &k6results.Results{Format: "json", Requests: map[k6results.Key]int64{},
				Start: time.Unix(0, 0), End: time.Unix(20, 0)}
			for i := range samples {
				scenario := []string{"a", "b"}[i%2]
				name := fmt.Sprintf("/users/%d", i%n)
				ss = append(ss, sample{labels: map[string]string{"k6_test_run_id": "r1", "k6_scenario": scenario, "k6_name": name},
					n: 1, fn: fmt.Sprintf("main.f%d", i%50)})
				if i < 2*n {
					k.Requests[k6results.Key{Scenario: scenario, Name: name}] += 10
					k.Total += 10
				}
			}
			src, err := pprofsource.New("bench.pb.gz", buildProfile(ss...))
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				r, err := report.New(b.Context(), src, report.Options{K6: k})
				if err != nil {
					b.Fatal(err)
				}
				if got := len(r.RowsBy(report.ByName)); got != n {
					b.Fatalf("%d name rows, want %d", got, n)
				}
			}
		})
	}
}

// BenchmarkDiffManyNames compares two reports of n k6_name rows (2
// scenarios, scenario × name rows too). Each row's machine-speed factor
// leaves out the rows it overlaps from one sorted set of the rows' changes,
// so the time grows as rows · log rows, not rows².
//
//	go test -run '^$' -bench DiffManyNames -count 6 ./report
func BenchmarkDiffManyNames(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("names=%d", n), func(b *testing.B) {
			side := func(f int64) *report.Report {
				var ss []sample
				k := &k6results.Results{Format: "json", Requests: map[k6results.Key]int64{},
					Start: time.Unix(0, 0), End: time.Unix(20, 0)}
				for i := range n {
					scenario := []string{"a", "b"}[i%2]
					name := fmt.Sprintf("/users/%d", i)
					ss = append(ss, sample{labels: map[string]string{"k6_test_run_id": "r1", "k6_scenario": scenario, "k6_name": name},
						n: 20 + f*int64(i%3)})
					k.Requests[k6results.Key{Scenario: scenario, Name: name}] += 10
					k.Total += 10
				}
				src, err := pprofsource.New("bench.pb.gz", buildProfile(ss...))
				if err != nil {
					b.Fatal(err)
				}
				r, err := report.New(b.Context(), src, report.Options{K6: k, By: []report.Grouping{report.ByScenario, report.ByName, report.ByScenarioName}})
				if err != nil {
					b.Fatal(err)
				}
				return r
			}
			before, after := side(1), side(2)
			b.ResetTimer()
			for b.Loop() {
				if _, err := report.NewDiff(before, after, report.DiffOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
