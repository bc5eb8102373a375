package trace

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/k6labels/k6labels/cmd/k6labels/report"
	"github.com/k6labels/k6labels/cmd/k6labels/stats"
)

// MinRequests is the fewest requests per side for which a row's change is
// judged; below it the row is inconclusive.
const MinRequests = 30

// Verdict is what a diff row says of --fail-above.
type Verdict string

// The verdicts of a diff row.
const (
	Regression   Verdict = "regression"   // grew by more than the threshold, beyond noise
	OK           Verdict = "ok"           // cannot have grown by more than the threshold
	Inconclusive Verdict = "inconclusive" // the data cannot tell
	NoGate       Verdict = ""             // no threshold given
)

// Change is one metric's change in one row: means and medians per request
// (ns), the ratio of means after/before − 1 with its interval.
type Change struct {
	BeforeMean, AfterMean     float64
	BeforeMedian, AfterMedian float64
	Change, Low, High         float64 // after/before − 1 and its interval
}

// DiffRow is one row present in both traces.
type DiffRow struct {
	Grouping      report.Grouping
	Key           string
	Before, After int // requests
	CPU, Wall     Change
	Verdict       Verdict
	Why           string      // for inconclusive rows
	GrownStacks   []StackTime // blocking stacks whose time per request grew most (PerRequest: the growth)
}

// Comparison is two traces compared row by row, as Diff returns it.
type Comparison struct {
	Rows      []DiffRow
	Threshold float64 // the --fail-above fraction, or < 0
	Alpha     float64
	Z         float64 // the normal quantile of the intervals
	Only      []string
}

// Diff compares the rows of before and after matched by key (k6_name URLs by
// path when byPath). The interval of each row's change in mean CPU and wall
// per request is a normal one for the log of the ratio of means (the delta
// method; requests are independent samples, and MinRequests of them make
// each mean near normal), at a confidence that keeps the family-wise false
// alarm rate over all rows at alpha (Bonferroni). With threshold ≥ 0 each
// row gets a verdict on CPU: regression if the interval's low end is above
// it, ok if its high end is below, else inconclusive.
func Diff(before, after *Trace, by []report.Grouping, byPath bool, threshold, alpha float64, top int) *Comparison {
	key := func(r *Row) string {
		parts := slices.Clone(r.Values)
		if byPath {
			for i, name := range r.Grouping {
				if name == report.LabelName {
					parts[i] = report.URLPath(parts[i])
				}
			}
		}
		return r.Grouping.String() + "\x00" + strings.Join(parts, " × ")
	}
	d := &Comparison{Threshold: threshold, Alpha: alpha}
	b := map[string]*Row{}
	for _, r := range before.Rows(by, 1<<30) {
		b[key(r)] = r
	}
	type pair struct{ b, a *Row }
	var pairs []pair
	seen := map[string]bool{}
	for _, r := range after.Rows(by, 1<<30) {
		k := key(r)
		seen[k] = true
		if br := b[k]; br != nil {
			pairs = append(pairs, pair{br, r})
		} else {
			d.Only = append(d.Only, "new run only: "+r.Grouping.String()+"="+r.Key())
		}
	}
	for k, r := range b {
		if !seen[k] {
			d.Only = append(d.Only, "base run only: "+r.Grouping.String()+"="+r.Key())
		}
	}
	slices.Sort(d.Only)
	d.Z = stats.NormalQuantile(1 - alpha/(2*float64(max(len(pairs), 1))))
	for _, p := range pairs {
		_, name, _ := strings.Cut(key(p.a), "\x00")
		row := DiffRow{Grouping: p.a.Grouping, Key: name, Before: p.b.Requests, After: p.a.Requests}
		row.CPU = change(p.b.Samples(before, CPU), p.a.Samples(after, CPU), d.Z)
		row.Wall = change(p.b.Samples(before, Wall), p.a.Samples(after, Wall), d.Z)
		row.GrownStacks = grown(p.b, p.a, top)
		if threshold >= 0 {
			switch {
			case row.Before < MinRequests || row.After < MinRequests:
				row.Verdict, row.Why = Inconclusive, fmt.Sprintf("fewer than %d requests on a side", MinRequests)
			case math.IsNaN(row.CPU.Low) || math.IsNaN(row.CPU.High):
				row.Verdict, row.Why = Inconclusive, "no CPU on a side"
			case row.CPU.Low > threshold:
				row.Verdict = Regression
			case row.CPU.High < threshold:
				row.Verdict = OK
			default:
				row.Verdict, row.Why = Inconclusive, fmt.Sprintf("the interval %s to %s holds the threshold", FormatChange(row.CPU.Low), FormatChange(row.CPU.High))
			}
		}
		d.Rows = append(d.Rows, row)
	}
	return d
}

// change returns the change of the mean of after over before, with the
// delta-method interval of the log ratio at quantile z.
func change(before, after []float64, z float64) Change {
	mb, vb := stats.MeanVariance(before)
	ma, va := stats.MeanVariance(after)
	c := Change{BeforeMean: mb, AfterMean: ma, BeforeMedian: stats.MedianOf(before), AfterMedian: stats.MedianOf(after)}
	if mb <= 0 || ma <= 0 || len(before) < 2 || len(after) < 2 {
		c.Change, c.Low, c.High = math.NaN(), math.NaN(), math.NaN()
		return c
	}
	lr := math.Log(ma / mb)
	se := math.Sqrt(va/(float64(len(after))*ma*ma) + vb/(float64(len(before))*mb*mb))
	c.Change = ma/mb - 1
	c.Low, c.High = math.Exp(lr-z*se)-1, math.Exp(lr+z*se)-1
	return c
}

// grown returns the blocking stacks whose blocked time per request grew
// most from b to a, largest growth first; PerRequest is the growth.
func grown(b, a *Row, top int) []StackTime {
	k := func(s Stack) string { return s.Reason.String() + "\x00" + strings.Join(s.Frames, "\x00") }
	before := map[string]float64{}
	for _, s := range b.Top {
		before[k(s.Stack)] = s.PerRequest
	}
	var out []StackTime
	for _, s := range a.Top {
		if g := s.PerRequest - before[k(s.Stack)]; g > 0 {
			s.PerRequest = g
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(x, y StackTime) int { return cmp.Compare(y.PerRequest, x.PerRequest) })
	return out[:min(len(out), top)]
}

// FormatChange formats a change x (after/before − 1) as a signed percentage
// with one decimal, "+12.3%", or "n/a" for NaN, as verdicts quote intervals.
func FormatChange(x float64) string {
	if math.IsNaN(x) {
		return "n/a"
	}
	return fmt.Sprintf("%+.1f%%", 100*x)
}

// Regressions returns the rows judged regressions.
func (d *Comparison) Regressions() []DiffRow {
	var out []DiffRow
	for _, r := range d.Rows {
		if r.Verdict == Regression {
			out = append(out, r)
		}
	}
	return out
}
