package report

import (
	"fmt"
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
// same grouping and values added, profiles merged where every run has one.
func mergeRuns(runs []*Report) *Report {
	if len(runs) == 1 {
		return runs[0]
	}
	m := &Report{Source: fmt.Sprintf("%d runs (%s, …)", len(runs), runs[0].Source), RunID: runs[0].RunID,
		HasRequests: true, Confidence: runs[0].Confidence, Start: runs[0].Start, End: runs[0].End, runs: runs}
	idx := map[string]int{}
	var profs []*profile.Profile
	rowProfs := map[int][]*profile.Profile{}
	for _, r := range runs {
		m.Total, m.Unlabelled, m.K6 = m.Total.add(r.Total), m.Unlabelled.add(r.Unlabelled), m.K6.add(r.K6)
		m.Requests += r.Requests
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
			mr.Count = mr.add(row.Count)
			mr.Requests += row.Requests
			mr.InOverflow = mr.InOverflow || row.InOverflow
			for f, c := range row.self {
				mr.self[f] = mr.self[f].add(c)
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
// with key in each run that has requests on it.
func (d *Diff) runValues(runs []*Report, g Grouping, key string) []float64 {
	var out []float64
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
		}
	}
	return out
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
		x := d.runValues(before, dr.By, dr.Key)
		y := d.runValues(after, dr.By, dr.Key)
		if len(x) < minRankRuns || len(y) < minRankRuns {
			dr.Verdict, dr.P, dr.Beyond = FewSamples, 1, false
			continue
		}
		shift := math.Log(dr.Speed)
		for j := range y {
			y[j] -= shift
		}
		c := cand{i: i, x: x, y: y, p: mannWhitney(x, y), l: mean(y) - mean(x)}
		c.spread = math.Sqrt((sumSquares(x) + sumSquares(y)) / float64(len(x)+len(y)-2))
		cs = append(cs, c)
	}
	d.Tested = len(cs)
	ps := make([]float64, len(cs))
	for j, c := range cs {
		ps[j] = c.p
	}
	z := normalQuantile(0.975)
	level := d.Alpha / float64(max(1, len(cs)))
	for j, rej := range holm(ps, d.Alpha) {
		c := cs[j]
		dr := &d.Rows[c.i]
		n1, n2 := float64(len(c.x)), float64(len(c.y))
		se := c.spread * math.Sqrt(1/n1+1/n2)
		dr.P, dr.Beyond = c.p, rej
		dr.Low, dr.High = math.Exp(c.l-z*se)-1, math.Exp(c.l+z*se)-1
		// The rank test's efficiency against the t test is 3/π for normal
		// data: its detectable change is that of a z test with π/3 times
		// the variance. It can reject only if its smallest p-value can.
		dr.Detectable = math.Exp(detectable(se*se*math.Pi/3, level)) - 1
		if minRankP(len(c.x), len(c.y)) > level {
			dr.Detectable = math.Inf(1)
		}
		dr.RunsNeeded = runsNeeded(c.spread, level, d.Detect)
		dr.Longer = math.NaN()
		dr.Verdict = verdict(rej, c.l > 0, dr.Detectable, d.Detect)
	}
	for i := range d.Rows {
		d.Rows[i].Grew = nil
	}
	d.grew(d.grewN)
}

// runsNeeded returns the runs per side at which the rank test sees a
// change of detect with 80% power at level, given the runs' spread (sd of
// log CPU per request), and its smallest p-value reaches level.
func runsNeeded(spread, level, detect float64) int {
	n := 2
	for minRankP(n, n) > level {
		n++
	}
	if spread > 0 {
		k := detectable(1, level) / math.Log1p(detect)
		n = max(n, int(math.Ceil(2*math.Pi/3*spread*spread*k*k)))
	}
	return n
}

// minRankP is the smallest two-sided p-value of the exact Mann–Whitney
// test with n1 and n2 runs: 2 / C(n1+n2, n1).
func minRankP(n1, n2 int) float64 {
	c := 1.0
	for k := 1; k <= n1; k++ {
		c = c * float64(n2+k) / float64(k)
	}
	return min(1, 2/c)
}

// mannWhitney returns the two-sided p-value of the Mann–Whitney U test of
// x against y: exact (the distribution of U counted) without ties and with
// up to 50 values per side, else the normal approximation with the tie
// correction.
func mannWhitney(x, y []float64) float64 {
	n1, n2 := len(x), len(y)
	all := append(slices.Clone(x), y...)
	order := make([]int, len(all))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		switch {
		case all[a] < all[b]:
			return -1
		case all[a] > all[b]:
			return 1
		}
		return 0
	})
	ranks := make([]float64, len(all))
	ties := false
	var tieTerm float64
	for i := 0; i < len(order); {
		j := i
		for j+1 < len(order) && all[order[j+1]] == all[order[i]] {
			j++
		}
		if j > i {
			ties = true
			t := float64(j - i + 1)
			tieTerm += t*t*t - t
		}
		for k := i; k <= j; k++ {
			ranks[order[k]] = float64(i+j)/2 + 1
		}
		i = j + 1
	}
	var r1 float64
	for i := range n1 {
		r1 += ranks[i]
	}
	u := r1 - float64(n1*(n1+1))/2
	if !ties && n1 <= 50 && n2 <= 50 {
		// counts[k] = the number of arrangements with U = k.
		counts := uDistribution(n1, n2)
		var total, le, ge float64
		for k, c := range counts {
			total += c
			if float64(k) <= u {
				le += c
			}
			if float64(k) >= u {
				ge += c
			}
		}
		return min(1, 2*min(le, ge)/total)
	}
	nf1, nf2 := float64(n1), float64(n2)
	n := nf1 + nf2
	mu := nf1 * nf2 / 2
	v := nf1 * nf2 / 12 * ((n + 1) - tieTerm/(n*(n-1)))
	if v <= 0 {
		return 1
	}
	zz := (math.Abs(u-mu) - 0.5) / math.Sqrt(v)
	return min(1, normalTwoSided(max(zz, 0)))
}

// uDistribution returns the number of arrangements of n1 and n2 values
// with each U statistic 0 … n1·n2, by the recurrence
// f(n1, n2, u) = f(n1−1, n2, u−n2) + f(n1, n2−1, u).
func uDistribution(n1, n2 int) []float64 {
	// f[b][u] for the current a, b = 0..n2.
	f := make([][]float64, n2+1)
	for b := range f {
		f[b] = make([]float64, n1*n2+1)
		f[b][0] = 1 // a = 0: one arrangement, U = 0
	}
	for a := 1; a <= n1; a++ {
		g := make([][]float64, n2+1)
		for b := 0; b <= n2; b++ {
			g[b] = make([]float64, n1*n2+1)
			for u := 0; u <= a*b; u++ {
				// The largest value is from x (it beats all b of y) or from y.
				if u-b >= 0 {
					g[b][u] += f[b][u-b]
				}
				if b > 0 {
					g[b][u] += g[b-1][u]
				}
			}
		}
		f = g
	}
	return f[n2]
}

func mean(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// sumSquares returns Σ (x − mean x)².
func sumSquares(x []float64) float64 {
	m := mean(x)
	var s float64
	for _, v := range x {
		s += (v - m) * (v - m)
	}
	return s
}
