package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// agree tells whether got is within a relative 1e-9 of want.
func agree(got, want float64) bool {
	return got == want || math.Abs(got-want) <= 1e-9*max(math.Abs(want), 1e-12)
}

// plainEstimate is the estimate of weights w over x, part: the plain sums
// [LeaveOut] must agree with.
func plainEstimate(w, x, part []float64) Estimate {
	var e Estimate
	for j := range w {
		e.Mean += w[j] * x[j]
		e.Part += w[j] * w[j] * part[j]
		e.SumW2 += w[j] * w[j]
	}
	return e
}

// randomSet returns n values with ties (rounded to a few levels) and
// variances spread over three orders of magnitude.
func randomSet(rng *rand.Rand, n int) (x, v, part []float64) {
	for range n {
		x = append(x, math.Round(rng.NormFloat64()*8)/40)
		a := math.Pow(10, -1-3*rng.Float64())
		v, part = append(v, a+0.005), append(part, a)
	}
	return x, v, part
}

// TestLeaveOutProperty: on random sets with random elements left out,
// NearMedian and Precision equal NearMedianWeights and PrecisionWeights
// over the elements left, summed plainly.
func TestLeaveOutProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 2000 {
		n := 1 + rng.IntN(40)
		x, v, part := randomSet(rng, n)
		s := NewLeaveOut(x, v, part)
		for range 5 {
			var skip []int
			for j := range n {
				if rng.IntN(4) == 0 && len(skip) < n-1 {
					skip = append(skip, j)
				}
			}
			if rng.IntN(3) == 0 && len(skip) > 0 {
				skip = append(skip, skip[0]) // a repeat counts once
			}
			var kx, kv, kp []float64
			for j := range n {
				if !slices.Contains(skip, j) {
					kx, kv, kp = append(kx, x[j]), append(kv, v[j]), append(kp, part[j])
				}
			}
			want := plainEstimate(NearMedianWeights(kx, kv), kx, kp)
			if got := s.NearMedian(skip); !agree(got.Mean, want.Mean) || !agree(got.Part, want.Part) || !agree(got.SumW2, want.SumW2) {
				t.Fatalf("trial %d: NearMedian(%v) of %v = %+v, want %+v", trial, skip, x, got, want)
			}
			want = plainEstimate(PrecisionWeights(kv), kx, kp)
			if got := s.Precision(skip); !agree(got.Mean, want.Mean) || !agree(got.Part, want.Part) || !agree(got.SumW2, want.SumW2) {
				t.Fatalf("trial %d: Precision(%v) of %v = %+v, want %+v", trial, skip, x, got, want)
			}
		}
	}
}

// TestExcessVarianceLeaveOneOutProperty: on random sets, each element's
// estimate equals ExcessVariance of the others.
func TestExcessVarianceLeaveOneOutProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 2000 {
		n := 1 + rng.IntN(30)
		x, v, _ := randomSet(rng, n)
		if trial%3 == 0 {
			for j := range x {
				x[j] *= 4 // spread beyond the variances: τ² > 0
			}
		}
		got := ExcessVarianceLeaveOneOut(x, v)
		for i := range x {
			kx, kv := slices.Delete(slices.Clone(x), i, i+1), slices.Delete(slices.Clone(v), i, i+1)
			want := ExcessVariance(kx, kv)
			if got[i].Rows != want.Rows || got[i].Warning != want.Warning || !agree(got[i].Tau2, want.Tau2) {
				t.Fatalf("trial %d: without %d of %v: %+v, want %+v", trial, i, x, got[i], want)
			}
		}
	}
}

// TestLeaveOutDominant: leaving out an element that holds nearly all the
// weight sums the rest anew, not as a difference of nearly equal sums.
func TestLeaveOutDominant(t *testing.T) {
	x := []float64{0.5, 0.1, 0.1, 0.1, 0.1, 0.2}
	v := []float64{1e-14, 1, 1, 1, 1, 1}
	s := NewLeaveOut(x, v, v)
	want := plainEstimate(PrecisionWeights(v[1:]), x[1:], v[1:])
	if got := s.Precision([]int{0}); !agree(got.Mean, want.Mean) || !agree(got.Part, want.Part) || !agree(got.SumW2, want.SumW2) {
		t.Errorf("Precision without the dominant element = %+v, want %+v", got, want)
	}
}
