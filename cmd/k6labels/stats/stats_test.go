package stats

import (
	"math"
	"slices"
	"testing"
)

// TestPoissonInterval: Byar's interval within 1% of the exact Garwood one
// (k = 10: 4.795–18.39 at 95%), and [0, upper] for k = 0.
func TestPoissonInterval(t *testing.T) {
	low, high := PoissonInterval(10, 0.95)
	if math.Abs(low/4.795-1) > 0.01 || math.Abs(high/18.39-1) > 0.01 {
		t.Errorf("k=10: %v–%v, want 4.795–18.39 within 1%%", low, high)
	}
	if low, high := PoissonInterval(0, 0.95); low != 0 || math.Abs(high/3.689-1) > 0.01 {
		t.Errorf("k=0: %v–%v, want 0–3.689", low, high)
	}
}

// TestHolm: the smallest p-value against α/3, the next against α/2; the
// procedure stops at the first it does not reject.
func TestHolm(t *testing.T) {
	if got, want := Holm([]float64{0.01, 0.04, 0.03}, 0.05), []bool{true, false, false}; !slices.Equal(got, want) {
		t.Errorf("Holm = %v, want %v", got, want)
	}
	if got, want := Holm([]float64{0.01, 0.04, 0.02}, 0.05), []bool{true, true, true}; !slices.Equal(got, want) {
		t.Errorf("Holm = %v, want %v", got, want)
	}
}

// TestExcessVariance: no estimate, with a warning, from 3 rows; rows that
// spread by their own variances only give τ² near 0, rows that spread more
// a positive τ².
func TestExcessVariance(t *testing.T) {
	if e := ExcessVariance([]float64{0, 0.1, 0.2}, []float64{1, 1, 1}); e.Warning == "" || e.Tau2 != 0 {
		t.Errorf("3 rows: %+v, want a warning and no estimate", e)
	}
	x := []float64{-0.3, -0.1, 0, 0.1, 0.3, 0.2, -0.2}
	v := []float64{1e-4, 1e-4, 1e-4, 1e-4, 1e-4, 1e-4, 1e-4}
	if e := ExcessVariance(x, v); e.Warning != "" || e.Tau2 < 0.01 || e.Rows != 7 {
		t.Errorf("spread rows: %+v, want τ² ≥ 0.01 from 7 rows", e)
	}
}

// TestMedianOf: the middle value, the mean of the two middle ones, 0
// without values; the input's order does not matter.
func TestMedianOf(t *testing.T) {
	for _, c := range []struct {
		x    []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := MedianOf(c.x); got != c.want {
			t.Errorf("MedianOf(%v) = %v, want %v", c.x, got, c.want)
		}
	}
}

// TestMeanVariance: the sample variance divides by n − 1; no values give
// 0 and 0, one value a variance of 0.
func TestMeanVariance(t *testing.T) {
	for _, c := range []struct {
		x       []float64
		m, want float64
	}{{nil, 0, 0}, {[]float64{2}, 2, 0}, {[]float64{1, 2, 3, 6}, 3, 14. / 3}} {
		if m, v := MeanVariance(c.x); m != c.m || math.Abs(v-c.want) > 1e-15 {
			t.Errorf("MeanVariance(%v) = %v, %v; want %v, %v", c.x, m, v, c.m, c.want)
		}
	}
}

// TestNearestRank: the smallest value with at least a q share of the
// values at or below it.
func TestNearestRank(t *testing.T) {
	s := []float64{10, 20, 30, 40, 50, 60, 70, 80, 90, 100}
	for q, want := range map[float64]float64{0.5: 50, 0.95: 100, 0.99: 100, 0.1: 10, 0.11: 20, 0.001: 10} {
		if got := NearestRank(s, q); got != want {
			t.Errorf("NearestRank(%v) = %v, want %v", q, got, want)
		}
	}
	if got := NearestRank([]float64{7}, 0.99); got != 7 {
		t.Errorf("NearestRank of one value = %v, want 7", got)
	}
}
