package main

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"github.com/k6labels/k6labels"
	"github.com/k6labels/k6labels/cmd/k6labels/report"
	"github.com/k6labels/k6labels/internal/profiletest"
)

const testRunID = "4242"

// groundTruthReport is the demo's report of p.
func groundTruthReport(t *testing.T, p *profile.Profile, sent counts, target string) *report.Report {
	t.Helper()
	r, err := newDemoReport(context.Background(), p, sent, target, testRunID, time.Now(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// checkGroundTruth returns what is wrong with the CPU per request that r
// shows per route. Each route's work is a known number of units, so its
// CPU per request should be units × u, with u the CPU of one unit: u is
// taken from all routes together (their CPU over their units sent), and
// units × u must lie inside the row's 95% interval, which comes from the
// row's sample count alone.
func checkGroundTruth(r *report.Report) []string {
	var cpu, units float64
	rows := r.RowsBy(report.ByName)
	for _, row := range rows {
		u := routeUnits(report.URLPath(row.Key()))
		cpu += float64(row.CPU)
		units += float64(u) * float64(row.Requests)
	}
	if units == 0 {
		return []string{"no route work in the report"}
	}
	unit := cpu / units
	var problems []string
	for _, path := range []string{"/bike", "/scooter", "/car"} {
		i := slices.IndexFunc(rows, func(row report.Row) bool { return report.URLPath(row.Key()) == path })
		if i < 0 || rows[i].Requests == 0 {
			problems = append(problems, fmt.Sprintf("no row with requests for %s: %+v", path, rows))
			continue
		}
		row := rows[i]
		want := time.Duration(float64(routeUnits(path)) * unit)
		// Three rows checked at once: each at 99.9 % (z = 3.29), not at
		// the report's 95 %, so that sampling noise alone fails the test
		// well under 1 % of the time, not one run in seven.
		low, high := poissonInterval(row.Samples, 3.29)
		perSample := float64(row.CPU) / float64(max(row.Samples, 1)) / float64(row.Requests)
		if lo, hi := time.Duration(low*perSample), time.Duration(high*perSample); want < lo || want > hi {
			problems = append(problems, fmt.Sprintf("%s: %s per request, 99.9%% interval %s–%s, but %d units × %s = %s",
				path, row.PerRequest.Est, lo, hi, routeUnits(path), time.Duration(unit), want))
		}
	}
	return problems
}

// poissonInterval is Byar's approximation of the exact two-sided interval
// for the mean of a Poisson count k at normal quantile z (as the report
// computes its 95 % intervals, z = 1.96).
func poissonInterval(k int64, z float64) (low, high float64) {
	if k > 0 {
		f := float64(k)
		low = f * math.Pow(1-1/(9*f)-z/(3*math.Sqrt(f)), 3)
	}
	f := float64(k + 1)
	return low, f * math.Pow(1-1/(9*f)+z/(3*math.Sqrt(f)), 3)
}

// attributionRequests is how many requests the attribution test sends: about
// 1,500 units of work, some 3 s of CPU (300 samples) where a unit takes 2 ms.
const attributionRequests = 750

// runLoad starts the service (instrumented, or not) and sends n requests of
// the default scenarios to it under a CPU profile.
func runLoad(t *testing.T, instrumented bool, n int64) (*profile.Profile, counts, string) {
	t.Helper()
	h := newService()
	if !instrumented {
		h = newMux()
	}
	srv, err := startServer("127.0.0.1:0", h)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	d := newDriver(srv.URL, testRunID, defaultScenarios)
	d.maxRequests = n
	before := k6labels.Stats().Labelled
	p := profiletest.Record(t, func() { d.run(context.Background()) })
	if err := d.err(); err != nil {
		t.Fatalf("load: %d requests failed, first: %v", d.errs.Load(), err)
	}
	c := d.counts()
	if c.total != n {
		t.Fatalf("driver got %d responses, want %d", c.total, n)
	}
	want := uint64(n)
	if !instrumented {
		want = 0
	}
	if got := k6labels.Stats().Labelled - before; got != want {
		t.Errorf("k6labels.Stats().Labelled grew by %d, want %d", got, want)
	}
	return p, c, srv.URL
}

// scenariosFor returns the scenarios that request path.
func scenariosFor(path string) []string {
	var out []string
	for _, s := range defaultScenarios {
		if slices.Contains(s.paths, path) {
			out = append(out, s.name)
		}
	}
	return out
}

// routeOf returns the route whose handler is on s's stack, or "".
func routeOf(s *profile.Sample) string {
	for path, fn := range handlerFuncs {
		for _, loc := range s.Location {
			for _, line := range loc.Line {
				if line.Function != nil && strings.HasSuffix(line.Function.Name, "."+fn) {
					return path
				}
			}
		}
	}
	return ""
}

// checkAttribution returns what is wrong with the k6 labels of p, recorded
// while the driver sent the requests in sent to target. It is the test's
// verdict, kept separate so that the test can show it fails on bad labels.
//
//  1. At least 99% of the samples inside the route handlers carry the right
//     labels: the run id, k6_name = target+path of the handler on the stack,
//     and a scenario that requests that path (cars only at rush hour, bikes
//     only off-peak).
//  2. The CPU split between scenarios, measured from the labels of the
//     samples in findNearestVehicle, matches the split of the work the driver
//     asked for. Each request's work is a fixed number of loop rounds and the
//     driver waited for every request, so the expected split is exact; what
//     remains is sampling noise. n samples estimate a share p with standard
//     error sqrt(p(1-p)/n): the tolerance is 4 standard errors (a false alarm
//     about once in 15,000 runs) plus 2 points for the cost of the same loop
//     drifting between goroutines (frequency changes, a shared core).
func checkAttribution(p *profile.Profile, target string, sent counts) []string {
	problems, _ := attribution(p, target, sent)
	return problems
}

// attribution is checkAttribution, also returning a summary for the log.
func attribution(p *profile.Profile, target string, sent counts) (problems []string, summary string) {
	ci := cpuIndex(p)

	var inHandlers, right int64
	var wrong []string
	for _, s := range p.Sample {
		path := routeOf(s)
		if path == "" {
			continue
		}
		n := sampleCount(p, s)
		inHandlers += n
		l := profiletest.Labels(s)
		if l[labelRunID] == testRunID && l[labelName] == target+path && slices.Contains(scenariosFor(path), l[labelScenario]) {
			right += n
		} else if len(wrong) < 3 {
			wrong = append(wrong, fmt.Sprintf("%s: %v", path, l))
		}
	}
	const minSamples = 50
	if inHandlers < minSamples {
		problems = append(problems, fmt.Sprintf("only %d samples in the route handlers, want at least %d to judge", inHandlers, minSamples))
	}
	if inHandlers > 0 && float64(right) < 0.99*float64(inHandlers) {
		problems = append(problems, fmt.Sprintf("%d of %d samples in the route handlers have the right k6 labels (want ≥ 99%%); e.g. %s",
			right, inHandlers, strings.Join(wrong, "; ")))
	}

	// The split between scenarios.
	work := map[string]float64{}
	var totalWork float64
	for sc, paths := range sent.bySP {
		for path, n := range paths {
			w := float64(n) * float64(routeUnits(path))
			work[sc] += w
			totalWork += w
		}
	}
	measured := map[string]float64{}
	var total float64
	var n int64
	for _, s := range profiletest.Samples(p, ".findNearestVehicle") {
		v := float64(s.Value[ci])
		measured[profiletest.Labels(s)[labelScenario]] += v
		total += v
		n += sampleCount(p, s)
	}
	if n == 0 || totalWork == 0 {
		return append(problems, "no samples in findNearestVehicle or no work sent"), ""
	}
	summary = fmt.Sprintf("%d of %d samples in the route handlers have the right labels;", right, inHandlers)
	for _, sc := range defaultScenarios {
		want := work[sc.name] / totalWork
		got := measured[sc.name] / total
		tol := 4*math.Sqrt(want*(1-want)/float64(n)) + 0.02
		if math.Abs(got-want) > tol {
			problems = append(problems, fmt.Sprintf("scenario %s has %.1f%% of the work CPU, want %.1f%% ± %.1f (from %d samples)",
				sc.name, 100*got, 100*want, 100*tol, n))
		}
		summary += fmt.Sprintf(" %s %.1f%% of work CPU (want %.1f ± %.1f)", sc.name, 100*got, 100*want, 100*tol)
	}
	return problems, summary
}

func TestAttribution(t *testing.T) {
	p, sent, target := runLoad(t, true, attributionRequests)
	profiletest.CheckLabels(t, p, 256)
	problems, summary := attribution(p, target, sent)
	for _, pr := range problems {
		t.Error(pr)
	}
	t.Log(summary)
	// Ground truth on the same profile: the report's CPU per request per
	// route matches the routes' known cost ratio within its interval.
	r := groundTruthReport(t, p, sent, target)
	for _, pr := range checkGroundTruth(r) {
		t.Error(pr)
	}
	var b strings.Builder
	writeGroundTruth(&b, r)
	t.Logf("%d samples, %s of CPU; responses by scenario %v\n%s", r.Total.Samples, seconds(r.Total.CPU), sent.byScenario, b.String())
	// The ground-truth check must be able to fail: swap the car and bike
	// labels, and count requests by the raw URL instead of the label value.
	swapped := p.Copy()
	for _, s := range swapped.Sample {
		switch v := s.Label[labelName]; {
		case len(v) == 0:
		case v[0] == target+"/car":
			s.Label[labelName] = []string{target + "/bike"}
		case v[0] == target+"/bike":
			s.Label[labelName] = []string{target + "/car"}
		}
	}
	if got := checkGroundTruth(groundTruthReport(t, swapped, sent, target)); len(got) == 0 {
		t.Error("checkGroundTruth passed a profile with the car and bike labels swapped")
	} else {
		t.Logf("car and bike swapped: %s", got[0])
	}

	// The verdict must be able to fail: the same profile with its labels
	// removed, or with wrong ones, is rejected.
	mutate := func(name, want string, f func(s *profile.Sample)) {
		q := p.Copy()
		for _, s := range q.Sample {
			f(s)
		}
		got := checkAttribution(q, target, sent)
		if !slices.ContainsFunc(got, func(pr string) bool { return strings.Contains(pr, want) }) {
			t.Errorf("%s: checkAttribution found %q, want a problem with %q", name, got, want)
		} else {
			t.Logf("%s: %s", name, got[0])
		}
	}
	setScenario := func(s *profile.Sample, sc string) {
		if len(s.Label[labelScenario]) > 0 {
			s.Label[labelScenario] = []string{sc}
		}
	}
	mutate("labels removed", "right k6 labels", func(s *profile.Sample) { s.Label = nil })
	mutate("scenarios swapped", "right k6 labels", func(s *profile.Sample) {
		switch v := s.Label[labelScenario]; {
		case len(v) == 0:
		case v[0] == "rush_hour":
			setScenario(s, "off_peak")
		case v[0] == "off_peak":
			setScenario(s, "rush_hour")
		}
	})
	mutate("query string kept", "right k6 labels", func(s *profile.Sample) {
		if v := s.Label[labelName]; len(v) > 0 {
			s.Label[labelName] = []string{v[0] + "?vehicle_id=1&city=berlin"}
		}
	})
	mutate("one scenario for all", "right k6 labels", func(s *profile.Sample) { setScenario(s, "rush_hour") })
	// Both scenarios order scooters, so each sample below still looks right
	// on its own: only the split between scenarios can tell.
	mutate("every scooter off-peak", "scenario rush_hour has", func(s *profile.Sample) {
		if routeOf(s) == "/scooter" {
			setScenario(s, "off_peak")
		}
	})
}

// TestAttributionFailsWithoutMiddleware runs the service without k6labels:
// the verdict must reject it. Fewer requests: the failure is total.
func TestAttributionFailsWithoutMiddleware(t *testing.T) {
	p, sent, target := runLoad(t, false, 150)
	if problems := checkAttribution(p, target, sent); len(problems) == 0 {
		t.Fatal("checkAttribution found nothing wrong in a profile of an uninstrumented service")
	}
	for _, s := range p.Sample {
		if len(s.Label) > 0 {
			t.Fatalf("uninstrumented service produced labels %v", s.Label)
		}
	}
}
