package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// DiffOptions tune [NewDiff].
type DiffOptions struct {
	// Alpha is the family-wise false alarm rate of the beyond-noise test
	// over all compared rows; 0 means 0.05.
	Alpha float64
	// Normalize is how the machine-speed factor is estimated: "median"
	// (the default, ""): the precision-weighted mean change of the k6_name
	// rows within 3 standard errors of their median change; "total",
	// "none", or "row:KEY" for a control row.
	Normalize string
	// MatchName matches k6_name rows by the full name; by default by the
	// URL path, so that host:port may differ between runs.
	MatchName bool
	Grew      int // functions listed per costlier row; 0 = 5
}

// minMedianRows is the fewest k6_name rows the median normalization needs:
// with fewer, one costlier route moves the median (simulated: with 3 routes
// a +30% change is found in under 90% of the pairs it finds without).
const minMedianRows = 5

// minSamples is the fewest samples (both runs together) a row needs to be
// tested, and in each run to help estimate the machine speed.
const minSamples = 10

// Diff compares the rows of two reports.
type Diff struct {
	Before, After *Report
	// PerRequest tells that rows compare CPU per request; without k6
	// results on both sides they compare shares of k6-labelled CPU, which
	// depend on the request mix.
	PerRequest bool
	MatchName  bool
	// Normalize is the method used and Speed the machine-speed factor it
	// found (after / before for the same work); changes are divided by it.
	Normalize string
	Speed     float64
	Alpha     float64
	Tested    int // rows in the test family
	Rows      []DiffRow
	Notes     []string
}

// A DiffRow is one row of both reports, matched by its key.
type DiffRow struct {
	By            Grouping
	Key           string
	Before, After *Row // nil when the row is in one report only
	// BeforeValue and AfterValue are the compared measure: CPU per
	// request in ms, or the share of k6-labelled CPU.
	BeforeValue, AfterValue float64
	// Raw and Normalized are the change, after/before − 1: +Inf for a row
	// that burned no CPU before and some after, NaN if not comparable.
	Raw, Normalized float64
	Low, High       float64 // 95% interval of Normalized (not adjusted for the family)
	P               float64 // two-sided p-value of "no change" (1 if untested)
	Beyond          bool    // rejected by Holm's procedure at Alpha
	Verdict         string  // worse, better, same, few samples, in _overflow?, reference, only before, only after
	Grew            []FuncChange
}

// FuncChange is a function's self CPU per request (or share) in two runs.
type FuncChange struct {
	Name          string
	Before, After float64 // ms per request, or share of k6 CPU; After normalized
}

// The verdicts of a DiffRow.
const (
	Worse      = "worse"
	Better     = "better"
	Same       = "same"
	FewSamples = "few samples"
	InOverflow = "in _overflow?" // a side's row is InOverflow: not tested
	Reference  = "reference"
	OnlyBefore = "only before"
	OnlyAfter  = "only after"
)

// NewDiff compares before and after row by row. Each row's change is
// tested against sampling noise: its sample counts are Poisson with the
// requests as exposure; the log rate ratio, divided by the machine-speed
// factor, is compared with its standard error (Haldane's +0.5 per count),
// and Holm's procedure holds the family-wise false alarm rate at Alpha.
func NewDiff(before, after *Report, opts DiffOptions) (*Diff, error) {
	if opts.Alpha == 0 {
		opts.Alpha = 0.05
	}
	if opts.Grew == 0 {
		opts.Grew = 5
	}
	d := &Diff{Before: before, After: after, PerRequest: before.HasRequests && after.HasRequests,
		MatchName: opts.MatchName, Alpha: opts.Alpha, Speed: 1, Normalize: "none"}
	if !d.PerRequest {
		d.Notes = append(d.Notes, "no k6 results for both runs: rows compare shares of the k6-labelled CPU, which move when the request mix moves, not only when a request gets costlier; pass --base-k6 and --k6 for CPU per request")
	}
	for _, g := range AllGroupings {
		if slices.Equal(g, ByRun) {
			continue
		}
		d.match(g)
	}
	if len(d.Rows) == 0 {
		return nil, fmt.Errorf("%w: the two reports have no scenario or name rows to compare", ErrNoData)
	}
	weights, extra, err := d.speed(opts.Normalize)
	if err != nil {
		return nil, err
	}
	d.test(weights, extra)
	d.grew(opts.Grew)
	return d, nil
}

// rowKey returns the key that matches a row across runs.
func (d *Diff) rowKey(row *Row) string {
	parts := slices.Clone(row.Values)
	for i, label := range row.By {
		if label == LabelName && !d.MatchName {
			parts[i] = URLPath(parts[i])
		}
	}
	return strings.Join(parts, " ")
}

// URLPath returns the path of a k6_name that is a URL ("http://h:1/car" →
// "/car"), and other names as they are.
func URLPath(name string) string {
	_, rest, ok := strings.Cut(name, "://")
	if !ok {
		return name
	}
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		return rest[i:]
	}
	return "/"
}

// match adds the rows of grouping g, merging rows with the same key.
func (d *Diff) match(g Grouping) {
	merged := func(r *Report) (map[string]*Row, []string) {
		m := map[string]*Row{}
		var keys []string
		for _, row := range r.RowsBy(g) {
			k := d.rowKey(&row)
			if old, ok := m[k]; ok {
				old.Count = old.add(row.Count)
				old.Requests += row.Requests
				old.InOverflow = old.InOverflow || row.InOverflow
				self := map[string]Count{}
				for f, c := range old.self {
					self[f] = c
				}
				for f, c := range row.self {
					self[f] = self[f].add(c)
				}
				old.self = self
				old.prof = nil
				continue
			}
			rc := row
			m[k] = &rc
			keys = append(keys, k)
		}
		return m, keys
	}
	b, bkeys := merged(d.Before)
	a, akeys := merged(d.After)
	for _, k := range akeys {
		if !slices.Contains(bkeys, k) {
			bkeys = append(bkeys, k)
		}
	}
	for _, k := range bkeys {
		d.Rows = append(d.Rows, DiffRow{By: g, Key: k, Before: b[k], After: a[k], Raw: math.NaN(), Normalized: math.NaN(),
			Low: math.NaN(), High: math.NaN(), P: 1})
	}
}

// exposure returns what a row's samples are divided by: its requests, or
// the k6-labelled samples of its run for shares.
func (d *Diff) exposure(r *Report, row *Row) float64 {
	if d.PerRequest {
		return float64(row.Requests)
	}
	return float64(r.K6.Samples)
}

// measureOf returns cpu of row (a row of r) in the compared measure: ms
// per request of the row, or the share of r's k6-labelled CPU.
func (d *Diff) measureOf(r *Report, row *Row, cpu time.Duration) float64 {
	if d.PerRequest {
		return ratio(float64(cpu), float64(row.Requests)) / 1e6
	}
	return ratio(float64(cpu), float64(r.K6.CPU))
}

// comparable tells whether both sides of dr can be compared: neither is
// InOverflow, and both have exposure.
func (d *Diff) comparable(dr *DiffRow) bool {
	return dr.Before != nil && dr.After != nil && !dr.Before.InOverflow && !dr.After.InOverflow &&
		d.exposure(d.Before, dr.Before) > 0 && d.exposure(d.After, dr.After) > 0
}

// logRatio returns the log of after/before rate of dr and its variance.
func (d *Diff) logRatio(dr *DiffRow) (float64, float64) {
	l1, v1 := logRate(dr.Before.Samples, d.exposure(d.Before, dr.Before))
	l2, v2 := logRate(dr.After.Samples, d.exposure(d.After, dr.After))
	return l2 - l1, v1 + v2
}

// speed sets the machine-speed factor and returns the weights of the rows
// it was made of (index into d.Rows) and the variance of its log from
// samples outside the rows, for the test.
func (d *Diff) speed(method string) (map[int]float64, float64, error) {
	if !d.PerRequest {
		if method != "" && method != "none" {
			d.Notes = append(d.Notes, "shares need no machine-speed normalization: --normalize ignored")
		}
		return nil, 0, nil
	}
	ref := d.reference()
	switch {
	case method == "" || method == "median":
		var idx []int
		var logs []float64
		for _, i := range ref {
			dr := &d.Rows[i]
			if d.comparable(dr) && dr.Before.Samples >= minSamples && dr.After.Samples >= minSamples {
				l, _ := d.logRatio(dr)
				idx = append(idx, i)
				logs = append(logs, l)
			}
		}
		if len(idx) < minMedianRows {
			d.Notes = append(d.Notes, fmt.Sprintf("machine speed not normalized: --normalize median needs %d k6_name rows with %d samples or more in both runs, there are %d, too few to tell a uniform slowdown from one costlier route; --normalize total or row:KEY corrects for machine speed", minMedianRows, minSamples, len(idx)))
			d.Normalize = "none (too few rows for median)"
			return nil, 0, nil
		}
		// The median finds the rows that did not change; the factor is
		// the precision-weighted mean of the median row(s) and the rows
		// within 3 of their own standard errors of it: less noisy than
		// the median row alone, and a precise row that changed stays out.
		w := median(logs)
		var m float64
		for j := range idx {
			m += w[j] * logs[j]
		}
		var sumPrec float64
		prec := map[int]float64{}
		for j, i := range idx {
			_, v := d.logRatio(&d.Rows[i])
			if math.Abs(logs[j]-m) <= 3*math.Sqrt(v) || w[j] > 0 {
				prec[j] = 1 / v
				sumPrec += 1 / v
			}
		}
		weights := map[int]float64{}
		var s float64
		for j, pr := range prec {
			weights[idx[j]] = pr / sumPrec
			s += pr / sumPrec * logs[j]
		}
		d.Normalize, d.Speed = "median", math.Exp(s)
		return weights, 0, nil
	case method == "none":
		return nil, 0, nil
	case method == "total":
		l1, v1 := logRate(d.Before.K6.Samples, float64(d.Before.Requests))
		l2, v2 := logRate(d.After.K6.Samples, float64(d.After.Requests))
		d.Normalize, d.Speed = "total", math.Exp(l2-l1)
		return nil, v1 + v2, nil
	case strings.HasPrefix(method, "row:"):
		key := strings.TrimPrefix(method, "row:")
		for _, i := range ref {
			if dr := &d.Rows[i]; dr.Key == key && d.comparable(dr) {
				l, _ := d.logRatio(dr)
				d.Normalize, d.Speed = method, math.Exp(l)
				return map[int]float64{i: 1}, 0, nil
			}
		}
		var keys []string
		for _, i := range ref {
			keys = append(keys, d.Rows[i].Key)
		}
		return nil, 0, fmt.Errorf("--normalize %s: no row %q in both runs; the %s rows are %s", method, key, groupTitle(d.Rows[ref[0]].By), strings.Join(keys, ", "))
	}
	return nil, 0, fmt.Errorf("--normalize: unknown method %q: use median, total, none or row:KEY", method)
}

// reference returns the indexes of the rows the machine speed is estimated
// from: the k6_name rows, or else the finest grouping there is.
func (d *Diff) reference() []int {
	for _, g := range []Grouping{ByName, ByScenarioName, ByScenario} {
		var idx []int
		for i := range d.Rows {
			if slices.Equal(d.Rows[i].By, g) {
				idx = append(idx, i)
			}
		}
		if len(idx) > 0 {
			return idx
		}
	}
	return nil
}

// test computes every row's change and runs the beyond-noise test. The
// normalized log change of row i is l_i − Σ w_j l_j; its variance is
// Σ_j (δ_ij − w_j)² v_j over the reference rows (independent samples), plus
// v_i for a row outside them (it overlaps them, so this overstates it).
func (d *Diff) test(weights map[int]float64, extra float64) {
	logS, varS := math.Log(d.Speed), extra
	ref := map[int]bool{}
	for i, w := range weights {
		_, v := d.logRatio(&d.Rows[i])
		varS += w * w * v
		ref[i] = true
	}
	refGroup := d.reference()
	var tested []int
	var ps, ls []float64
	z := normalQuantile(0.975)
	for i := range d.Rows {
		dr := &d.Rows[i]
		switch {
		case dr.Before == nil:
			dr.Verdict = OnlyAfter
			continue
		case dr.After == nil:
			dr.Verdict = OnlyBefore
			continue
		}
		if dr.Before.InOverflow || dr.After.InOverflow {
			dr.Verdict, dr.BeforeValue, dr.AfterValue = InOverflow, math.NaN(), math.NaN()
			continue
		}
		dr.BeforeValue = d.measureOf(d.Before, dr.Before, dr.Before.CPU)
		dr.AfterValue = d.measureOf(d.After, dr.After, dr.After.CPU)
		if !d.comparable(dr) {
			dr.Verdict = FewSamples
			continue
		}
		switch {
		case dr.BeforeValue > 0:
			dr.Raw = dr.AfterValue/dr.BeforeValue - 1
			dr.Normalized = (1+dr.Raw)/d.Speed - 1
		case dr.AfterValue > 0:
			dr.Raw, dr.Normalized = math.Inf(1), math.Inf(1)
		}
		l, v := d.logRatio(dr)
		l -= logS
		if slices.Contains(refGroup, i) && len(ref) > 0 {
			// In the reference grouping: exact variance of the difference.
			v = 0
			for j, w := range weights {
				_, vj := d.logRatio(&d.Rows[j])
				delta := 0.0
				if j == i {
					delta = 1
				}
				v += (delta - w) * (delta - w) * vj
			}
			if !ref[i] {
				_, vi := d.logRatio(dr)
				v += vi
			}
		} else {
			v += varS
		}
		if dr.Before.Samples+dr.After.Samples < minSamples {
			dr.Verdict = FewSamples
			continue
		}
		if v < 1e-12 {
			dr.Verdict = Reference
			continue
		}
		sd := math.Sqrt(v)
		dr.Low, dr.High = math.Exp(l-z*sd)-1, math.Exp(l+z*sd)-1
		dr.P = normalTwoSided(l / sd)
		tested = append(tested, i)
		ps = append(ps, dr.P)
		ls = append(ls, l)
	}
	d.Tested = len(tested)
	defer d.uniformNote(refGroup)
	for j, rej := range holm(ps, d.Alpha) {
		dr := &d.Rows[tested[j]]
		dr.Beyond = rej
		switch {
		case rej && ls[j] > 0:
			dr.Verdict = Worse
		case rej:
			dr.Verdict = Better
		default:
			dr.Verdict = Same
		}
	}
}

// grew lists, for each row that got worse, the functions whose self CPU per
// request (normalized) grew most.
func (d *Diff) grew(n int) {
	for i := range d.Rows {
		dr := &d.Rows[i]
		if dr.Verdict != Worse {
			continue
		}
		names := map[string]bool{}
		for f := range dr.Before.self {
			names[f] = true
		}
		for f := range dr.After.self {
			names[f] = true
		}
		var out []FuncChange
		for f := range names {
			fc := FuncChange{Name: f, Before: d.measureOf(d.Before, dr.Before, dr.Before.self[f].CPU),
				After: d.measureOf(d.After, dr.After, dr.After.self[f].CPU) / d.Speed}
			if fc.After > fc.Before {
				out = append(out, fc)
			}
		}
		slices.SortFunc(out, func(a, b FuncChange) int {
			return cmp.Or(cmp.Compare(b.After-b.Before, a.After-a.Before), cmp.Compare(a.Name, b.Name))
		})
		dr.Grew = out[:min(n, len(out))]
	}
}

// Regressions returns the rows that got worse beyond noise by more than
// threshold (0.10 for 10%), normalized: what --fail-above gates on. A worse
// row without a finite change (no CPU before) is above any threshold.
func (d *Diff) Regressions(threshold float64) []DiffRow {
	var out []DiffRow
	for _, dr := range d.Rows {
		if dr.Verdict == Worse && !(dr.Normalized <= threshold) {
			out = append(out, dr)
		}
	}
	return out
}

// Worst returns the costlier row with the largest normalized change in the
// reference grouping, or the one with the most CPU there; nil if none.
func (d *Diff) Worst() *DiffRow {
	var best *DiffRow
	for _, i := range d.reference() {
		dr := &d.Rows[i]
		if dr.Verdict == Worse && (best == nil || dr.Normalized > best.Normalized) {
			best = dr
		}
	}
	if best != nil {
		return best
	}
	for _, i := range d.reference() {
		dr := &d.Rows[i]
		if dr.After != nil && (best == nil || dr.After.CPU > best.After.CPU) {
			best = dr
		}
	}
	return best
}

// Change formats a change as the output shows it: "+30.0%", "from 0" for
// +Inf (no CPU before), "" for NaN.
func Change(f float64) string {
	switch {
	case math.IsNaN(f):
		return ""
	case math.IsInf(f, 1):
		return "from 0"
	}
	return fmt.Sprintf("%+.1f%%", 100*f)
}

func (d *Diff) measure() string {
	if d.PerRequest {
		return "ms/request"
	}
	return "share of k6"
}

func (d *Diff) value(v float64) string {
	if d.PerRequest {
		return fmt.Sprintf("%.3f", v)
	}
	return pct(v)
}

// elapsed formats a run's length for the header.
func elapsed(r *Report) string {
	if !r.HasRequests {
		return ""
	}
	return fmt.Sprintf(", %d requests in %.1fs", r.Requests, r.End.Sub(r.Start).Round(100*time.Millisecond).Seconds())
}

// uniformNote adds a note when every tested row of the reference grouping
// got worse (or better): what a change of machine speed looks like.
func (d *Diff) uniformNote(ref []int) {
	n, worse, better := 0, 0, 0
	for _, i := range ref {
		switch d.Rows[i].Verdict {
		case Worse:
			worse++
		case Better:
			better++
		case Same:
		default:
			continue
		}
		n++
	}
	if n >= 2 && (worse == n || better == n) {
		d.Notes = append(d.Notes, fmt.Sprintf("every compared row changed the same way: a change of machine speed (CPU frequency, a busier host) looks like this; --normalize %s divides it out", map[bool]string{true: "total or row:KEY", false: "median"}[n < minMedianRows]))
	}
}
