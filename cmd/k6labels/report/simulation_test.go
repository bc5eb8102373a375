package report

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// demoRow is one scenario × name row of a 20 s run of the demo's load: its
// requests and expected CPU samples at 100 Hz, from the fixtures' local/
// run (real k6 against the demo service, 20 s).
type demoRow struct {
	scenario, name string
	requests       int64
	samples        float64
}

var demoRun = []demoRow{
	{"rush_hour", "http://h:1/car", 3316, 1724},
	{"rush_hour", "http://h:1/scooter", 1658, 566},
	{"off_peak", "http://h:1/scooter", 1597, 612},
	{"off_peak", "http://h:1/bike", 1597, 245},
	{"off_peak", "http://h:1/", 1596, 1},
}

// poisson draws a Poisson count of mean lambda by counting exponential
// arrivals in [0, lambda): exact; from a mean of 400 on, the normal
// approximation (skewness 1/√λ ≤ 0.05), which keeps the tests fast.
func poisson(rng *rand.Rand, lambda float64) int64 {
	if lambda >= 400 {
		return max(0, int64(math.Round(lambda+math.Sqrt(lambda)*rng.NormFloat64())))
	}
	var n int64
	for t := rng.ExpFloat64(); t < lambda; t += rng.ExpFloat64() {
		n++
	}
	return n
}

// sim is how simulated runs are drawn: the per-request spread of CPU
// (cv, coefficient of variation of one request's CPU), the between-run
// spread of each scenario × name row (sd, on the log scale, per run), a
// common machine factor, and per-name factors (a costlier route).
type sim struct {
	rows    []demoRow
	cv, sd  float64
	machine float64
	factor  map[string]float64
}

// manyRoutes returns n routes of one scenario, 1,600 requests and 500
// samples each (a 20 s run of a service with n similar routes).
func manyRoutes(n int) []demoRow {
	rows := make([]demoRow, n)
	for i := range rows {
		rows[i] = demoRow{"s", fmt.Sprintf("http://h:1/r%d", i), 1600, 500}
	}
	return rows
}

// draw draws one run: each scenario × name row's CPU is the sum of its
// requests' CPU (normal, as a sum of many requests of spread cv), times
// the machine factor, the route's factor and a between-run factor
// exp(sd·N(0,1)); its samples are Poisson of that.
func (s sim) draw(rng *rand.Rand) *Report {
	return s.drawWith(func(lambda float64) int64 { return poisson(rng, lambda) }, rng)
}

// drawWith draws a run with count(mean) samples per row; rng (nil: none)
// draws the spreads.
func (s sim) drawWith(count func(float64) int64, rng *rand.Rand) *Report {
	rows := s.rows
	if rows == nil {
		rows = demoRun
	}
	machine := s.machine
	if machine == 0 {
		machine = 1
	}
	r := &Report{HasRequests: true}
	sc, nm := map[string]*Row{}, map[string]*Row{}
	for _, d := range rows {
		f := s.factor[d.name]
		if f == 0 {
			f = 1
		}
		lambda := d.samples * f * machine
		if rng != nil {
			lambda *= math.Exp(s.sd * rng.NormFloat64())
			lambda = max(0, lambda*(1+s.cv/math.Sqrt(float64(d.requests))*rng.NormFloat64()))
		}
		k := count(lambda)
		c := Count{Samples: k, CPU: time.Duration(k) * 10 * time.Millisecond}
		r.Rows = append(r.Rows, Row{By: ByScenarioName, Values: []string{d.scenario, d.name}, Count: c, Requests: d.requests})
		for _, x := range []struct {
			m   map[string]*Row
			key string
			by  Grouping
		}{{sc, d.scenario, ByScenario}, {nm, d.name, ByName}} {
			if x.m[x.key] == nil {
				x.m[x.key] = &Row{By: x.by, Values: []string{x.key}}
			}
			x.m[x.key].Count = x.m[x.key].Plus(c)
			x.m[x.key].Requests += d.requests
		}
		r.K6 = r.K6.Plus(c)
		r.Requests += d.requests
	}
	for _, m := range []map[string]*Row{sc, nm} {
		for _, row := range m {
			r.Rows = append(r.Rows, *row)
		}
	}
	return r
}

// drawExact is a run with exactly the rows' samples: no noise.
func (s sim) drawExact() *Report {
	return s.drawWith(func(lambda float64) int64 { return int64(math.Round(lambda)) }, nil)
}

// simulatedReport draws one run of the demo's rows with Poisson samples
// only, the name rows' CPU times factor[name].
func simulatedReport(rng *rand.Rand, factor map[string]float64) *Report {
	return sim{factor: factor}.draw(rng)
}

// flaggedRows returns the rows of d whose verdict is worse or better.
func flaggedRows(d *Diff) []string {
	var out []string
	for _, dr := range d.Rows {
		if dr.Verdict == Worse || dr.Verdict == Better {
			out = append(out, strings.Join(dr.By, ",")+"="+dr.Key)
		}
	}
	return out
}

// TestDiffFalseAlarmRateSpread: no change, but requests' CPU varies (cv 1,
// cv 2) and each row's CPU per request moves between runs (σ 0.05 per
// run): the diff flags some row in at most alpha of the pairs, for the
// demo's rows and for 30 routes.
func TestDiffFalseAlarmRateSpread(t *testing.T) {
	const pairs, alpha = 300, 0.05
	limit := alpha + 3*math.Sqrt(alpha*(1-alpha)/pairs)
	for i, c := range []struct {
		name string
		s    sim
	}{
		{"demo, cv 1", sim{cv: 1}},
		{"demo, cv 2", sim{cv: 2}},
		{"demo, σ 0.05", sim{sd: 0.05}},
		{"demo, cv 2 and σ 0.05", sim{cv: 2, sd: 0.05}},
		{"30 routes, cv 2 and σ 0.05", sim{rows: manyRoutes(30), cv: 2, sd: 0.05}},
		{"30 routes, σ 0.08 (above the floor: estimated)", sim{rows: manyRoutes(30), sd: 0.08}},
	} {
		rng := rand.New(rand.NewPCG(uint64(10+i), 7))
		alarms := 0
		for range pairs {
			d, err := NewDiff(c.s.draw(rng), c.s.draw(rng), DiffOptions{Alpha: alpha})
			if err != nil {
				t.Fatal(err)
			}
			if len(flaggedRows(d)) > 0 {
				alarms++
			}
		}
		rate := float64(alarms) / pairs
		t.Logf("%s: %d of %d no-change pairs flagged a row (%.1f%%; alpha %.0f%%)", c.name, alarms, pairs, 100*rate, 100*alpha)
		if rate > limit {
			t.Errorf("%s: false alarm rate %.3f above alpha %.2f (limit %.3f)", c.name, rate, alpha, limit)
		}
	}
}

// TestDiffUniformShift: every route 20% costlier (a slower machine) is one
// finding, with the demo's 3 routes as with 30: no row is worse, the
// common change is reported, and with 3 routes (no median normalization)
// the gate sees it as inconclusive, not as a regression.
func TestDiffUniformShift(t *testing.T) {
	const pairs = 300
	for i, c := range []struct {
		name string
		s    sim
	}{
		{"demo", sim{sd: 0.03}},
		{"30 routes", sim{rows: manyRoutes(30), sd: 0.03}},
	} {
		rng := rand.New(rand.NewPCG(uint64(20+i), 7))
		worse, found, gated := 0, 0, 0
		for range pairs {
			after := c.s
			after.machine = 1.2
			d, err := NewDiff(c.s.draw(rng), after.draw(rng), DiffOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(d.Regressions(0.10)) > 0 {
				worse++
			}
			if d.Uniform != nil && math.Abs(d.Uniform.Change-0.2) < 0.1 {
				found++
			}
			if d.UniformAbove(0.10) {
				gated++
			}
		}
		t.Logf("%s, every route +20%%: a regression above 10%% in %d of %d pairs; the common change found in %d; gate inconclusive %d", c.name, worse, pairs, found, gated)
		if worse > pairs/20 {
			t.Errorf("%s: a uniform +20%% read as a regression in %d of %d pairs", c.name, worse, pairs)
		}
		if found < pairs*9/10 {
			t.Errorf("%s: the common +20%% found in %d of %d pairs, want ≥ 90%%", c.name, found, pairs)
		}
		if c.s.rows == nil && gated < pairs*9/10 {
			t.Errorf("%s: the gate saw the common +20%% as inconclusive in %d of %d pairs, want ≥ 90%%", c.name, gated, pairs)
		}
	}
}

// TestDiffOneRouteRegression: one route costlier beside unchanged ones (σ
// 0.03 between runs) is found: +50% on the route with most of the CPU of
// the demo's 3 routes, +70% on one of 30 (61 rows tested, 500 samples a
// row); no other route is flagged beyond alpha,
// and it is not read as a common change.
func TestDiffOneRouteRegression(t *testing.T) {
	const pairs = 300
	for i, c := range []struct {
		name, route string
		s           sim
		factor      float64
	}{
		{"demo", "http://h:1/car", sim{sd: 0.03}, 1.5},
		{"30 routes", "http://h:1/r7", sim{rows: manyRoutes(30), sd: 0.03}, 1.7},
	} {
		rng := rand.New(rand.NewPCG(uint64(30+i), 7))
		found, others, uniform := 0, 0, 0
		for range pairs {
			after := c.s
			after.factor = map[string]float64{c.route: c.factor}
			d, err := NewDiff(c.s.draw(rng), after.draw(rng), DiffOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, dr := range d.Rows {
				if !slices.Equal(dr.By, ByName) {
					continue
				}
				switch {
				case dr.Key == URLPath(c.route) && dr.Verdict == Worse:
					found++
				case dr.Key != URLPath(c.route) && (dr.Verdict == Worse || dr.Verdict == Better):
					others++
				}
			}
			if d.Uniform != nil {
				uniform++
			}
		}
		t.Logf("%s, %s %s: found in %d of %d pairs; another route flagged %d times; read as common %d", c.name, c.route, Change(c.factor-1), found, pairs, others, uniform)
		if found < pairs*95/100 {
			t.Errorf("%s: %s on %s found in %d of %d pairs, want ≥ 95%%", c.name, Change(c.factor-1), c.route, found, pairs)
		}
		if others > pairs/20 || uniform > pairs/20 {
			t.Errorf("%s: another route flagged %d times, a common change %d times, in %d pairs", c.name, others, uniform, pairs)
		}
	}
}

// TestDiffInconclusive: an unchanged demo pair at 20 s cannot vouch for
// 10% on /bike: its verdict is inconclusive, not same. Without the
// between-run spread the text's "runs N× as long" is right: runs that
// long reach a smallest detectable change of 10%; with it no length is.
func TestDiffInconclusive(t *testing.T) {
	// Without the "/" row, whose 1 sample would join the tested rows in a
	// longer run and change the family's level.
	saved := demoRun
	defer func() { demoRun = saved }()
	demoRun = slices.DeleteFunc(slices.Clone(demoRun), func(r demoRow) bool { return r.name == "http://h:1/" })
	d, err := NewDiff(exactReport(nil), exactReport(nil), DiffOptions{Detect: 0.10, RunSD: -1})
	if err != nil {
		t.Fatal(err)
	}
	var bike *DiffRow
	for i := range d.Rows {
		if slices.Equal(d.Rows[i].By, ByName) && d.Rows[i].Key == "/bike" {
			bike = &d.Rows[i]
		}
	}
	if bike == nil || bike.Verdict != Inconclusive || !(bike.Longer > 1) || math.IsInf(bike.Longer, 1) {
		t.Fatalf("/bike: %+v; want inconclusive, testable with longer runs", bike)
	}
	t.Logf("/bike: smallest detectable %s; %s", Change(bike.Detectable), d.TestableAfter(bike))
	// Runs Longer times as long: every count scaled.
	short := demoRun
	demoRun = slices.Clone(demoRun)
	for i := range demoRun {
		demoRun[i].requests = int64(math.Ceil(float64(demoRun[i].requests) * bike.Longer))
		demoRun[i].samples *= bike.Longer
	}
	d2, err := NewDiff(exactReport(nil), exactReport(nil), DiffOptions{Detect: 0.10, RunSD: -1})
	if err != nil {
		t.Fatal(err)
	}
	for _, dr := range d2.Rows {
		if slices.Equal(dr.By, ByName) && dr.Key == "/bike" {
			if dr.Detectable > 0.101 || dr.Verdict == Inconclusive {
				t.Errorf("/bike in runs %.1f× as long: smallest detectable %s, verdict %s; want ≤ 10%%", bike.Longer, Change(dr.Detectable), dr.Verdict)
			}
		}
	}
	// With the default between-run spread no length is enough for 10%.
	demoRun = short
	d3, err := NewDiff(exactReport(nil), exactReport(nil), DiffOptions{Detect: 0.10})
	if err != nil {
		t.Fatal(err)
	}
	for _, dr := range d3.Inconclusive() {
		if !math.IsInf(dr.Longer, 1) || !strings.Contains(d3.TestableAfter(&dr), "no run length is enough") {
			t.Errorf("%s: longer %v, %q; want no run length enough at σ 5%%", dr.Key, dr.Longer, d3.TestableAfter(&dr))
		}
	}
	if len(d3.Inconclusive()) == 0 {
		t.Error("no inconclusive row at σ 5% and 10%")
	}
}

// TestDiffFalseAlarmRate: between runs with no change, the diff flags some
// row (worse or better) in at most alpha of the pairs.
func TestDiffFalseAlarmRate(t *testing.T) {
	const pairs, alpha = 3000, 0.05
	rng := rand.New(rand.NewPCG(1, 2))
	alarms := 0
	for range pairs {
		d, err := NewDiff(simulatedReport(rng, nil), simulatedReport(rng, nil), DiffOptions{Alpha: alpha})
		if err != nil {
			t.Fatal(err)
		}
		for _, dr := range d.Rows {
			if dr.Verdict == Worse || dr.Verdict == Better {
				alarms++
				break
			}
		}
	}
	rate := float64(alarms) / pairs
	// alpha plus three Monte Carlo standard errors.
	limit := alpha + 3*math.Sqrt(alpha*(1-alpha)/pairs)
	t.Logf("no change: %d of %d pairs flagged a row (%.2f%%; alpha %.0f%%)", alarms, pairs, 100*rate, 100*alpha)
	if rate > limit {
		t.Errorf("false alarm rate %.3f above alpha %.2f (limit %.3f)", rate, alpha, limit)
	}
}

// TestDiffHeavyRouteNotCommon: /car, the route with most of the demo's CPU,
// +30% beside routes that did not change is not read as every route moving
// together, which would judge /car against its own change: a common change
// needs the other rows to show it without any one of them.
func TestDiffHeavyRouteNotCommon(t *testing.T) {
	const pairs = 300
	for i, sd := range []float64{0.03, 0.05} {
		rng := rand.New(rand.NewPCG(uint64(40+i), 7))
		uniform, worse := 0, 0
		for range pairs {
			s := sim{sd: sd}
			after := s
			after.factor = map[string]float64{"http://h:1/car": 1.3}
			d, err := NewDiff(s.draw(rng), after.draw(rng), DiffOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if d.Uniform != nil {
				uniform++
			}
			for _, dr := range d.Rows {
				if slices.Equal(dr.By, ByName) && dr.Key == "/car" && dr.Verdict == Worse {
					worse++
				}
			}
		}
		t.Logf("between-run sd %.2f, /car +30%%: read as a common change in %d of %d pairs, /car worse in %d", sd, uniform, pairs, worse)
		if uniform > pairs/20 {
			t.Errorf("between-run sd %.2f: /car +30%% read as every route moving together in %d of %d pairs", sd, uniform, pairs)
		}
	}
}
