package stats

import (
	"cmp"
	"math"
	"slices"
)

// sortedOrder returns the indexes of x in ascending order of x, ties in
// index order: the order [Median] picks its middle elements from.
func sortedOrder(x []float64) []int {
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(x[a], x[b]) })
	return idx
}

// middle returns the full ranks of the middle element(s) of the n − k
// elements left when the elements of ascending ranks skip are left out
// (lo = hi for an odd count); ok is false when none is left.
func middle(n int, skip []int) (lo, hi int, ok bool) {
	m := n - len(skip)
	if m <= 0 {
		return 0, 0, false
	}
	// at returns the full rank of the element of rank t among those left.
	at := func(t int) int {
		lo, hi := t, t+len(skip)
		for lo < hi {
			p := (lo + hi) / 2
			left, _ := slices.BinarySearch(skip, p+1) // skipped ranks ≤ p
			if p+1-left >= t+1 {
				hi = p
			} else {
				lo = p + 1
			}
		}
		return lo
	}
	if m%2 == 1 {
		p := at(m / 2)
		return p, p, true
	}
	return at(m/2 - 1), at(m / 2), true
}

// midValue is the median [Median]'s weights give from the elements of
// ranks lo and hi: one element, or the mean of two.
func midValue(x []float64, order []int, lo, hi int) float64 {
	if lo == hi {
		return x[order[lo]]
	}
	return 0.5*x[order[lo]] + 0.5*x[order[hi]]
}

// ranksOf returns the ascending ranks of the elements skip (indexes of x,
// repeats ignored).
func ranksOf(rank []int, skip []int) []int {
	out := make([]int, 0, len(skip))
	for _, j := range skip {
		out = append(out, rank[j])
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// LeaveOut makes the weighted estimates of [NearMedianWeights] and
// [PrecisionWeights] over values x with variances v, with any elements
// left out, from one sort of x: O(n) per distinct median the left-out
// sets give (memoized), then O(k log n) for k left out.
type LeaveOut struct {
	x, v, part  []float64
	order, rank []int
	near        map[[2]int]*wsums // by the ranks of the median, for NearMedian
	all         *wsums            // every element, for Precision
}

// wsums are the weighted sums of an estimate over a set of elements:
// Σ 1/v, Σ x/v, Σ part/v², Σ 1/v², and whether each element is in it.
type wsums struct {
	s1, sx, sp, s2 float64
	in             func(j int) bool
}

// An Estimate is a weighted mean Σ w x (weights summing to 1) and the
// sums Σ w² part and Σ w² that make its variance.
type Estimate struct {
	Mean, Part, SumW2 float64
}

// NewLeaveOut returns the estimates over x with variances v; part is a
// part of each variance whose weighted sum [Estimate.Part] reports.
func NewLeaveOut(x, v, part []float64) *LeaveOut {
	s := &LeaveOut{x: x, v: v, part: part, order: sortedOrder(x), rank: make([]int, len(x)), near: map[[2]int]*wsums{}}
	for p, j := range s.order {
		s.rank[j] = p
	}
	return s
}

// sums returns the weighted sums over the elements in(j).
func (s *LeaveOut) sums(in func(j int) bool) *wsums {
	w := &wsums{in: in}
	for j := range s.x {
		if in(j) {
			w.add(s, j, 1)
		}
	}
	return w
}

// add adds element j's terms to w, sign −1 to take them out.
func (w *wsums) add(s *LeaveOut, j int, sign float64) {
	p := 1 / s.v[j]
	w.s1 += sign * p
	w.sx += sign * p * s.x[j]
	w.sp += sign * p * p * s.part[j]
	w.s2 += sign * p * p
}

// without returns the estimate of w's set less the elements skip; when
// they hold half of the weight or more, it sums the rest anew, so that no
// difference of nearly equal sums loses precision.
func (s *LeaveOut) without(w *wsums, skip []int) Estimate {
	r := *w
	for _, j := range slices.Compact(slices.Sorted(slices.Values(skip))) {
		if w.in(j) {
			r.add(s, j, -1)
		}
	}
	if len(skip) > 0 && r.s1 <= w.s1/2 {
		out := map[int]bool{}
		for _, j := range skip {
			out[j] = true
		}
		r = *s.sums(func(j int) bool { return w.in(j) && !out[j] })
	}
	return Estimate{Mean: r.sx / r.s1, Part: r.sp / (r.s1 * r.s1), SumW2: r.s2 / (r.s1 * r.s1)}
}

// NearMedian returns the estimate with the weights of [NearMedianWeights]
// over the elements not in skip (indexes of x); skip must leave one.
func (s *LeaveOut) NearMedian(skip []int) Estimate {
	lo, hi, ok := middle(len(s.x), ranksOf(s.rank, skip))
	if !ok {
		panic("stats: LeaveOut.NearMedian with every element left out")
	}
	w := s.near[[2]int{lo, hi}]
	if w == nil {
		m := midValue(s.x, s.order, lo, hi)
		a, b := s.order[lo], s.order[hi]
		w = s.sums(func(j int) bool {
			return j == a || j == b || nearMedian(s.x[j], s.v[j], m)
		})
		s.near[[2]int{lo, hi}] = w
	}
	return s.without(w, skip)
}

// Precision returns the estimate with the weights of [PrecisionWeights]
// over the elements not in skip (indexes of x); skip must leave one.
func (s *LeaveOut) Precision(skip []int) Estimate {
	if s.all == nil {
		s.all = s.sums(func(int) bool { return true })
	}
	return s.without(s.all, skip)
}

// ExcessVarianceLeaveOneOut returns [ExcessVariance] of x and v without
// element i, for every i: the median, the median absolute deviation and
// the sums over the rows near the median each take a few values as i
// varies, so it sums O(1) times over all rows instead of once per row.
func ExcessVarianceLeaveOneOut(x, v []float64) []Excess {
	n := len(x)
	out := make([]Excess, n)
	if n-1 < 4 {
		for i := range out {
			out[i] = Excess{Warning: tooFew}
		}
		return out
	}
	order := sortedOrder(x)
	rank := make([]int, n)
	for p, j := range order {
		rank[j] = p
	}
	type spread struct {
		c       float64
		dev     []float64
		devRank []int
		devOrd  []int
	}
	centers := map[[2]int]*spread{}
	nears := map[[4]int]*excessSums{}
	for i := range x {
		lo, hi, _ := middle(n, []int{rank[i]})
		sp := centers[[2]int{lo, hi}]
		if sp == nil {
			sp = &spread{c: midValue(x, order, lo, hi), dev: make([]float64, n), devRank: make([]int, n)}
			for j := range x {
				sp.dev[j] = math.Abs(x[j] - sp.c)
			}
			sp.devOrd = sortedOrder(sp.dev)
			for p, j := range sp.devOrd {
				sp.devRank[j] = p
			}
			centers[[2]int{lo, hi}] = sp
		}
		dlo, dhi, _ := middle(n, []int{sp.devRank[i]})
		key := [4]int{lo, hi, dlo, dhi}
		nr := nears[key]
		if nr == nil {
			nr = &excessSums{limit: 3.5 * 1.4826 * midValue(sp.dev, sp.devOrd, dlo, dhi)}
			for j := range x {
				if sp.dev[j] <= nr.limit || nr.limit == 0 {
					nr.add(x[j]-sp.c, v[j], 1)
				}
			}
			nears[key] = nr
		}
		r := *nr
		if sp.dev[i] <= r.limit || r.limit == 0 {
			r.add(x[i]-sp.c, v[i], -1)
			if r.s1 <= nr.s1/2 {
				// Row i held half of the weight: sum the others anew.
				r = excessSums{limit: nr.limit}
				for j := range x {
					if j != i && (sp.dev[j] <= r.limit || r.limit == 0) {
						r.add(x[j]-sp.c, v[j], 1)
					}
				}
			}
		}
		out[i] = r.excess()
	}
	return out
}

// excessSums are the sums of [ExcessVariance] over the rows within limit
// of the center: their count, Σ 1/v, Σ 1/v², Σ y/v and Σ y²/v, y the
// row's distance from the center.
type excessSums struct {
	n               int
	s1, s2, sy, syy float64
	limit           float64
}

// add adds a row (y, v) to the sums, sign −1 to take it out.
func (e *excessSums) add(y, v, sign float64) {
	w := 1 / v
	e.n += int(sign)
	e.s1 += sign * w
	e.s2 += sign * w * w
	e.sy += sign * w * y
	e.syy += sign * w * y * y
}

// excess returns the estimate of τ² from the sums, as [ExcessVariance].
func (e *excessSums) excess() Excess {
	if e.n < 4 {
		return Excess{Rows: e.n, Warning: tooFew}
	}
	q := max(0, e.syy-e.sy*e.sy/e.s1)
	tau2 := max(0, (q-float64(e.n-1))/(e.s1-e.s2/e.s1))
	return Excess{Tau2: tau2 * (1 + math.Sqrt(2/float64(e.n-1))), Rows: e.n}
}
