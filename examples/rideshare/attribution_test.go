package main

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/k6labels/k6labels"
	"github.com/k6labels/k6labels/internal/profiletest"
)

const testRunID = "4242"

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
	r0 := newReport(p, nil, "")
	t.Logf("%d samples, %s of CPU; responses by scenario %v", r0.samples, seconds(r0.total), sent.byScenario)

	// The report the demo prints, on the same profile: every scenario has a
	// row, and its share of k6 CPU is near its share of the work sent.
	r := newReport(p, &sent, target)
	for _, sc := range defaultScenarios {
		i := slices.IndexFunc(r.scenarios, func(rw row) bool { return rw.value == sc.name })
		if i < 0 {
			t.Errorf("report has no row for scenario %s: %+v", sc.name, r.scenarios)
			continue
		}
		rw := r.scenarios[i]
		if math.Abs(rw.ofK6-rw.work) > 0.15 {
			t.Errorf("report row %+v: share of k6 CPU far from share of work", rw)
		}
		t.Logf("%s: %.1f%% of k6-labelled CPU, %.1f%% of the work sent", sc.name, 100*rw.ofK6, 100*rw.work)
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
