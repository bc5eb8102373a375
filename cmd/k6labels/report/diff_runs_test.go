package report

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// runsOf draws n runs of s, each with its own machine factor exp(0.02·N).
func runsOf(rng *rand.Rand, s sim, n int) []*Report {
	out := make([]*Report, n)
	for i := range out {
		r := s
		r.machine = math.Exp(0.02 * rng.NormFloat64())
		out[i] = r.draw(rng)
	}
	return out
}

// TestDiffRunsRankTest: 8 runs per side, each on a machine of its own
// speed (σ 2%), rows also spread between runs (σ 2%), requests' CPU cv 1.
// No change: some row flagged in at most alpha of the comparisons; /car
// +10%: found in at least 80%, no other route flagged beyond alpha. With
// 2 runs per side every row is inconclusive and the text says how many
// runs per side would do.
func TestDiffRunsRankTest(t *testing.T) {
	const trials, alpha = 150, 0.05
	s := sim{cv: 1, sd: 0.02}
	rng := rand.New(rand.NewPCG(50, 7))
	alarms, found, others := 0, 0, 0
	for range trials {
		d, err := NewDiffRuns(runsOf(rng, s, 8), runsOf(rng, s, 8), DiffOptions{Alpha: alpha, Normalize: "none"})
		if err != nil {
			t.Fatal(err)
		}
		if !d.RankTest {
			t.Fatal("8 runs per side, no rank test")
		}
		if len(flaggedRows(d)) > 0 {
			alarms++
		}
		after := s
		after.factor = map[string]float64{"http://h:1/car": 1.1}
		base := runsOf(rng, s, 8)
		d, err = NewDiffRuns(base, runsOf(rng, after, 8), DiffOptions{Alpha: alpha, Normalize: "none"})
		if err != nil {
			t.Fatal(err)
		}
		for _, dr := range d.Rows {
			if !slices.Equal(dr.By, ByName) {
				continue
			}
			switch {
			case dr.Key == "/car" && dr.Verdict == Worse:
				found++
			case dr.Key != "/car" && (dr.Verdict == Worse || dr.Verdict == Better):
				others++
			}
		}
	}
	limit := alpha + 3*math.Sqrt(alpha*(1-alpha)/trials)
	t.Logf("8 runs per side: no change flagged in %d of %d; /car +10%% found in %d, another route flagged %d times", alarms, trials, found, others)
	if float64(alarms)/trials > limit {
		t.Errorf("no change: flagged in %d of %d comparisons, above alpha", alarms, trials)
	}
	if found < trials*8/10 {
		t.Errorf("/car +10%% found in %d of %d comparisons, want ≥ 80%%", found, trials)
	}
	if float64(others)/trials > limit {
		t.Errorf("another route flagged in %d of %d comparisons", others, trials)
	}

	d, err := NewDiffRuns(runsOf(rng, s, 2), runsOf(rng, s, 2), DiffOptions{Alpha: alpha, Normalize: "none"})
	if err != nil {
		t.Fatal(err)
	}
	for _, dr := range d.Rows {
		if slices.Equal(dr.By, ByName) && dr.Key == "/car" {
			if dr.Verdict != Inconclusive || dr.RunsNeeded < 6 {
				t.Errorf("/car with 2 runs per side: %s, %d runs needed; want inconclusive, 6 or more", dr.Verdict, dr.RunsNeeded)
			}
			t.Logf("/car, 2 runs per side: %s", d.TestableAfter(&dr))
		}
	}
}

// exactReport is a run of the demo's rows with exactly their expected
// samples, the name rows' CPU times factor[name].
func exactReport(factor map[string]float64) *Report {
	rows := slices.Clone(demoRun)
	for i := range rows {
		if f := factor[rows[i].name]; f != 0 {
			rows[i].samples *= f
		}
		rows[i].samples = math.Round(rows[i].samples)
	}
	return sim{rows: rows, cv: 0}.drawExact()
}

// TestDiffTotalLeavesRowOut: with --normalize total, /car (most of the
// CPU) 30% costlier reads +30%, not the half a factor holding /car itself
// would leave. (The other routes' factors hold /car, so they read better:
// the known limit of total.)
func TestDiffTotalLeavesRowOut(t *testing.T) {
	d, err := NewDiff(exactReport(nil), exactReport(map[string]float64{"http://h:1/car": 1.3}), DiffOptions{Normalize: "total"})
	if err != nil {
		t.Fatal(err)
	}
	for _, dr := range d.Rows {
		if !slices.Equal(dr.By, ByName) || dr.Key != "/car" {
			continue
		}
		want := 0.3
		if math.Abs(dr.Normalized-want) > 0.005 {
			t.Errorf("%s: normalized %s, want %s (factor %.3f)", dr.Key, Change(dr.Normalized), Change(want), dr.Speed)
		}
	}
}

// TestDiffMixChange: /item costs 1 sample per request in scenario a and
// 0.2 in b. When the after run sends twice the requests from a and half
// from b, /item's CPU per request grows 40% with no request costlier: a
// mix change, not worse, and the gate does not fail on it. When b's
// requests get 50% costlier with the same mix, /item is worse.
func TestDiffMixChange(t *testing.T) {
	run := func(aReq, bReq int64, bCost float64) *Report {
		return sim{rows: []demoRow{
			{"a", "http://h:1/item", aReq, float64(aReq)},
			{"b", "http://h:1/item", bReq, 0.2 * bCost * float64(bReq)},
			{"a", "http://h:1/other", 2000, 1000},
		}}.drawExact()
	}
	item := func(d *Diff) *DiffRow {
		for i := range d.Rows {
			if slices.Equal(d.Rows[i].By, ByName) && d.Rows[i].Key == "/item" {
				return &d.Rows[i]
			}
		}
		t.Fatal("no /item row")
		return nil
	}
	d, err := NewDiff(run(1000, 1000, 1), run(2000, 500, 1), DiffOptions{Normalize: "none", RunSD: -1})
	if err != nil {
		t.Fatal(err)
	}
	r := item(d)
	if r.Verdict != MixChange || math.Abs(r.Mix-r.Raw) > 0.01 {
		t.Errorf("/item with the mix shifted: %s, raw %s, mix %s; want mix change explaining it", r.Verdict, Change(r.Raw), Change(r.Mix))
	}
	if regs := d.Regressions(0.10); len(regs) != 0 {
		t.Errorf("a mix change failed the gate: %v", regs[0].Key)
	}
	d, err = NewDiff(run(1000, 1000, 1), run(1000, 1000, 3), DiffOptions{Normalize: "none", RunSD: -1})
	if err != nil {
		t.Fatal(err)
	}
	if r := item(d); r.Verdict != Worse {
		t.Errorf("/item with b 3× costlier, the same mix: %s (mix %s), want worse", r.Verdict, Change(r.Mix))
	}
}

// TestDiffMedianLeavesRowOut: with --normalize median over 5 routes, a
// route changed by +8% (within 3 standard errors of the others' median, so
// near-median weights would take it in) is divided by a factor made of the
// other routes only: it reads +8%, not less.
func TestDiffMedianLeavesRowOut(t *testing.T) {
	rows := func(f float64) []demoRow {
		return []demoRow{
			{"s", "http://h:1/heavy", 10000, 10000 * f},
			{"s", "http://h:1/a", 1000, 500},
			{"s", "http://h:1/b", 1000, 500},
			{"s", "http://h:1/c", 1000, 500},
			{"s", "http://h:1/d", 1000, 500},
		}
	}
	d, err := NewDiff(sim{rows: rows(1)}.drawExact(), sim{rows: rows(1.08)}.drawExact(), DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Normalize != "median" {
		t.Fatalf("normalize %q, want median", d.Normalize)
	}
	for _, dr := range d.Rows {
		if slices.Equal(dr.By, ByName) && dr.Key == "/heavy" {
			if math.Abs(dr.Normalized-0.08) > 0.001 {
				t.Errorf("/heavy: normalized %s (factor %.4f), want +8.0%%", Change(dr.Normalized), dr.Speed)
			}
		}
	}
}

// TestDiffRunsAgreeingRunsKeepNoise: six runs per side with exactly the
// same samples do not make the rank test's intervals ±0%: each run's count
// holds Poisson noise, so "/" (1 sample per run) cannot be same, and /car
// (1,724 per run) is within a few percent, not exactly.
func TestDiffRunsAgreeingRunsKeepNoise(t *testing.T) {
	var runs []*Report
	for range 6 {
		runs = append(runs, exactReport(nil))
	}
	d, err := NewDiffRuns(runs, runs, DiffOptions{Normalize: "none"})
	if err != nil {
		t.Fatal(err)
	}
	for _, dr := range d.Rows {
		if !slices.Equal(dr.By, ByName) {
			continue
		}
		switch dr.Key {
		case "/":
			if dr.Verdict == Same || dr.Low > -0.5 {
				t.Errorf("/ (1 sample per run): %s, %+.1f%% … %+.1f%%: runs that agree are taken for no noise", dr.Verdict, 100*dr.Low, 100*dr.High)
			}
		case "/car":
			if w := dr.High - dr.Low; w < 0.02 || w > 0.2 {
				t.Errorf("/car: interval %+.2f%% … %+.2f%%, want the Poisson width of 1,724 samples a run", 100*dr.Low, 100*dr.High)
			}
		}
	}
}
