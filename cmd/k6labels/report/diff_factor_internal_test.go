package report

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/k6labels/k6labels/cmd/k6labels/stats"
)

// plainOverlaps is the reference of [Diff.overlaps]: every eligible row
// checked against row i, the scenario × name rows searched for each.
func plainOverlaps(d *Diff, i int) map[int]bool {
	out := map[int]bool{}
	for _, j := range d.eligible {
		if j == i {
			out[j] = true
		}
	}
	if d.stat[i].elig || d.isReference(i) {
		return out
	}
	vi := d.labelValues(&d.Rows[i])
	_, hasName := vi[LabelName]
	var pairs []map[string]string
	if !hasName {
		for k := range d.Rows {
			if slices.Equal(d.Rows[k].By, ByScenarioName) {
				pairs = append(pairs, d.labelValues(&d.Rows[k]))
			}
		}
	}
	for _, j := range d.eligible {
		vj := d.labelValues(&d.Rows[j])
		agree, common := true, 0
		for label, v := range vi {
			if w, ok := vj[label]; ok {
				common++
				agree = agree && v == w
			}
		}
		if common == 0 && len(pairs) > 0 {
			agree = slices.ContainsFunc(pairs, func(p map[string]string) bool {
				return holdsAll(p, vi) && holdsAll(p, vj)
			})
		}
		if agree {
			out[j] = true
		}
	}
	return out
}

// plainFactor is the reference of [Diff.factorFor] by median or uniform:
// the weights computed anew over the rows left for each row.
func plainFactor(d *Diff, i int) factor {
	skip := map[int]bool{}
	if i >= 0 {
		skip = plainOverlaps(d, i)
	}
	var others []int
	for _, j := range d.eligible {
		if !skip[j] {
			others = append(others, j)
		}
	}
	need := 1
	if d.method == "median" {
		need = minMedianRows - 1
	}
	if len(others) < need {
		others = d.eligible
	}
	ls, vs := make([]float64, len(others)), make([]float64, len(others))
	for k, j := range others {
		ls[k], vs[k] = d.stat[j].l, d.stat[j].a+d.tau2
	}
	w := stats.PrecisionWeights(vs)
	if d.method == "median" {
		w = stats.NearMedianWeights(ls, vs)
	}
	var f factor
	for k, j := range others {
		f.log += w[k] * ls[k]
		f.a += w[k] * w[k] * d.stat[j].a
		f.b += w[k] * w[k] * d.tau2
	}
	return f
}

// plainTau2 is the reference of the between-run variance of [Diff.stats]
// for row skip (−1: none left out): the estimate made anew without it.
func plainTau2(d *Diff, skip int) float64 {
	var x, v []float64
	for _, j := range d.eligible {
		if j != skip {
			x, v = append(x, d.stat[j].l), append(v, d.stat[j].a)
		}
	}
	floor := 2 * d.RunSD * d.RunSD
	if e := stats.ExcessVariance(x, v); e.Warning == "" {
		return max(floor, e.Tau2)
	}
	return floor
}

// randomDiff returns a diff of random scenario, name and scenario × name
// rows (some without scenario × name rows, some with few samples).
func randomDiff(rng *rand.Rand) *Diff {
	row := func(by Grouping, values []string, samples, requests int64) *Row {
		return &Row{By: by, Values: values, Count: Count{Samples: samples, CPU: time.Duration(samples) * 10 * time.Millisecond}, Requests: requests}
	}
	d := &Diff{PerRequest: true, RunSD: DefaultRunSD}
	scenarios, names := 1+rng.IntN(3), 1+rng.IntN(30)
	pairs := rng.IntN(3) > 0
	for s := range scenarios {
		sv := []string{fmt.Sprintf("s%d", s)}
		n := int64(100 + rng.IntN(1000))
		d.Rows = append(d.Rows, DiffRow{By: ByScenario, Key: sv[0], Before: row(ByScenario, sv, n, 1000), After: row(ByScenario, sv, n+int64(rng.IntN(100)), 1000)})
	}
	for k := range names {
		nv := []string{fmt.Sprintf("/n%d", k)}
		speed := 1 + 0.3*rng.NormFloat64()*float64(rng.IntN(2))
		n := int64(rng.IntN(400))
		m := int64(float64(n)*speed*(1+0.1*rng.NormFloat64())) + int64(rng.IntN(3))
		d.Rows = append(d.Rows, DiffRow{By: ByName, Key: nv[0], Before: row(ByName, nv, n, 100), After: row(ByName, nv, max(m, 0), 100)})
		if !pairs {
			continue
		}
		for s := range scenarios {
			if rng.IntN(2) == 0 {
				v := []string{fmt.Sprintf("s%d", s), nv[0]}
				d.Rows = append(d.Rows, DiffRow{By: ByScenarioName, Key: v[0] + " " + v[1], Before: row(ByScenarioName, v, n/2, 50), After: row(ByScenarioName, v, m/2, 50)})
			}
		}
	}
	return d
}

// TestFactorForProperty: on random diffs, every row's between-run variance,
// the rows it overlaps and its machine-speed factor (median and uniform) equal the plain
// computation's, which makes each anew from the rows left.
func TestFactorForProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	near := func(got, want float64) bool {
		return got == want || math.Abs(got-want) <= 1e-9*max(math.Abs(want), 1e-12)
	}
	for trial := range 300 {
		for _, method := range []string{"median", "uniform"} {
			d := randomDiff(rng)
			d.stats(2)
			if len(d.eligible) < 2 {
				continue
			}
			if !near(d.tau2, plainTau2(d, -1)) {
				t.Fatalf("trial %d: τ² %v, want %v", trial, d.tau2, plainTau2(d, -1))
			}
			for i := range d.Rows {
				want := d.tau2
				if d.stat[i].elig {
					want = plainTau2(d, i)
				}
				if !near(d.stat[i].tau2, want) {
					t.Fatalf("trial %d: row %s τ² %v, want %v", trial, d.Rows[i].Key, d.stat[i].tau2, want)
				}
			}
			d.method = method
			for i := -1; i < len(d.Rows); i++ {
				if i >= 0 && !d.stat[i].ok {
					continue
				}
				if i >= 0 {
					got, want := slices.Sorted(slices.Values(d.overlaps(i))), slices.Sorted(maps.Keys(plainOverlaps(d, i)))
					if !slices.Equal(got, want) {
						t.Fatalf("trial %d: row %s overlaps %v, want %v", trial, d.Rows[i].Key, got, want)
					}
				}
				got, want := d.factorFor(i), plainFactor(d, i)
				if !near(got.log, want.log) || !near(got.a, want.a) || !near(got.b, want.b) {
					t.Fatalf("trial %d (%s): row %d factor %+v, want %+v", trial, method, i, got, want)
				}
			}
		}
	}
}
