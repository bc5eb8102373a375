// Package stats holds the statistics of k6labels' reports and diffs: the
// Poisson interval of a sample count, normal quantiles and p-values, Holm's
// procedure, the between-run variance, detectable changes, the
// Mann–Whitney rank test. It knows nothing of reports: numbers in, numbers out.
package stats

import (
	"cmp"
	"math"
	"slices"
)

// The statistics of the report and the diff. A CPU profiler that samples at
// a fixed rate (100 Hz in Go) turns a row's CPU into a count k of samples;
// requests are counted exactly by k6. k is treated as a Poisson count, the
// standard model of a sampling profiler with many independent ticks.

// PoissonInterval returns a two-sided interval for the mean of a Poisson
// count k at the given confidence (0.95 for 95%): Byar's approximation of
// the exact Garwood interval, within 1% of it from k = 5 on; k = 0 gives
// [0, upper].
func PoissonInterval(k int64, confidence float64) (low, high float64) {
	z := NormalQuantile(1 - (1-confidence)/2)
	if k > 0 {
		x := float64(k)
		low = x * math.Pow(1-1/(9*x)-z/(3*math.Sqrt(x)), 3)
	}
	x := float64(k + 1)
	high = x * math.Pow(1-1/(9*x)+z/(3*math.Sqrt(x)), 3)
	return max(low, 0), high
}

// NormalQuantile returns the p-quantile of the standard normal distribution.
func NormalQuantile(p float64) float64 {
	return math.Sqrt2 * math.Erfinv(2*p-1)
}

// NormalTwoSided returns the two-sided p-value of a standard normal z.
func NormalTwoSided(z float64) float64 {
	return math.Erfc(math.Abs(z) / math.Sqrt2)
}

// LogRate returns the log of a Poisson rate k/exposure and its variance,
// with Haldane's +0.5 so that a count of 0 has a finite log.
func LogRate(k int64, exposure float64) (logr, variance float64) {
	x := float64(k) + 0.5
	return math.Log(x / exposure), 1 / x
}

// Holm returns which of the p-values Holm's step-down procedure rejects at
// family-wise error rate alpha: the smallest p-value is compared with
// alpha/m, the next with alpha/(m-1), and so on until one is not rejected.
// It holds the family-wise rate at alpha under any dependence.
func Holm(p []float64, alpha float64) []bool {
	idx := make([]int, len(p))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(p[a], p[b]) })
	reject := make([]bool, len(p))
	for rank, i := range idx {
		if p[i] > alpha/float64(len(p)-rank) {
			break
		}
		reject[i] = true
	}
	return reject
}

// Median returns the weights w (summing to 1) such that Σ w_i x_i is the
// median of x: one element, or the mean of the two middle ones.
func Median(x []float64) []float64 {
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(x[a], x[b]) })
	w := make([]float64, len(x))
	if n := len(x); n%2 == 1 {
		w[idx[n/2]] = 1
	} else if n > 0 {
		w[idx[n/2-1]], w[idx[n/2]] = 0.5, 0.5
	}
	return w
}

// MedianOf returns the median of x: the middle element, or the mean of
// the two middle ones; 0 without values.
func MedianOf(x []float64) float64 {
	var m float64
	for i, w := range Median(x) {
		m += w * x[i]
	}
	return m
}

// NearestRank returns the nearest-rank q-quantile (0 < q ≤ 1) of sorted,
// which holds one value or more in ascending order.
func NearestRank(sorted []float64, q float64) float64 {
	i := int(q*float64(len(sorted))+0.999999999) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// ChiSquareUpper returns P(X ≥ q) for X chi-squared with k degrees of
// freedom, by the Wilson–Hilferty cube-root approximation (within 0.005 of
// the exact tail from k = 1 on at the 5% point).
func ChiSquareUpper(q float64, k int) float64 {
	if k <= 0 {
		return 1
	}
	if q <= 0 {
		return 1
	}
	kf := float64(k)
	s := 2 / (9 * kf)
	z := (math.Cbrt(q/kf) - (1 - s)) / math.Sqrt(s)
	return 0.5 * math.Erfc(z/math.Sqrt2)
}

// ExcessVariance estimates τ², the variance of the rows' log changes x
// beyond their known variances v: DerSimonian and Laird's moment estimator
// of random-effects meta-analysis, over the rows within 3.5 robust
// standard deviations (1.4826 × the median absolute deviation) of the
// median, so that a row that truly changed does not inflate it; raised by
// one standard error of a variance estimate, √(2/(n−1)), for the rows
// being few. With fewer than 4 rows there is no estimate: a warning.
func ExcessVariance(x, v []float64) Excess {
	if len(x) < 4 {
		return Excess{Warning: tooFew}
	}
	c := MedianOf(x)
	dev := make([]float64, len(x))
	for i := range x {
		dev[i] = math.Abs(x[i] - c)
	}
	limit := 3.5 * 1.4826 * MedianOf(dev)
	var sw, sw2, swx float64
	n := 0
	for i := range x {
		if dev[i] <= limit || limit == 0 {
			w := 1 / v[i]
			sw, sw2, swx = sw+w, sw2+w*w, swx+w*x[i]
			n++
		}
	}
	if n < 4 {
		return Excess{Rows: n, Warning: tooFew}
	}
	mu := swx / sw
	var q float64
	for i := range x {
		if dev[i] <= limit || limit == 0 {
			q += (x[i] - mu) * (x[i] - mu) / v[i]
		}
	}
	tau2 := max(0, (q-float64(n-1))/(sw-sw2/sw))
	return Excess{Tau2: tau2 * (1 + math.Sqrt(2/float64(n-1))), Rows: n}
}

// Excess is the result of [ExcessVariance]: τ² from Rows rows, or a
// Warning that says why there is no estimate (then Tau2 is 0).
type Excess struct {
	Tau2    float64
	Rows    int
	Warning string
}

const tooFew = "fewer than 4 rows near the median: too few to estimate the variance between runs"

// Power is the probability at which [Detectable] computes the smallest
// change a test sees.
const Power = 0.8

// Detectable returns the smallest log change a two-sided z test at level
// alpha detects with probability [Power], given the variance of the
// estimate: (z_{1−α/2} + z_power) · √variance.
func Detectable(variance, alpha float64) float64 {
	return (NormalQuantile(1-alpha/2) + NormalQuantile(Power)) * math.Sqrt(variance)
}
