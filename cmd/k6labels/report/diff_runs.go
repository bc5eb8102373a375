package report

import (
	"fmt"
	"github.com/k6labels/k6labels/cmd/k6labels/stats"
	"math"
	"slices"
	"strings"

	"github.com/google/pprof/profile"
)

// minRankRuns is the fewest runs per side the rank test is used with: with
// fewer, the pooled test of [NewDiff] decides.
const minRankRuns = 2

// NewDiffRuns compares several runs per side. Rows are first compared as
// one pooled run per side ([NewDiff] on the runs' sums); with 2 runs or
// more on both sides, each tested row is then decided by a Mann–Whitney
// rank test of the runs' CPU per request (after runs divided by the row's
// machine-speed factor), Holm-corrected, as benchstat does: the runs'
// own spread replaces the between-run model. A row whose test cannot reach
// Alpha / rows with so few runs, or could not see Detect, is inconclusive.
func NewDiffRuns(before, after []*Report, opts DiffOptions) (*Diff, error) {
	if len(before) == 0 || len(after) == 0 {
		return nil, fmt.Errorf("%w: a diff needs at least one run per side", ErrNoData)
	}
	b, a := mergeRuns(before), mergeRuns(after)
	d, err := NewDiff(b, a, opts)
	if err != nil {
		return nil, err
	}
	d.Runs = [2]int{len(before), len(after)}
	if len(before) >= minRankRuns && len(after) >= minRankRuns && d.PerRequest {
		d.rankTest(before, after)
	}
	return d, nil
}

// mergeRuns returns the sum of several runs of one side: rows with the
// same grouping and values added, profiles merged where every run has one,
// each run's notes once.
func mergeRuns(runs []*Report) *Report {
	if len(runs) == 1 {
		return runs[0]
	}
	m := &Report{Source: fmt.Sprintf("%d runs (%s, …)", len(runs), runs[0].Source), RunID: runs[0].RunID,
		HasRequests: true, Confidence: runs[0].Confidence, Start: runs[0].Start, End: runs[0].End, runs: runs}
	idx := map[string]int{}
	var profs []*profile.Profile
	rowProfs := map[int][]*profile.Profile{}
	for i, r := range runs {
		m.Total, m.Unlabelled, m.K6 = m.Total.Plus(r.Total), m.Unlabelled.Plus(r.Unlabelled), m.K6.Plus(r.K6)
		m.Connections, m.OtherRuns = m.Connections.Plus(r.Connections), m.OtherRuns.Plus(r.OtherRuns)
		m.Requests += r.Requests
		m.Outside += r.Outside
		if i == 0 || r.K6Span.Start.Before(m.K6Span.Start) {
			m.K6Span.Start = r.K6Span.Start
		}
		if r.K6Span.End.After(m.K6Span.End) {
			m.K6Span.End = r.K6Span.End
		}
		for _, n := range r.Notes {
			if !slices.Contains(m.Notes, n) {
				m.Notes = append(m.Notes, n)
			}
		}
		m.HasRequests = m.HasRequests && r.HasRequests
		if r.RunID != m.RunID {
			m.RunID = ""
		}
		if r.Start.Before(m.Start) {
			m.Start = r.Start
		}
		if r.End.After(m.End) {
			m.End = r.End
		}
		if r.prof != nil {
			profs = append(profs, r.prof)
		}
		for _, row := range r.Rows {
			k := strings.Join(row.By, ",") + "\x00" + strings.Join(row.Values, "\x00")
			j, ok := idx[k]
			if !ok {
				j = len(m.Rows)
				idx[k] = j
				m.Rows = append(m.Rows, Row{By: row.By, Values: row.Values, self: map[string]Count{}})
			}
			mr := &m.Rows[j]
			mr.Count = mr.Plus(row.Count)
			mr.Requests += row.Requests
			mr.InOverflow = mr.InOverflow || row.InOverflow
			for f, c := range row.self {
				mr.self[f] = mr.self[f].Plus(c)
			}
			if row.prof != nil {
				rowProfs[j] = append(rowProfs[j], row.prof)
			}
		}
	}
	if len(profs) == len(runs) {
		if p, err := profile.Merge(profs); err == nil {
			m.prof = p
		}
	}
	for j, ps := range rowProfs {
		if len(ps) == len(runs) {
			if p, err := profile.Merge(ps); err == nil {
				m.Rows[j].prof = p
			}
		}
	}
	return m
}

// runValues returns the log CPU per request (Haldane's +½) of the row
// with key in each run that has requests on it, and the sum of their
// Poisson variances, 1/(k+½) each.
func (d *Diff) runValues(runs []*Report, g Grouping, key string) ([]float64, float64) {
	var out []float64
	var pv float64
	for _, r := range runs {
		var k, n int64
		for _, row := range r.RowsBy(g) {
			if d.rowKey(&row) == key {
				k += row.Samples
				n += row.Requests
			}
		}
		if n > 0 {
			out = append(out, math.Log((float64(k)+0.5)/float64(n)))
			pv += 1 / (float64(k) + 0.5)
		}
	}
	return out, pv
}

// rankTest decides each tested row by a Mann–Whitney test over the runs.
func (d *Diff) rankTest(before, after []*Report) {
	d.RankTest = true
	type cand struct {
		i      int
		x, y   []float64
		p, l   float64
		spread float64
	}
	var cs []cand
	for i := range d.Rows {
		dr := &d.Rows[i]
		switch dr.Verdict {
		case Worse, Better, Same, Inconclusive:
		default:
			continue
		}
		x, px := d.runValues(before, dr.By, dr.Key)
		y, py := d.runValues(after, dr.By, dr.Key)
		if len(x) < minRankRuns || len(y) < minRankRuns {
			dr.Verdict, dr.P, dr.Beyond = FewSamples, 1, false
			continue
		}
		shift := math.Log(dr.Speed)
		for j := range y {
			y[j] -= shift
		}
		c := cand{i: i, x: x, y: y, p: stats.MannWhitney(x, y), l: stats.Mean(y) - stats.Mean(x)}
		// Runs that happen to agree still hold sampling noise: the spread
		// is at least the runs' mean Poisson deviation.
		c.spread = math.Sqrt(max((stats.SumSquares(x)+stats.SumSquares(y))/float64(len(x)+len(y)-2), (px+py)/float64(len(x)+len(y))))
		cs = append(cs, c)
	}
	d.Tested = len(cs)
	ps := make([]float64, len(cs))
	for j, c := range cs {
		ps[j] = c.p
	}
	z := stats.NormalQuantile(0.975)
	level := d.Alpha / float64(max(1, len(cs)))
	for j, rej := range stats.Holm(ps, d.Alpha) {
		c := cs[j]
		dr := &d.Rows[c.i]
		n1, n2 := float64(len(c.x)), float64(len(c.y))
		se := c.spread * math.Sqrt(1/n1+1/n2)
		dr.P, dr.Beyond = c.p, rej
		dr.Low, dr.High = math.Exp(c.l-z*se)-1, math.Exp(c.l+z*se)-1
		// The rank test's efficiency against the t test is 3/π for normal
		// data: its detectable change is that of a z test with π/3 times
		// the variance. It can reject only if its smallest p-value can.
		dr.Detectable = math.Exp(stats.Detectable(se*se*math.Pi/3, level)) - 1
		if stats.MinRankP(len(c.x), len(c.y)) > level {
			dr.Detectable = math.Inf(1)
		}
		dr.RunsNeeded = stats.RunsNeeded(c.spread, level, d.Detect)
		dr.Longer = math.NaN()
		dr.Verdict = verdict(rej, c.l > 0, dr.Detectable, d.Detect)
	}
	for i := range d.Rows {
		d.Rows[i].Grew = nil
	}
	d.grew(d.grewN)
}
