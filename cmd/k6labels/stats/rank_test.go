package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestMannWhitney: exact p-values against the counted distribution's known
// values, and the normal approximation close to the exact one.
func TestMannWhitney(t *testing.T) {
	for _, c := range []struct {
		x, y []float64
		p    float64
	}{
		{[]float64{1, 2, 3}, []float64{4, 5, 6}, 0.1},           // 2 · 1/20
		{[]float64{4, 5, 6}, []float64{1, 2, 3}, 0.1},           // the other way
		{[]float64{1, 2, 3, 4}, []float64{5, 6, 7, 8}, 2. / 70}, // 2 · 1/C(8,4)
		{[]float64{1, 3}, []float64{2, 4}, 2. / 3},              // U = 1: P(U ≤ 1) = 2/6
	} {
		if p := MannWhitney(c.x, c.y); math.Abs(p-c.p) > 1e-12 {
			t.Errorf("MannWhitney(%v, %v) = %v, want %v", c.x, c.y, p, c.p)
		}
	}
	rng := rand.New(rand.NewPCG(1, 1))
	x, y := make([]float64, 30), make([]float64, 30)
	for i := range x {
		x[i], y[i] = rng.NormFloat64(), rng.NormFloat64()+0.5
	}
	exact := MannWhitney(x, y)
	y[0] = x[0] // a tie: the normal approximation
	approx := MannWhitney(x, y)
	if math.Abs(exact-approx) > 0.02 {
		t.Errorf("exact %v, normal approximation %v", exact, approx)
	}
	if got, want := MinRankP(6, 6), 2./924; math.Abs(got-want) > 1e-15 {
		t.Errorf("MinRankP(6, 6) = %v, want %v", got, want)
	}
}
