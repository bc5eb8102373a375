package stats

import "math"

// NearMedianWeights returns the weights of a machine-speed factor by the
// median: the median of x finds the rows that did not change; the factor
// is the precision-weighted mean (variances v) of the median row(s) and
// the rows within 3 of their own standard errors of it.
func NearMedianWeights(x, v []float64) []float64 {
	w := Median(x)
	m := MedianOf(x)
	out := make([]float64, len(x))
	var sum float64
	for j := range x {
		if nearMedian(x[j], v[j], m) || w[j] > 0 {
			out[j] = 1 / v[j]
			sum += out[j]
		}
	}
	for j := range out {
		out[j] /= sum
	}
	return out
}

// nearMedian tells whether x (variance v) is within 3 of its standard
// errors of the median m.
func nearMedian(x, v, m float64) bool {
	return math.Abs(x-m) <= 3*math.Sqrt(v)
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
