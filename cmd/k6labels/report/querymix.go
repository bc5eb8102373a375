package report

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/k6labels/k6labels/cmd/k6labels/k6results"
	"github.com/k6labels/k6labels/cmd/k6labels/stats"
)

// QueryShift is a k6_name row whose requests split otherwise between their
// query strings after than before, beyond chance.
type QueryShift struct {
	Key string
	P   float64 // of Pearson's chi-square test of homogeneity, before Holm
	// Moved are the variants whose share of the row's requests moved most,
	// most first (at most three).
	Moved []QueryMove
	// MayBeMix tells that the row's verdict is worse or better: without
	// CPU per query string (the labels drop it), the change may be the mix.
	MayBeMix bool
	// Explains tells that the row's CPU per query string is known (the
	// labels keep query strings) and that the mix explains its change
	// beyond noise: the row's verdict is MixChange, its Mix that change.
	Explains bool
	Mix      float64
}

// QueryMove is a query string's share of its row's requests in each run.
type QueryMove struct {
	Query         string // "(none)" without one, "(other)" for the rest
	Before, After float64
}

// minQueryCell is the fewest requests (both runs) a query string needs to
// be a column of its own in the test; fewer go to "(other)", so that no
// expected count is tiny.
const minQueryCell = 10

// queryMix tests, for each k6_name row with k6 results on both sides, whether
// its query-string mix changed (Holm over the rows tested at d.Alpha), and
// records the rows where it did in d.QueryShifts with a note each.
func (d *Diff) queryMix() {
	var shifts []QueryShift
	var ps []float64
	factors := map[string]float64{} // by name: what its query-string mix changes its CPU per request by
	defer d.queryMixRows(factors)
	for i := range d.Rows {
		dr := &d.Rows[i]
		if !slices.Equal(dr.By, ByName) || dr.Before == nil || dr.After == nil {
			continue
		}
		b, a := d.Before.queries[dr.Before.Values[0]], d.After.queries[dr.After.Values[0]]
		if b == nil || a == nil {
			continue
		}
		known := dr.Before.queries != nil && dr.After.queries != nil
		parts, partsOK := d.queryParts(i, b, a)
		if mix, _, ok := mixShift(parts, 0, 1, 1); known && partsOK && ok {
			factors[d.rowValues(i)[LabelName]] = math.Exp(mix)
		}
		explains := (dr.Verdict == Worse || dr.Verdict == Better) && known && partsOK && d.mixChange(i, parts)
		if explains {
			dr.Verdict = MixChange
		}
		s, p, ok := queryTest(b, a)
		if !ok {
			continue
		}
		s.Key, s.MayBeMix = dr.Key, !known && (dr.Verdict == Worse || dr.Verdict == Better)
		s.Explains, s.Mix = explains, dr.Mix
		shifts, ps = append(shifts, s), append(ps, p)
	}
	for j, rej := range stats.Holm(ps, d.Alpha) {
		if !rej {
			continue
		}
		s := shifts[j]
		s.P = ps[j]
		d.QueryShifts = append(d.QueryShifts, s)
		d.Notes = append(d.Notes, s.describe())
	}
}

// queryParts returns the parts of name row i by query string (b → a), with
// the row's CPU per query string; not ok when a query string new after,
// or one counted in Other, has requests: its cost is unknown.
func (d *Diff) queryParts(i int, b, a *k6results.QueryMix) ([]mixPart, bool) {
	dr := &d.Rows[i]
	if b.Other > 0 || a.Other > 0 || dr.Before.queries == nil {
		return nil, false
	}
	for q, n := range a.Counts {
		if n > 0 && b.Counts[q] == 0 {
			return nil, false
		}
	}
	var parts []mixPart
	for q, n := range b.Counts {
		if n > 0 {
			parts = append(parts, mixPart{samples: float64(dr.Before.queries[q].Samples), before: float64(n), after: float64(a.Counts[q])})
		}
	}
	return parts, true
}

// mixChange tells whether the change of row i, tested, is explained by
// its parts' shift (as [Diff.mixExplains] does for scenarios), and sets the
// row's Mix to the change the shift alone makes.
func (d *Diff) mixChange(i int, parts []mixPart) bool {
	st, f := d.stat[i], d.factorFor(i)
	mix, explains, ok := mixShift(parts, st.l-f.log, st.a+f.a+st.tau2+f.b, d.Alpha/float64(d.Tested))
	if ok {
		d.Rows[i].Mix = math.Exp(mix) - 1
	}
	return explains
}

// queryMixRows decides the worse or better scenario and scenario × name
// rows that hold names whose query-string mix is known (factors, by name),
// as name rows are: a change their parts' mixes explain is a mix change.
func (d *Diff) queryMixRows(factors map[string]float64) {
	if len(factors) == 0 {
		return
	}
	for i := range d.Rows {
		dr := &d.Rows[i]
		if dr.Verdict != Worse && dr.Verdict != Better {
			continue
		}
		var rows []int
		switch {
		case slices.Equal(dr.By, ByScenarioName):
			rows = []int{i}
		case slices.Equal(dr.By, ByScenario):
			rows = d.pairsWith(d.rowValues(i))
		default:
			continue
		}
		var parts []mixPart
		for _, j := range rows {
			pr := &d.Rows[j]
			if pr.Before == nil || pr.Before.Requests == 0 {
				if pr.After != nil && pr.After.Requests > 0 {
					parts = nil // a name new to this scenario: its cost is unknown
					break
				}
				continue
			}
			part := mixPart{samples: float64(pr.Before.Samples), before: float64(pr.Before.Requests), factor: factors[d.rowValues(j)[LabelName]]}
			if pr.After != nil {
				part.after = float64(pr.After.Requests)
			}
			parts = append(parts, part)
		}
		if parts != nil && d.mixChange(i, parts) {
			dr.Verdict, dr.QueryMix = MixChange, true
		}
	}
}

// queryTest compares the query-string mixes b and a: the shares that moved
// most and the chi-square test's p-value; ok is false when fewer than two
// columns have requests.
func queryTest(b, a *k6results.QueryMix) (QueryShift, float64, bool) {
	cols := map[string][2]float64{}
	for q, n := range b.Counts {
		c := cols[q]
		c[0] += float64(n)
		cols[q] = c
	}
	for q, n := range a.Counts {
		c := cols[q]
		c[1] += float64(n)
		cols[q] = c
	}
	other := [2]float64{float64(b.Other), float64(a.Other)}
	for q, c := range cols {
		if c[0]+c[1] < minQueryCell {
			other[0], other[1] = other[0]+c[0], other[1]+c[1]
			delete(cols, q)
		}
	}
	if other[0]+other[1] > 0 {
		cols["\x00other"] = other
	}
	n := [2]float64{float64(b.Total()), float64(a.Total())}
	if len(cols) < 2 || n[0] == 0 || n[1] == 0 {
		return QueryShift{}, 1, false
	}
	var chi2 float64
	var moved []QueryMove
	for _, q := range slices.Sorted(maps.Keys(cols)) {
		c := cols[q]
		for side := range 2 {
			e := n[side] * (c[0] + c[1]) / (n[0] + n[1])
			chi2 += (c[side] - e) * (c[side] - e) / e
		}
		name := cmp.Or(q, "(none)")
		if q == "\x00other" {
			name = "(other)"
		}
		moved = append(moved, QueryMove{Query: name, Before: c[0] / n[0], After: c[1] / n[1]})
	}
	slices.SortStableFunc(moved, func(x, y QueryMove) int {
		return cmp.Compare(math.Abs(y.After-y.Before), math.Abs(x.After-x.Before))
	})
	return QueryShift{Moved: moved[:min(3, len(moved))]}, stats.ChiSquareUpper(chi2, len(cols)-1), true
}

// describe is the finding in a sentence, without its final period.
func (s *QueryShift) describe() string {
	var parts []string
	for _, m := range s.Moved {
		parts = append(parts, fmt.Sprintf("%s %.1f%% → %.1f%%", m.Query, 100*m.Before, 100*m.After))
	}
	out := fmt.Sprintf("k6_name=%s: its requests' query-string mix changed beyond chance (chi-square p = %.2g, Holm over the rows tested): %s",
		s.Key, s.P, strings.Join(parts, ", "))
	if s.Explains {
		out += fmt.Sprintf("; with each query string's CPU per request unchanged (the labels keep query strings) this mix alone changes the row's CPU per request by %s, "+
			"which explains its change: a mix change, not a costlier request", Change(s.Mix))
	}
	if s.MayBeMix {
		out += "; the CPU per request change of this row may be that mix, not a costlier request: the labels drop query strings, so CPU per query string is unknown"
	}
	return out
}

// QueryShift returns the query-string mix finding of the row key, or nil.
func (d *Diff) QueryShift(key string) *QueryShift {
	for i := range d.QueryShifts {
		if d.QueryShifts[i].Key == key {
			return &d.QueryShifts[i]
		}
	}
	return nil
}
