package report

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
	z := normalQuantile(1 - (1-confidence)/2)
	if k > 0 {
		x := float64(k)
		low = x * math.Pow(1-1/(9*x)-z/(3*math.Sqrt(x)), 3)
	}
	x := float64(k + 1)
	high = x * math.Pow(1-1/(9*x)+z/(3*math.Sqrt(x)), 3)
	return max(low, 0), high
}

// normalQuantile returns the p-quantile of the standard normal distribution.
func normalQuantile(p float64) float64 {
	return math.Sqrt2 * math.Erfinv(2*p-1)
}

// normalTwoSided returns the two-sided p-value of a standard normal z.
func normalTwoSided(z float64) float64 {
	return math.Erfc(math.Abs(z) / math.Sqrt2)
}

// logRate returns the log of a Poisson rate k/exposure and its variance,
// with Haldane's +0.5 so that a count of 0 has a finite log.
func logRate(k int64, exposure float64) (logr, variance float64) {
	x := float64(k) + 0.5
	return math.Log(x / exposure), 1 / x
}

// holm returns which of the p-values Holm's step-down procedure rejects at
// family-wise error rate alpha: the smallest p-value is compared with
// alpha/m, the next with alpha/(m-1), and so on until one is not rejected.
// It holds the family-wise rate at alpha under any dependence.
func holm(p []float64, alpha float64) []bool {
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

// median returns the weights w (summing to 1) such that Σ w_i x_i is the
// median of x: one element, or the mean of the two middle ones.
func median(x []float64) []float64 {
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
