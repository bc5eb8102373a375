package main

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/k6labels/k6labels/cmd/k6labels/report"
)

// TestDiffRates is the harness of the diff's error rates on real runs
// (make diff-rates): K6LABELS_DIFF_PAIRS rounds of three real in-process
// runs of the demo (base, the same service again, /car +33%), each diffed
// as --fail-above 10% would, and a table of what the verdicts were. It is
// skipped unless the variable is set: it takes minutes.
func TestDiffRates(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("K6LABELS_DIFF_PAIRS"))
	if n <= 0 {
		t.Skip("set K6LABELS_DIFF_PAIRS (make diff-rates) to measure the diff's error rates on real runs")
	}
	var noChange, costlier struct{ flagged, inconclusive, uniform, carWorse, carUnsure, other int }
	for i := range n {
		base := pairRun(t, newService(), fmt.Sprintf("base-%d", i))
		same := pairRun(t, newService(), fmt.Sprintf("same-%d", i))
		car := pairRun(t, newCostlierService(costlierUnits), fmt.Sprintf("car-%d", i))
		for _, c := range []struct {
			after *report.Report
			tally *struct{ flagged, inconclusive, uniform, carWorse, carUnsure, other int }
		}{{same, &noChange}, {car, &costlier}} {
			d, err := report.NewDiff(base, c.after, report.DiffOptions{Detect: 0.10})
			if err != nil {
				t.Fatal(err)
			}
			if len(flagged(d)) > 0 {
				c.tally.flagged++
			}
			if len(d.Inconclusive()) > 0 || d.UniformAbove(0.10) {
				c.tally.inconclusive++
			}
			if d.Uniform != nil {
				c.tally.uniform++
			}
			other := false
			for _, dr := range d.Rows {
				if !slices.Equal(dr.By, report.ByName) {
					continue
				}
				switch {
				case dr.Key == costlierRoute && dr.Verdict == report.Worse:
					c.tally.carWorse++
				case dr.Key == costlierRoute && dr.Verdict == report.Inconclusive:
					c.tally.carUnsure++
				case dr.Key != costlierRoute && (dr.Verdict == report.Worse || dr.Verdict == report.Better):
					other = true
				}
			}
			if other {
				c.tally.other++
			}
			t.Logf("round %d, %s: %s", i+1, c.after.RunID, verdict(d))
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "| %d real pairs of %d requests per run | any row worse/better | gate (--fail-above 10%%) inconclusive | common change found | /car worse | /car inconclusive | another route flagged |\n", n, diffRequests)
	b.WriteString("| --- | --- | --- | --- | --- | --- | --- |\n")
	for _, r := range []struct {
		name string
		t    struct{ flagged, inconclusive, uniform, carWorse, carUnsure, other int }
	}{{"no change", noChange}, {"/car +33%", costlier}} {
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d | %d |\n", r.name, r.t.flagged, r.t.inconclusive, r.t.uniform, r.t.carWorse, r.t.carUnsure, r.t.other)
	}
	t.Logf("\n%s", b.String())
}
