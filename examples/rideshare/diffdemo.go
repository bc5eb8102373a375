package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/google/pprof/profile"
	"github.com/k6labels/k6labels"
	"github.com/k6labels/k6labels/cmd/k6labels/htmlreport"
	"github.com/k6labels/k6labels/cmd/k6labels/output"
	"github.com/k6labels/k6labels/cmd/k6labels/report"
)

// costlierRoute and costlierUnits are the change the -diff mode makes in
// its second run: ordering a car searches one more unit (4 instead of 3,
// +33% CPU per request); the other routes stay as they are.
const (
	costlierRoute = "/car"
	costlierUnits = 1
)

// newCostlierService returns the instrumented service with extra units of
// work on costlierRoute: the "new build" of the diff demo.
func newCostlierService(extra int) http.Handler {
	return newExtraWorkService(map[string]float64{costlierRoute: float64(extra) / float64(routeUnits(costlierRoute))})
}

// newExtraWorkService returns the instrumented service whose routes do
// extra[path] more of their work (0.2: +20% of the route's units, in
// findNearestVehicle). The extra work runs inside the
// middleware, so it carries the request's labels.
func newExtraWorkService(extra map[string]float64) http.Handler {
	mux := newMux()
	return k6labels.LabelsFromBaggageHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f := extra[r.URL.Path]; f > 0 {
			// The result goes out, so the extra search is work that counts.
			w.Header().Set("X-Extra-Search", strconv.FormatUint(findNearestVehicle(f*float64(routeUnits(r.URL.Path)), 1), 16))
		}
		mux.ServeHTTP(w, r)
	}))
}

// profiledRun serves h, sends the default load to it for o.duration under
// a CPU profile of this process, and returns the report of that run.
func profiledRun(ctx context.Context, o *options, w io.Writer, h http.Handler, testRunID string) (*report.Report, error) {
	srv, err := startServer(o.listen, h)
	if err != nil {
		return nil, err
	}
	defer srv.Close()
	d := newDriver(srv.URL, testRunID, defaultScenarios)
	var buf bytes.Buffer
	if err := pprof.StartCPUProfile(&buf); err != nil {
		return nil, err
	}
	start := time.Now()
	drive(ctx, d, o.duration, w)
	end := time.Now()
	pprof.StopCPUProfile()
	p, err := profile.ParseData(buf.Bytes())
	if err != nil {
		return nil, fmt.Errorf("reading the CPU profile: %w", err)
	}
	sent := d.counts()
	if sent.total == 0 {
		return nil, fmt.Errorf("%w: %v", errNoResponses, d.err())
	}
	return newDemoReport(ctx, p, sent, srv.URL, testRunID, start, end)
}

// runDiffDemo runs the load twice, the second time against a service whose
// /car route costs one unit more, and prints the diff and its verdict.
func runDiffDemo(ctx context.Context, o *options, w io.Writer) error {
	fmt.Fprintln(w, "k6labels demo, diff mode: is the new build costlier per request?")
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  load     %s, for %s per run\n", describeScenarios(defaultScenarios), o.duration)
	fmt.Fprintf(w, "  before   the service as it is (bike 1, scooter 2, car 3 units of work)\n")
	fmt.Fprintf(w, "  after    %s searches %d more unit (car 4 units: +33%% CPU per request)\n\n", costlierRoute, costlierUnits)
	fmt.Fprintln(w, "Run 1 (before):")
	before, err := profiledRun(ctx, o, w, newService(), o.testRunID+"-before")
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "Run 2 (after):")
	after, err := profiledRun(ctx, o, w, newCostlierService(costlierUnits), o.testRunID+"-after")
	if err != nil {
		return err
	}
	d, err := report.NewDiff(before, after, report.DiffOptions{Detect: 0.10})
	if err != nil {
		return err
	}
	fmt.Fprintln(w)
	if err := output.WriteDiff(w, d, output.Text); err != nil {
		return err
	}
	fmt.Fprintln(w, verdict(d))
	return writePage(w, o, ".diff.html", "HTML diff with diff flame graphs (k6labels diff --format html)",
		func(f io.Writer) error { return htmlreport.WriteDiff(f, d) })
}

// verdict is the answer: which routes got costlier, and which the diff
// could not have seen get 10% costlier. It never says that no route got
// costlier when a route was inconclusive.
func verdict(d *report.Diff) string {
	var worse, unsure []string
	for _, dr := range d.Rows {
		if len(dr.By) != 1 || dr.By[0] != report.LabelName {
			continue
		}
		switch dr.Verdict {
		case report.Worse:
			worse = append(worse, fmt.Sprintf("%s %+.1f%%", dr.Key, 100*dr.Normalized))
		case report.Inconclusive:
			unsure = append(unsure, fmt.Sprintf("%s (sees %s at best)", dr.Key, report.Change(dr.Detectable)))
		}
	}
	var b strings.Builder
	switch {
	case len(worse) > 0:
		b.WriteString("Verdict: CPU per request grew beyond noise on " + strings.Join(worse, ", "))
	case len(unsure) > 0:
		b.WriteString("Verdict: cannot tell: no route got costlier beyond noise, but a change of " + report.Change(d.Detect) + " could have been within noise too")
	default:
		b.WriteString("Verdict: no route got costlier per request beyond noise")
	}
	if len(worse) > 0 && len(unsure) > 0 {
		b.WriteString("; cannot tell for " + strings.Join(unsure, ", ") + ": a " + report.Change(d.Detect) + " change there could have been within noise")
	} else if len(unsure) > 0 {
		b.WriteString(" on " + strings.Join(unsure, ", "))
	}
	if u := d.Uniform; u != nil {
		fmt.Fprintf(&b, "; every route moved together, %s (a slower machine, or a change every request takes)", report.Change(u.Change))
	}
	return b.String() + "."
}
