package stats

import "math"

// NearMedianWeights returns the weights of a machine-speed factor by the
// median: the median of x finds the rows that did not change; the factor
// is the precision-weighted mean (variances v) of the median row(s) and
// the rows within 3 of their own standard errors of it.
func NearMedianWeights(x, v []float64) []float64 {
	w := Median(x)
	var m float64
	for j := range x {
		m += w[j] * x[j]
	}
	out := make([]float64, len(x))
	var sum float64
	for j := range x {
		if math.Abs(x[j]-m) <= 3*math.Sqrt(v[j]) || w[j] > 0 {
			out[j] = 1 / v[j]
			sum += out[j]
		}
	}
	for j := range out {
		out[j] /= sum
	}
	return out
}

// PrecisionWeights returns weights proportional to 1/v, summing to 1.
func PrecisionWeights(v []float64) []float64 {
	out := make([]float64, len(v))
	var sum float64
	for j := range v {
		out[j] = 1 / v[j]
		sum += out[j]
	}
	for j := range out {
		out[j] /= sum
	}
	return out
}
