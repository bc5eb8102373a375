package report

import (
	"math"

	"github.com/k6labels/k6labels/cmd/k6labels/stats"
)

// A mixPart is one part of a row's requests (its scenario × name row, its
// query string): the before run's samples and requests, the after run's
// requests.
type mixPart struct {
	samples, before, after float64
	// factor is what the part's own query-string mix changes its CPU per
	// request by, when known; 0 means 1.
	factor float64
}

// mixShift returns the log change of a row's CPU per request that the
// before run's CPU per request of each part gives with the after run's
// requests, each times its factor (ok: two parts or more, or one with a
// factor, with samples and after requests), and
// whether it explains the change l (variance v): same direction, and
// the remainder within noise at level.
func mixShift(parts []mixPart, l, v, level float64) (mix float64, explains, ok bool) {
	var k1, n1, n2, expect float64
	scaled := false
	for _, p := range parts {
		f := p.factor
		if f == 0 {
			f = 1
		}
		scaled = scaled || f != 1
		k1, n1, n2 = k1+p.samples, n1+p.before, n2+p.after
		expect += p.samples / p.before * p.after * f
	}
	if len(parts) < 2 && !scaled || k1 == 0 || n2 == 0 || expect == 0 {
		return 0, false, false
	}
	mix = math.Log((expect / n2) / (k1 / n1))
	if mix*l <= 0 {
		return mix, false, true
	}
	return mix, math.Abs(l-mix)/math.Sqrt(v) < stats.NormalQuantile(1-level/2), true
}
