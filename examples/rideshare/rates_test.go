package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/k6labels/k6labels/cmd/k6labels/report"
)

// rateThreshold is the --fail-above of the gate the harness plays: 10%.
const rateThreshold = 0.10

// rateKind is one kind of pair of the harness: the change its second run
// makes (nil: none) and the route it makes costlier ("" for none or all).
type rateKind struct {
	name  string
	pairs int
	extra map[string]float64
	route string
}

// rateTally counts what the diffs of one kind of pair said.
type rateTally struct {
	pairs, flagged, exit3, exit4, exit0, found, other, uniform int
}

// gateExit is the exit status of k6labels diff --fail-above threshold:
// 3 when a row is worse by more than threshold, else 4 when the diff cannot
// vouch for threshold (an inconclusive row, or a common change above it),
// else 0.
func gateExit(d *report.Diff, threshold float64) int {
	switch {
	case len(d.Regressions(threshold)) > 0:
		return 3
	case len(d.Inconclusive()) > 0 || d.UniformAbove(threshold):
		return 4
	}
	return 0
}

// add counts the diff d of a pair of kind k.
func (t *rateTally) add(d *report.Diff, k rateKind) {
	t.pairs++
	if len(flagged(d)) > 0 {
		t.flagged++
	}
	switch gateExit(d, rateThreshold) {
	case 3:
		t.exit3++
	case 4:
		t.exit4++
	default:
		t.exit0++
	}
	if d.Uniform != nil {
		t.uniform++
	}
	other := false
	for _, dr := range d.Rows {
		if !slices.Equal(dr.By, report.ByName) || (dr.Verdict != report.Worse && dr.Verdict != report.Better) {
			continue
		}
		if k.route != "" && dr.Key == k.route && dr.Verdict == report.Worse {
			t.found++
		} else if k.route == "" || dr.Key != k.route {
			other = true
		}
	}
	if other {
		t.other++
	}
}

// rateKinds are the pairs of the harness: sizes from the environment
// (K6LABELS_DIFF_PAIRS no-change pairs, K6LABELS_DIFF_UNIFORM pairs with
// every route +20%, K6LABELS_DIFF_EFFECT pairs per /car +10/+20/+30%).
func rateKinds(noChange int) []rateKind {
	uniform := envInt("K6LABELS_DIFF_UNIFORM", 5)
	effect := envInt("K6LABELS_DIFF_EFFECT", 8)
	all := map[string]float64{}
	for _, r := range routes {
		all[r.path] = 0.2
	}
	kinds := []rateKind{{name: "no change", pairs: noChange}, {name: "every route +20%", pairs: uniform, extra: all}}
	for _, pct := range []int{10, 20, 30} {
		kinds = append(kinds, rateKind{name: fmt.Sprintf("%s +%d%%", costlierRoute, pct), pairs: effect,
			extra: map[string]float64{costlierRoute: float64(pct) / 100}, route: costlierRoute})
	}
	return kinds
}

// envInt is the integer in the environment variable name, or def.
func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n >= 0 {
		return n
	}
	return def
}

// rateTable is the Markdown table of the tallies, one row per kind.
func rateTable(kinds []rateKind, tallies []rateTally, requests int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| real pairs, %d requests per run | pairs | any row worse/better | gate exit 3 | gate exit 4 | gate exit 0 | route found worse | another route flagged | common change found |\n", requests)
	b.WriteString("| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for i, k := range kinds {
		t := tallies[i]
		found := "–"
		if k.route != "" {
			found = strconv.Itoa(t.found)
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d | %s | %d | %d |\n", k.name, t.pairs, t.flagged, t.exit3, t.exit4, t.exit0, found, t.other, t.uniform)
	}
	return b.String()
}

// TestDiffRates is the harness of the diff's error rates on real runs
// (make diff-rates): round i runs the demo once as a base and, for each
// kind with more than i pairs, once more (the same service, or with the
// kind's extra work), diffs each against the base as --fail-above 10%
// would, logs the tables so far, and at the end the tables. Skipped unless
// K6LABELS_DIFF_PAIRS is set: it takes some 40 minutes at the size.
func TestDiffRates(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("K6LABELS_DIFF_PAIRS"))
	if n <= 0 {
		t.Skip("set K6LABELS_DIFF_PAIRS (make diff-rates) to measure the diff's error rates on real runs")
	}
	requests := envInt("K6LABELS_DIFF_REQUESTS", diffRequests)
	kinds := rateKinds(n)
	tallies := make([]rateTally, len(kinds))
	rounds := 0
	for _, k := range kinds {
		rounds = max(rounds, k.pairs)
	}
	for i := range rounds {
		base := pairRunN(t, newService(), fmt.Sprintf("base-%d", i), requests)
		for j, k := range kinds {
			if i >= k.pairs {
				continue
			}
			h := newService()
			if k.extra != nil {
				h = newExtraWorkService(k.extra)
			}
			after := pairRunN(t, h, fmt.Sprintf("%s-%d", strings.NewReplacer(" ", "", "/", "", "%", "").Replace(k.name), i), requests)
			d, err := report.NewDiff(base, after, report.DiffOptions{Detect: rateThreshold})
			if err != nil {
				t.Fatal(err)
			}
			tallies[j].add(d, k)
			t.Logf("round %d, %s: exit %d; flagged %v; %s", i+1, k.name, gateExit(d, rateThreshold), flagged(d), verdict(d))
		}
		t.Logf("after round %d of %d:\n%s", i+1, rounds, rateTable(kinds, tallies, requests))
	}
}

// TestExtraWork: the harness's knob adds the given fraction of a route's
// work to that route only, and newCostlierService whole units.
func TestExtraWork(t *testing.T) {
	header := func(h http.Handler, path string) string {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path+"?vehicle_id=7", nil))
		if w.Code != http.StatusOK {
			t.Fatalf("%s: status %d", path, w.Code)
		}
		return w.Header().Get("X-Extra-Search")
	}
	h := newExtraWorkService(map[string]float64{"/car": 0.1})
	if got, want := header(h, "/car"), strconv.FormatUint(findNearestVehicle(0.3, 1), 16); got != want {
		t.Errorf("/car +10%%: extra search %s, want %s (0.3 units)", got, want)
	}
	if got := header(h, "/bike"); got != "" {
		t.Errorf("/bike got extra work %q", got)
	}
	if got, want := header(newCostlierService(1), "/car"), strconv.FormatUint(findNearestVehicle(1, 1), 16); got != want {
		t.Errorf("newCostlierService(1): extra search %s, want one unit %s", got, want)
	}
}

// TestRateTally: a pair's diff is counted by the gate's exit status, the
// route found, another route flagged, and a common change.
func TestRateTally(t *testing.T) {
	row := func(key, verdict string, change float64) report.DiffRow {
		return report.DiffRow{By: report.ByName, Key: key, Verdict: verdict, Normalized: change, Beyond: verdict == report.Worse || verdict == report.Better}
	}
	car := rateKind{name: "/car +30%", route: "/car"}
	var tl rateTally
	tl.add(&report.Diff{Rows: []report.DiffRow{row("/car", report.Worse, 0.3), row("/bike", report.Same, 0)}}, car)
	tl.add(&report.Diff{Rows: []report.DiffRow{row("/car", report.Worse, 0.05), row("/bike", report.Better, -0.2)}}, car)
	tl.add(&report.Diff{Rows: []report.DiffRow{row("/car", report.Inconclusive, 0.1)}}, car)
	tl.add(&report.Diff{Uniform: &report.Shift{Change: 0.2}, Rows: []report.DiffRow{row("/car", report.Same, 0)}}, car)
	want := rateTally{pairs: 4, flagged: 2, exit3: 1, exit4: 1, exit0: 2, found: 2, other: 1, uniform: 1}
	if tl != want {
		t.Errorf("tally %+v, want %+v", tl, want)
	}
	var nc rateTally
	nc.add(&report.Diff{Rows: []report.DiffRow{row("/car", report.Worse, 0.3)}}, rateKind{name: "no change"})
	if nc.other != 1 || nc.found != 0 || nc.exit3 != 1 {
		t.Errorf("no change: a flagged route is another route flagged: %+v", nc)
	}
}
