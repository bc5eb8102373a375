package report

import (
	"cmp"
	"fmt"
	"github.com/k6labels/k6labels/cmd/k6labels/stats"
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
	// RunSD is σ, the least between-run spread of a row's CPU per request
	// on the log scale (0.05 = 5%): each run adds σ² to the variance of a
	// row's log change. 0 means [DefaultRunSD]; negative means none.
	RunSD float64
	// Detect is the smallest change a "same" verdict vouches for (0.10 =
	// 10%): a row within noise that the test could not see change by
	// Detect at 80% power is "inconclusive". 0 means 0.10.
	Detect float64
	// RequestCV is the assumed coefficient of variation of one request's
	// CPU (its spread adds RequestCV²/requests per run); 0 means 2,
	// negative none.
	RequestCV float64
}

// DefaultRunSD is the default σ of [DiffOptions.RunSD]: the spread of an
// unchanged route's CPU per request between real runs of the demo service
// on a shared 2-core machine was 4–6% per run.
const DefaultRunSD = 0.05

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
	// RunSD is σ used for the between-run spread (the floor, or the
	// estimate from the reference rows when larger); Detect is the change
	// a "same" verdict vouches for.
	RunSD, RunSpread, Detect float64
	Tested                   int // rows in the test family
	Rows                     []DiffRow
	// Uniform is set when every reference row moved together beyond
	// noise: one finding, not one regression per row.
	Uniform *Shift
	// QueryShifts are the k6_name rows whose query-string mix changed.
	QueryShifts []QueryShift
	// Warnings say why the answer is weaker than asked (the text shows
	// them first); Notes are remarks.
	Warnings []string
	Notes    []string

	// Runs are the runs per side ([NewDiffRuns]); RankTest tells that rows
	// were decided by the rank test over them.
	Runs     [2]int
	RankTest bool

	grewN    int
	stat     []rowStat
	eligible []int   // reference rows with minSamples in both runs
	tau2     float64 // between-run variance of a row's log change
	method   string  // normalization applied: none, median, uniform, total, row:KEY
	control  int     // the control row of row:KEY

	values []map[string]string // labelValues of each row, made once (rowValues)
	refs   map[int]bool        // the rows of the reference grouping (isReference)
	// byValues holds the eligible rows by their label values joined
	// (valuesKey) over the labels named by the map's key (eligibleBy).
	byValues map[string]map[string][]int
	pairs    map[string]map[string][]int // scenario × name rows by label and value (pairsWith)
	leave    *stats.LeaveOut             // the eligible rows' changes, for factorFor
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
	// Speed is the machine-speed factor this row is divided by: made
	// without the row itself and the rows it overlaps; 1 without.
	Speed     float64
	Low, High float64 // 95% interval of Normalized (not adjusted for the family)
	P         float64 // two-sided p-value of "no change" (1 if untested)
	Beyond    bool    // rejected by Holm's procedure at Alpha
	// Detectable is the smallest change the family's test sees in this row
	// with 80% power (NaN if untested); Longer is how many times longer the
	// runs must be for it to reach Detect (+Inf: no length is enough).
	Detectable, Longer float64
	atLength           float64 // the smallest detectable change with runs of any length
	// RunsNeeded is, with the rank test, the runs per side at which it
	// would see Detect with 80% power.
	RunsNeeded int
	// Mix is the change the shift of the row's requests between scenarios
	// alone would make (same CPU per request in each scenario); NaN if
	// not computed.
	Mix float64
	// QueryMix tells that Mix is of the shift between the query strings of
	// the row's names (a scenario row's, with CPU per query string known).
	QueryMix bool
	Verdict  string // worse, better, same, inconclusive, few samples, in _overflow?, reference, only before, only after
	Grew     []FuncChange
}

// FuncChange is a function's self CPU per request (or share) in two runs.
type FuncChange struct {
	Name          string
	Before, After float64 // ms per request, or share of k6 CPU; After normalized
}

// The verdicts of a DiffRow.
const (
	Worse  = "worse"
	Better = "better"
	Same   = "same"
	// Inconclusive: within noise, but a change of Detect would likely
	// have been within noise too.
	Inconclusive = "inconclusive"
	// MixChange: a name (scenario) row's change beyond noise that the
	// shift of its requests between scenarios (names) explains (Mix); not
	// a costlier request.
	MixChange  = "mix change"
	FewSamples = "few samples"
	// NoRequests: CPU on both sides but no k6 requests on one side, so no
	// CPU per request there; not tested.
	NoRequests = "no requests"
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
	switch {
	case opts.RunSD == 0:
		opts.RunSD = DefaultRunSD
	case opts.RunSD < 0:
		opts.RunSD = 0
	}
	if opts.Detect == 0 {
		opts.Detect = 0.10
	}
	switch {
	case opts.RequestCV == 0:
		opts.RequestCV = 2
	case opts.RequestCV < 0:
		opts.RequestCV = 0
	}
	d := &Diff{Before: before, After: after, PerRequest: before.HasRequests && after.HasRequests, Runs: [2]int{1, 1}, grewN: opts.Grew,
		MatchName: opts.MatchName, Alpha: opts.Alpha, Speed: 1, Normalize: "none", RunSD: opts.RunSD, Detect: opts.Detect}
	d.Notes = sideNotes(before, after)
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
	d.stats(opts.RequestCV)
	if err := d.speed(opts.Normalize); err != nil {
		return nil, err
	}
	d.uniform()
	d.test()
	d.queryMix()
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
				old.Count = old.Plus(row.Count)
				old.Requests += row.Requests
				old.InOverflow = old.InOverflow || row.InOverflow
				self := map[string]Count{}
				for f, c := range old.self {
					self[f] = c
				}
				for f, c := range row.self {
					self[f] = self[f].Plus(c)
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
		if _, ok := b[k]; !ok {
			bkeys = append(bkeys, k)
		}
	}
	for _, k := range bkeys {
		d.Rows = append(d.Rows, DiffRow{By: g, Key: k, Before: b[k], After: a[k], Raw: math.NaN(), Normalized: math.NaN(),
			Speed: 1, Low: math.NaN(), High: math.NaN(), P: 1, Detectable: math.NaN(), Longer: math.NaN(), Mix: math.NaN()})
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
		return Ratio(float64(cpu), float64(row.Requests)) / 1e6
	}
	return Ratio(float64(cpu), float64(r.K6.CPU))
}

// comparable tells whether both sides of dr can be compared: neither is
// InOverflow, and both have exposure.
func (d *Diff) comparable(dr *DiffRow) bool {
	return dr.Before != nil && dr.After != nil && !dr.Before.InOverflow && !dr.After.InOverflow &&
		d.exposure(d.Before, dr.Before) > 0 && d.exposure(d.After, dr.After) > 0
}

// logRatio returns the log of after/before rate of dr and its variance.
func (d *Diff) logRatio(dr *DiffRow) (float64, float64) {
	l1, v1 := stats.LogRate(dr.Before.Samples, d.exposure(d.Before, dr.Before))
	l2, v2 := stats.LogRate(dr.After.Samples, d.exposure(d.After, dr.After))
	return l2 - l1, v1 + v2
}

// rowStat is a row's raw change and the parts of its variance, for the
// test and the machine-speed factor.
type rowStat struct {
	ok   bool    // both sides comparable
	l    float64 // log of after/before rate (Haldane's +½)
	a    float64 // variance that shrinks with the run's length: Poisson + per-request spread
	tau2 float64 // between-run variance of the row's log change (2σ² or the estimate)
	elig bool    // a reference row with minSamples or more in both runs
}

// stats computes every row's rowStat and the between-run variance: the
// floor 2σ², raised to the robust estimate from the reference rows (all of
// them, or all but the row itself for a reference row) where larger.
func (d *Diff) stats(cv float64) {
	d.stat = make([]rowStat, len(d.Rows))
	for i := range d.Rows {
		dr, st := &d.Rows[i], &d.stat[i]
		if dr.Before == nil || dr.After == nil || dr.Before.InOverflow || dr.After.InOverflow || !d.comparable(dr) {
			continue
		}
		st.ok = true
		st.l, st.a = d.logRatio(dr)
		if d.PerRequest {
			st.a += cv * cv * (1/float64(dr.Before.Requests) + 1/float64(dr.After.Requests))
		}
	}
	floor := 2 * d.RunSD * d.RunSD
	d.eligible = nil
	for _, i := range d.reference() {
		dr := &d.Rows[i]
		if d.stat[i].ok && dr.Before.Samples >= minSamples && dr.After.Samples >= minSamples {
			d.stat[i].elig = true
			d.eligible = append(d.eligible, i)
		}
	}
	estimate := func(e stats.Excess) float64 {
		if e.Warning != "" {
			return floor
		}
		return max(floor, e.Tau2)
	}
	x, v := make([]float64, len(d.eligible)), make([]float64, len(d.eligible))
	for k, j := range d.eligible {
		x[k], v[k] = d.stat[j].l, d.stat[j].a
	}
	d.tau2 = estimate(stats.ExcessVariance(x, v))
	for i := range d.stat {
		d.stat[i].tau2 = d.tau2
	}
	for k, e := range stats.ExcessVarianceLeaveOneOut(x, v) {
		d.stat[d.eligible[k]].tau2 = estimate(e)
	}
	d.RunSpread = math.Sqrt(d.tau2 / 2)
}

// labelValues returns a row's label values by label name, k6_name as
// matched (URL path unless MatchName).
func (d *Diff) labelValues(dr *DiffRow) map[string]string {
	row := dr.Before
	if row == nil {
		row = dr.After
	}
	m := map[string]string{}
	for i, label := range row.By {
		v := row.Values[i]
		if label == LabelName && !d.MatchName {
			v = URLPath(v)
		}
		m[label] = v
	}
	return m
}

// rowValues returns labelValues of row i, made once per row.
func (d *Diff) rowValues(i int) map[string]string {
	if d.values == nil {
		d.values = make([]map[string]string, len(d.Rows))
	}
	if d.values[i] == nil {
		d.values[i] = d.labelValues(&d.Rows[i])
	}
	return d.values[i]
}

// isReference tells whether row i is in the reference grouping.
func (d *Diff) isReference(i int) bool {
	if d.refs == nil {
		d.refs = map[int]bool{}
		for _, j := range d.reference() {
			d.refs[j] = true
		}
	}
	return d.refs[i]
}

// overlaps returns the eligible reference rows whose requests may be
// among row i's: the row itself, or those whose labels agree with it where
// both have the label; a scenario row overlaps the name rows its scenario
// × name rows name (all of them without scenario × name rows).
func (d *Diff) overlaps(i int) []int {
	if d.stat[i].elig {
		return []int{i}
	}
	if d.isReference(i) || len(d.eligible) == 0 {
		return nil
	}
	vi := d.rowValues(i)
	ref := d.Rows[d.eligible[0]].By
	var common []string
	for _, label := range ref {
		if _, ok := vi[label]; ok {
			common = append(common, label)
		}
	}
	if len(common) > 0 {
		return d.eligibleBy(common)[valuesKey(vi, common)]
	}
	_, hasName := vi[LabelName]
	if hasName || !slices.ContainsFunc(d.Rows, func(r DiffRow) bool { return slices.Equal(r.By, ByScenarioName) }) {
		return slices.Clone(d.eligible)
	}
	// A scenario row and name rows: overlapping when a scenario × name
	// row holds both.
	var out []int
	seen := map[string]bool{}
	for _, k := range d.pairsWith(vi) {
		key := valuesKey(d.rowValues(k), ref)
		if !seen[key] {
			seen[key] = true
			out = append(out, d.eligibleBy(ref)[key]...)
		}
	}
	return out
}

// valuesKey joins the values of labels in m ("" where m has none).
func valuesKey(m map[string]string, labels []string) string {
	var b strings.Builder
	for _, label := range labels {
		b.WriteString(m[label])
		b.WriteByte(0)
	}
	return b.String()
}

// eligibleBy returns the eligible rows by their valuesKey over labels,
// made once per set of labels.
func (d *Diff) eligibleBy(labels []string) map[string][]int {
	name := strings.Join(labels, "\x00")
	if d.byValues == nil {
		d.byValues = map[string]map[string][]int{}
	}
	m, ok := d.byValues[name]
	if !ok {
		m = map[string][]int{}
		for _, j := range d.eligible {
			k := valuesKey(d.rowValues(j), labels)
			m[k] = append(m[k], j)
		}
		d.byValues[name] = m
	}
	return m
}

// pairsWith returns, in row order, the scenario × name rows whose label
// values include all of values.
func (d *Diff) pairsWith(values map[string]string) []int {
	if d.pairs == nil {
		d.pairs = map[string]map[string][]int{}
		for k := range d.Rows {
			if !slices.Equal(d.Rows[k].By, ByScenarioName) {
				continue
			}
			for label, v := range d.rowValues(k) {
				if d.pairs[label] == nil {
					d.pairs[label] = map[string][]int{}
				}
				d.pairs[label][v] = append(d.pairs[label][v], k)
			}
		}
	}
	var rows []int
	for k := range d.Rows {
		rows = append(rows, k) // without values: every scenario × name row
	}
	for label, v := range values {
		rows = d.pairs[label][v] // any one label's rows hold the rest, if any
		break
	}
	var out []int
	for _, k := range rows {
		if pv := d.rowValues(k); slices.Equal(d.Rows[k].By, ByScenarioName) && holdsAll(pv, values) {
			out = append(out, k)
		}
	}
	return out
}

// holdsAll tells whether m has every label value of values.
func holdsAll(m, values map[string]string) bool {
	for label, v := range values {
		if m[label] != v {
			return false
		}
	}
	return true
}

// A factor is the machine-speed factor one row is divided by: its log and
// the parts of its variance (shrinking with the run's length, and not).
type factor struct {
	log, a, b float64
}

// speed chooses the normalization and sets the header's factor (from every
// eligible reference row). Each row is then divided by a factor made
// without itself or the rows it overlaps ([Diff.factorFor]).
func (d *Diff) speed(method string) error {
	if !d.PerRequest {
		if method != "" && method != "none" {
			d.Notes = append(d.Notes, "shares need no machine-speed normalization: --normalize ignored")
		}
		d.method = "none"
		return nil
	}
	ref := d.reference()
	switch {
	case method == "" || method == "median":
		if len(d.eligible) < minMedianRows {
			d.Normalize = "none (too few rows for median)"
			d.method = "none"
			d.Warnings = append(d.Warnings, fmt.Sprintf("machine speed NOT normalized: --normalize median needs %d %s rows with %d samples or more in both runs, there are %d, too few to tell a uniform slowdown from one costlier route; --normalize total or row:KEY corrects for machine speed", minMedianRows, GroupTitle(d.Rows[ref[0]].By), minSamples, len(d.eligible)))
			return nil
		}
		d.method = "median"
	case method == "none":
		d.method = "none"
		return nil
	case method == "total":
		d.method = "total"
	case strings.HasPrefix(method, "row:"):
		key := strings.TrimPrefix(method, "row:")
		for _, i := range ref {
			if dr := &d.Rows[i]; dr.Key == key && d.stat[i].ok {
				d.method, d.control = method, i
				d.Normalize = method
				d.Speed = math.Exp(d.stat[i].l)
				return nil
			}
		}
		var keys []string
		for _, i := range ref {
			keys = append(keys, d.Rows[i].Key)
		}
		return fmt.Errorf("--normalize %s: no row %q in both runs; the %s rows are %s", method, key, GroupTitle(d.Rows[ref[0]].By), strings.Join(keys, ", "))
	default:
		return fmt.Errorf("--normalize: unknown method %q: use median, total, none or row:KEY", method)
	}
	d.Normalize = d.method
	d.Speed = math.Exp(d.factorFor(-1).log)
	return nil
}

// factorFor returns the factor row i is divided by (i = −1: the header's,
// from all rows): made from the eligible reference rows that do not
// overlap row i; from all of them when too few remain (the variance then
// overstates, as the row and the factor share samples).
func (d *Diff) factorFor(i int) factor {
	var skip []int
	if i >= 0 {
		skip = d.overlaps(i)
	}
	switch d.method {
	case "median", "uniform":
		need := 1
		if d.method == "median" {
			need = minMedianRows - 1
		}
		if d.leave == nil {
			x, v, a := make([]float64, len(d.eligible)), make([]float64, len(d.eligible)), make([]float64, len(d.eligible))
			for k, j := range d.eligible {
				x[k], v[k], a[k] = d.stat[j].l, d.stat[j].a+d.tau2, d.stat[j].a
			}
			d.leave = stats.NewLeaveOut(x, v, a)
		}
		pos := make([]int, len(skip))
		for k, j := range skip {
			pos[k], _ = slices.BinarySearch(d.eligible, j)
		}
		if len(d.eligible)-len(pos) < need {
			pos = nil
		}
		var e stats.Estimate
		if d.method == "median" {
			e = d.leave.NearMedian(pos)
		} else {
			e = d.leave.Precision(pos)
		}
		return factor{log: e.Mean, a: e.Part, b: e.SumW2 * d.tau2}
	case "total":
		k1, k2 := d.Before.K6.Samples, d.After.K6.Samples
		n1, n2 := d.Before.Requests, d.After.Requests
		for _, j := range skip {
			k1, k2 = k1-d.Rows[j].Before.Samples, k2-d.Rows[j].After.Samples
			n1, n2 = n1-d.Rows[j].Before.Requests, n2-d.Rows[j].After.Requests
		}
		if k1 <= 0 || k2 <= 0 || n1 <= 0 || n2 <= 0 {
			k1, k2, n1, n2 = d.Before.K6.Samples, d.After.K6.Samples, d.Before.Requests, d.After.Requests
		}
		l1, v1 := stats.LogRate(k1, float64(n1))
		l2, v2 := stats.LogRate(k2, float64(n2))
		f := factor{log: l2 - l1, a: v1 + v2}
		if len(d.eligible) > 0 {
			f.b = d.tau2 / float64(len(d.eligible))
		}
		return f
	case "none":
		return factor{}
	}
	// row:KEY
	c := d.control
	return factor{log: d.stat[c].l, a: d.stat[c].a, b: d.stat[c].tau2}
}

// A Shift is every reference row moving together, found in the raw
// changes: a slower (or faster) machine, or a change on a path every
// request takes; the diff cannot tell which.
type Shift struct {
	Change, Low, High float64 // the common change (after/before − 1) and its 95% interval
	Rows              int     // the rows that moved together
	P                 float64 // two-sided p-value of "no common change"
}

// uniform looks for a common change of the eligible reference rows: their
// precision-weighted mean log change beyond noise at Alpha, every row's
// change of its sign (all but a tenth with many rows), the rows consistent with one change (Cochran's
// Q not rejected at Alpha), and one change fitting them better than any
// one row's alone. With median normalization impossible, rows are then
// divided by the common change of the others.
func (d *Diff) uniform() {
	m := len(d.eligible)
	if m < 2 {
		return
	}
	var sw, swl float64
	for _, j := range d.eligible {
		w := 1 / (d.stat[j].a + d.tau2)
		sw += w
		swl += w * d.stat[j].l
	}
	mu, se := swl/sw, math.Sqrt(1/sw)
	var q float64
	opposite := 0
	for _, j := range d.eligible {
		st := d.stat[j]
		q += (st.l - mu) * (st.l - mu) / (st.a + d.tau2)
		if st.l*mu <= 0 {
			opposite++
		}
	}
	// Every row the same way; with many rows, a tenth may not by noise.
	if opposite > m/10 {
		return
	}
	p := stats.NormalTwoSided(mu / se)
	if p > d.Alpha || stats.ChiSquareUpper(q, m-1) < d.Alpha {
		return
	}
	// Nor one row's own change, which Q cannot tell with few rows: one
	// common change fits the rows better than any one row's change alone,
	// the others unchanged (both fits have one parameter).
	var none float64 // the misfit of no change at all
	for _, j := range d.eligible {
		none += d.stat[j].l * d.stat[j].l / (d.stat[j].a + d.tau2)
	}
	for _, j := range d.eligible {
		if none-d.stat[j].l*d.stat[j].l/(d.stat[j].a+d.tau2) <= q {
			return
		}
	}
	z := stats.NormalQuantile(0.975)
	d.Uniform = &Shift{Change: math.Exp(mu) - 1, Low: math.Exp(mu-z*se) - 1, High: math.Exp(mu+z*se) - 1, Rows: m, P: p}
	if d.method == "none" && strings.HasPrefix(d.Normalize, "none (") {
		d.method, d.Normalize = "uniform", "uniform"
		d.Speed = math.Exp(mu)
	}
}

// test computes every row's change and runs the beyond-noise test: the
// row's log change minus its factor's, over the square root of the sum of
// their variances; Holm's procedure over all tested rows. A row within
// noise whose smallest detectable change exceeds Detect is inconclusive.
func (d *Diff) test() {
	z := stats.NormalQuantile(0.975)
	var tested []int
	var ps, ls, as, bs []float64
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
		st := d.stat[i]
		if !st.ok {
			dr.Verdict = NoRequests
			if d.exposure(d.Before, dr.Before) <= 0 {
				dr.BeforeValue = math.NaN() // no CPU per request, not 0
			}
			if d.exposure(d.After, dr.After) <= 0 {
				dr.AfterValue = math.NaN()
			}
			continue
		}
		if strings.HasPrefix(d.method, "row:") && i == d.control {
			dr.Speed = math.Exp(st.l)
			dr.Raw = dr.AfterValue/dr.BeforeValue - 1
			dr.Normalized = 0
			dr.Verdict = Reference
			continue
		}
		f := d.factorFor(i)
		dr.Speed = math.Exp(f.log)
		switch {
		case dr.BeforeValue > 0:
			dr.Raw = dr.AfterValue/dr.BeforeValue - 1
			dr.Normalized = (1+dr.Raw)/dr.Speed - 1
		case dr.AfterValue > 0:
			dr.Raw, dr.Normalized = math.Inf(1), math.Inf(1)
		}
		if dr.Before.Samples+dr.After.Samples < minSamples {
			dr.Verdict = FewSamples
			continue
		}
		l := st.l - f.log
		a, b := st.a+f.a, st.tau2+f.b
		sd := math.Sqrt(a + b)
		dr.Low, dr.High = math.Exp(l-z*sd)-1, math.Exp(l+z*sd)-1
		dr.P = stats.NormalTwoSided(l / sd)
		tested = append(tested, i)
		ps, ls, as, bs = append(ps, dr.P), append(ls, l), append(as, a), append(bs, b)
	}
	d.Tested = len(tested)
	for j, rej := range stats.Holm(ps, d.Alpha) {
		dr := &d.Rows[tested[j]]
		dr.Beyond = rej
		// The smallest change the family's test sees with 80% power: the
		// first rejection of Holm's procedure is at Alpha / rows tested.
		level := d.Alpha / float64(d.Tested)
		dr.Detectable = math.Exp(stats.Detectable(as[j]+bs[j], level)) - 1
		target := math.Log1p(d.Detect) / stats.Detectable(1, level)
		target *= target
		dr.atLength = math.Exp(stats.Detectable(bs[j], level)) - 1
		dr.Longer = math.Inf(1)
		if target > bs[j] {
			// 2% over: the counts' +½ does not shrink with the length.
			dr.Longer = max(1, 1.02*as[j]/(target-bs[j]))
		}
		if rej && d.mixExplains(tested[j], ls[j], as[j]+bs[j], level) {
			dr.Verdict = MixChange
		} else {
			dr.Verdict = verdict(rej, ls[j] > 0, dr.Detectable, d.Detect)
		}
	}
	d.uniformNote()
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
				After: d.measureOf(d.After, dr.After, dr.After.self[f].CPU) / dr.Speed}
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

// Measure names what rows compare: CPU per request, or a share.
func (d *Diff) Measure() string {
	if d.PerRequest {
		return "ms/request"
	}
	return "share of k6"
}

// Value formats a compared value: ms per request, or a share.
func (d *Diff) Value(v float64) string {
	switch {
	case math.IsNaN(v):
		return "–" // no CPU per request: no requests on that side
	case d.PerRequest:
		return fmt.Sprintf("%.3f", v)
	}
	return Pct(v)
}

// Elapsed formats a run's length for the header.
func Elapsed(r *Report) string {
	if !r.HasRequests {
		return ""
	}
	return fmt.Sprintf(", %d requests in %.1fs", r.Requests, r.End.Sub(r.Start).Round(100*time.Millisecond).Seconds())
}

// uniformNote adds the finding of a common change to the notes and says
// what the verdicts did with it.
func (d *Diff) uniformNote() {
	u := d.Uniform
	if u == nil {
		return
	}
	what := fmt.Sprintf("all %d %s rows moved together, %s (95%% interval %s … %s): a slower or faster machine, or a change on a path every request takes; the diff cannot tell which", u.Rows, GroupTitle(d.Rows[d.eligible[0]].By), Change(u.Change), Change(u.Low), Change(u.High))
	switch d.method {
	case "uniform":
		d.Warnings = append(d.Warnings, what+"; the rows are compared with the others' common change, and --fail-above treats a common change above it as inconclusive")
	case "none":
		d.Notes = append(d.Notes, what+"; not normalized (--normalize none), so each row shows it")
	default:
		d.Notes = append(d.Notes, what+"; --normalize "+d.Normalize+" divides it out")
	}
}

// sideNotes returns the runs' own notes (a truncated k6 file, routes,
// connection goroutines, …) for the diff: "base run: …", "new run: …",
// or "both runs: …" for a note the two share.
func sideNotes(before, after *Report) []string {
	var out []string
	for _, n := range before.Notes {
		if slices.Contains(after.Notes, n) {
			out = append(out, "both runs: "+n)
		} else {
			out = append(out, "base run: "+n)
		}
	}
	for _, n := range after.Notes {
		if !slices.Contains(before.Notes, n) {
			out = append(out, "new run: "+n)
		}
	}
	return out
}

// Untested returns the rows with CPU (minSamples or more) that no test
// could judge: CPU but no k6 requests on one side.
func (d *Diff) Untested() []DiffRow {
	var out []DiffRow
	for _, dr := range d.Rows {
		if dr.Verdict == NoRequests && dr.Before.Samples+dr.After.Samples >= minSamples {
			out = append(out, dr)
		}
	}
	return out
}

// UntestedWhy says why row dr, one of Untested, was not tested.
func (d *Diff) UntestedWhy(dr *DiffRow) string {
	before, after := d.exposure(d.Before, dr.Before) <= 0, d.exposure(d.After, dr.After) <= 0
	switch {
	case before && after:
		return fmt.Sprintf("%d and %d samples but no k6 requests in either run (no k6 request name matches it)", dr.Before.Samples, dr.After.Samples)
	case before:
		return fmt.Sprintf("%d and %d samples but no k6 requests in the before run (do the k6 names of both runs match?)", dr.Before.Samples, dr.After.Samples)
	}
	return fmt.Sprintf("%d and %d samples but no k6 requests in the after run (do the k6 names of both runs match?)", dr.Before.Samples, dr.After.Samples)
}

// Inconclusive returns the rows whose verdict is inconclusive: within
// noise, though the diff could not have seen a change of Detect in them.
func (d *Diff) Inconclusive() []DiffRow {
	var out []DiffRow
	for _, dr := range d.Rows {
		if dr.Verdict == Inconclusive {
			out = append(out, dr)
		}
	}
	return out
}

// UniformAbove tells whether the rows were compared with their common
// change (too few rows for median normalization) and that change is
// costlier than threshold: the gate cannot tell a slower machine from a
// costlier path of every request.
func (d *Diff) UniformAbove(threshold float64) bool {
	return d.method == "uniform" && d.Uniform != nil && d.Uniform.Change > threshold
}

// TestableAfter describes what would make an inconclusive row testable:
// runs Longer times as long (with the requests and seconds that means), or
// that no run length is enough.
func (d *Diff) TestableAfter(dr *DiffRow) string {
	if d.RankTest {
		return fmt.Sprintf("about %d runs per side would make it testable (%d and %d now)", dr.RunsNeeded, d.Runs[0], d.Runs[1])
	}
	if d.NoLength(dr) {
		return d.noLengthText("", Change(dr.atLength))
	}
	f := dr.Longer
	s := fmt.Sprintf("runs %.1f× as long would make it testable", f)
	if dr.After != nil && dr.After.Requests > 0 && d.PerRequest {
		s += fmt.Sprintf(" (about %d requests of this row per run", int64(math.Ceil(f*float64(max(dr.Before.Requests, dr.After.Requests)))))
		if sec := d.After.End.Sub(d.After.Start).Seconds(); sec > 0 {
			s += fmt.Sprintf(", %.0f s", math.Ceil(f*sec))
		}
		s += ")"
	}
	return s
}

// NoLength tells whether no run length would make dr testable (without
// the rank test): what [Diff.NoLengthEnough] says of it.
func (d *Diff) NoLength(dr *DiffRow) bool {
	return !d.RankTest && (math.IsInf(dr.Longer, 1) || math.IsNaN(dr.Longer))
}

// noLengthText says that no run length is enough for rows ("": the row at
// hand), whose changes seen at best with runs of any length are best.
func (d *Diff) noLengthText(rows, best string) string {
	return fmt.Sprintf("no run length is enough%s: with the between-run spread (σ %.1f%% per run) alone the test sees %s at best; compare several runs per side, or measure σ on a quieter machine and pass it as --run-sd", rows, 100*d.RunSpread, best)
}

// NoLengthEnough says once, for those of rows no run length would make
// testable, that none would: for all of rows, or naming the first five of
// them; "" for none. [Diff.TestableAfter] says it of one row.
func (d *Diff) NoLengthEnough(rows []DiffRow) string {
	var names []string
	n, lo, hi := 0, math.Inf(1), math.Inf(-1)
	for i := range rows {
		if !d.NoLength(&rows[i]) {
			continue
		}
		if n++; n <= 5 {
			names = append(names, strings.Join(rows[i].By, ",")+"="+rows[i].Key)
		}
		lo, hi = min(lo, rows[i].atLength), max(hi, rows[i].atLength)
	}
	switch {
	case n == 0:
		return ""
	case n == len(rows) && n > 1:
		names = []string{fmt.Sprintf("all %d rows", n)}
	case n > 5:
		names = append(names, fmt.Sprintf("%d more rows", n-5))
	}
	best := Change(lo)
	if Change(hi) != best {
		best += " to " + Change(hi)
	}
	return d.noLengthText(" for "+strings.Join(names, ", "), best)
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

// mixExplains tells whether the change l (variance v) of a name row (or
// scenario row) i is explained by the shift of its requests between
// scenarios (names): the change the before run's CPU per request in each
// scenario × name row it holds gives with the after run's requests there,
// in l's direction, leaves a remainder within noise at level. It sets the
// row's Mix.
func (d *Diff) mixExplains(i int, l, v, level float64) bool {
	dr := &d.Rows[i]
	if !d.PerRequest || !(slices.Equal(dr.By, ByName) || slices.Equal(dr.By, ByScenario)) {
		return false
	}
	var parts []mixPart
	for _, j := range d.pairsWith(d.rowValues(i)) {
		pr := &d.Rows[j]
		if pr.Before == nil || pr.Before.Requests == 0 {
			if pr.After != nil && pr.After.Requests > 0 {
				return false // a scenario new to this name: its cost is unknown
			}
			continue
		}
		part := mixPart{samples: float64(pr.Before.Samples), before: float64(pr.Before.Requests)}
		if pr.After != nil {
			part.after = float64(pr.After.Requests)
		}
		parts = append(parts, part)
	}
	mix, explains, ok := mixShift(parts, l, v, level)
	if ok {
		dr.Mix = math.Exp(mix) - 1
	}
	return explains
}

// verdict is a tested row's verdict: worse or better when the test
// rejected (up: the change is a growth), else inconclusive when the
// smallest change it would see exceeds detect, else same.
func verdict(rejected, up bool, detectable, detect float64) string {
	switch {
	case rejected && up:
		return Worse
	case rejected:
		return Better
	case detectable > detect:
		return Inconclusive
	}
	return Same
}

// TestLegend says in one sentence how the rows were decided beyond noise,
// for the legend of every output.
func (d *Diff) TestLegend() string {
	if d.RankTest {
		return fmt.Sprintf("Beyond noise: Mann–Whitney rank test of each row's CPU per request over the %d and %d runs (after divided by the row's machine-speed factor), Holm-corrected: at most %.0f%% chance of any false alarm over the %d rows tested; intervals from the runs' spread.",
			d.Runs[0], d.Runs[1], 100*d.Alpha, d.Tested)
	}
	return fmt.Sprintf("Beyond noise: two-sided test of each row's change against its sample counts (Poisson), the spread of requests' CPU and a between-run spread of %.1f%% per run, Holm-corrected: at most %.0f%% chance of any false alarm over the %d rows tested.",
		100*d.RunSpread, 100*d.Alpha, d.Tested)
}
