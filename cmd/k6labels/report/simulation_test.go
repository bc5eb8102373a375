package report

import (
	"math"
	"math/rand/v2"
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
// arrivals in [0, lambda): exact, and fast enough for these means.
func poisson(rng *rand.Rand, lambda float64) int64 {
	var n int64
	for t := rng.ExpFloat64(); t < lambda; t += rng.ExpFloat64() {
		n++
	}
	return n
}

// simulatedReport draws one run: each scenario × name row's samples are
// Poisson with the row's mean times factor[name]; scenario and name rows
// are their sums, as in a real report.
func simulatedReport(rng *rand.Rand, factor map[string]float64) *Report {
	r := &Report{HasRequests: true}
	sc, nm := map[string]*Row{}, map[string]*Row{}
	for _, d := range demoRun {
		f := factor[d.name]
		if f == 0 {
			f = 1
		}
		k := poisson(rng, d.samples*f)
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
			x.m[x.key].Count = x.m[x.key].add(c)
			x.m[x.key].Requests += d.requests
		}
		r.K6 = r.K6.add(c)
		r.Requests += d.requests
	}
	for _, m := range []map[string]*Row{sc, nm} {
		for _, row := range m {
			r.Rows = append(r.Rows, *row)
		}
	}
	return r
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

// TestDiffPower: +30% CPU per request on one route of a 20 s run at the
// demo's rate is found (that route's k6_name row worse) in at least 95% of
// the pairs for the routes with most of the CPU; the bike row (245 samples)
// is reported, it needs a longer run.
func TestDiffPower(t *testing.T) {
	const pairs = 2000
	for _, c := range []struct {
		name     string
		minPower float64
	}{{"http://h:1/car", 0.95}, {"http://h:1/scooter", 0.95}, {"http://h:1/bike", 0}} {
		rng := rand.New(rand.NewPCG(3, 4))
		found, others := 0, 0
		for range pairs {
			d, err := NewDiff(simulatedReport(rng, nil), simulatedReport(rng, map[string]float64{c.name: 1.3}), DiffOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, dr := range d.Rows {
				if len(dr.By) == 1 && dr.By[0] == LabelName && dr.Key == URLPath(c.name) && dr.Verdict == Worse {
					found++
				}
				if len(dr.By) == 1 && dr.By[0] == LabelName && dr.Key != URLPath(c.name) && (dr.Verdict == Worse || dr.Verdict == Better) {
					others++
				}
			}
		}
		power := float64(found) / pairs
		t.Logf("+30%% on %s: found in %.1f%% of %d pairs; another route flagged %d times", c.name, 100*power, pairs, others)
		if power < c.minPower {
			t.Errorf("+30%% on %s found in %.1f%% of pairs, want ≥ %.0f%%", c.name, 100*power, 100*c.minPower)
		}
	}
}
