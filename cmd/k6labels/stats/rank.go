package stats

import (
	"math"
	"slices"
)

// RunsNeeded returns the runs per side at which the rank test sees a
// change of detect with [Power] at level, given the runs' spread (sd of
// log CPU per request), and its smallest p-value reaches level.
func RunsNeeded(spread, level, detect float64) int {
	n := 2
	for MinRankP(n, n) > level {
		n++
	}
	if spread > 0 {
		k := Detectable(1, level) / math.Log1p(detect)
		n = max(n, int(math.Ceil(2*math.Pi/3*spread*spread*k*k)))
	}
	return n
}

// MinRankP is the smallest two-sided p-value of the exact Mann–Whitney
// test with n1 and n2 runs: 2 / C(n1+n2, n1).
func MinRankP(n1, n2 int) float64 {
	c := 1.0
	for k := 1; k <= n1; k++ {
		c = c * float64(n2+k) / float64(k)
	}
	return min(1, 2/c)
}

// MannWhitney returns the two-sided p-value of the Mann–Whitney U test of
// x against y: exact (the distribution of U counted) without ties and with
// up to 50 values per side, else the normal approximation with the tie
// correction.
func MannWhitney(x, y []float64) float64 {
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
	return min(1, NormalTwoSided(max(zz, 0)))
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

// Mean returns the mean of x.
func Mean(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// MeanVariance returns the mean of x and its sample variance (n − 1 in
// the denominator): 0 and 0 without values, the variance 0 with one.
func MeanVariance(x []float64) (mean, variance float64) {
	if len(x) == 0 {
		return 0, 0
	}
	mean = Mean(x)
	if len(x) > 1 {
		variance = SumSquares(x) / float64(len(x)-1)
	}
	return mean, variance
}

// SumSquares returns Σ (x − mean x)².
func SumSquares(x []float64) float64 {
	m := Mean(x)
	var s float64
	for _, v := range x {
		s += (v - m) * (v - m)
	}
	return s
}
