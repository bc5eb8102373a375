package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/pprof/profile"
	"github.com/k6labels/k6labels/cmd/k6labels/htmlreport"
	"github.com/k6labels/k6labels/cmd/k6labels/k6results"
	"github.com/k6labels/k6labels/cmd/k6labels/pprofsource"
	"github.com/k6labels/k6labels/cmd/k6labels/report"
)

// The labels k6labels sets from k6's baggage members.
var (
	labelRunID    = report.LabelRunID
	labelScenario = report.LabelScenario
	labelName     = report.LabelName
)

// cpuIndex returns the index of the CPU time sample value in p, falling back
// to the last sample type (where runtime/pprof puts it).
func cpuIndex(p *profile.Profile) int {
	for i, st := range p.SampleType {
		if st.Type == "cpu" && st.Unit == "nanoseconds" {
			return i
		}
	}
	return len(p.SampleType) - 1
}

// sampleCount returns how many profiler samples s stands for: a pprof
// sample record stands for every sample with the same stack and labels.
func sampleCount(p *profile.Profile, s *profile.Sample) int64 {
	for i, st := range p.SampleType {
		if st.Type == "samples" && st.Unit == "count" {
			return s.Value[i]
		}
	}
	return 1
}

// k6Results returns the driver's responses as the k6 results of the run:
// http_reqs per scenario and name, the name made from the URL the driver
// sent (query string included, as k6 names a request without tags.name) by
// the same function the labels use.
func k6Results(sent counts, target string, start, end time.Time) *k6results.Results {
	res := &k6results.Results{Format: "driver", Requests: map[k6results.Key]int64{}, Start: start, End: end}
	for sc, paths := range sent.bySP {
		for path, n := range paths {
			if n == 0 {
				continue
			}
			name := k6results.Name(target + path + "?vehicle_id=1&city=berlin")
			res.Requests[k6results.Key{Scenario: sc, Name: name}] += n
			res.Total += n
			res.Points += n
		}
	}
	return res
}

// demoBy are the tables the demo prints.
var demoBy = []report.Grouping{report.ByScenario, report.ByName}

// newDemoReport is the k6labels report of the CPU profile p of this
// process, with the driver's responses as k6 results; by defaults to demoBy.
func newDemoReport(ctx context.Context, p *profile.Profile, sent counts, target, testRunID string, start, end time.Time, by ...report.Grouping) (*report.Report, error) {
	src, err := pprofsource.New("this process's CPU profile", p)
	if err != nil {
		return nil, err
	}
	if by == nil {
		by = demoBy
	}
	return report.New(ctx, src, report.Options{
		By: by, RunID: testRunID, Top: 3,
		K6: k6Results(sent, target, start, end),
	})
}

// writeGroundTruth prints CPU per request divided by each route's work
// units: about equal when the labels put every request's CPU in its row.
func writeGroundTruth(w io.Writer, r *report.Report) {
	fmt.Fprintln(w, "Ground truth: a bike costs 1 unit of work, a scooter 2, a car 3. CPU per request / units:")
	for _, row := range r.RowsBy(report.ByName) {
		u := routeUnits(report.URLPath(row.Key()))
		if u == 0 || row.Requests == 0 {
			continue
		}
		per := row.PerRequest
		fmt.Fprintf(w, "  %-9s %.3f ms per unit (95%% interval %.3f–%.3f)\n", report.URLPath(row.Key()),
			ms(per.Est)/float64(u), ms(per.Low)/float64(u), ms(per.High)/float64(u))
	}
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// seconds formats d as seconds with two decimals.
func seconds(d time.Duration) string {
	return fmt.Sprintf("%.2fs", d.Seconds())
}

// pprofCommands returns the go tool pprof commands that explore the profile
// at path, focused on the given scenario.
func pprofCommands(path, scenario string) string {
	var b strings.Builder
	q := report.ShellQuote(path)
	fmt.Fprintf(&b, "  go tool pprof -tags %s\n", q)
	fmt.Fprintf(&b, "  go tool pprof -top -tagfocus=%s=%s %s\n", labelScenario, scenario, q)
	fmt.Fprintf(&b, "  go tool pprof -http=127.0.0.1:0 -tagfocus=%s=/car %s\n", labelName, q)
	return b.String()
}

// writeHTML writes r as k6labels report --format html does, to -html or
// next to the profile, and says where.
func writeHTML(w io.Writer, r *report.Report, o *options) error {
	return writePage(w, o, ".html", "HTML report with flame graphs (k6labels report --format html)",
		func(f io.Writer) error { return htmlreport.WriteReport(f, r) })
}

// writePage writes a page to -html or next to the profile (its name with
// suffix), and says where.
func writePage(w io.Writer, o *options, suffix, what string, write func(io.Writer) error) error {
	path := o.html
	if path == "" {
		path = strings.TrimSuffix(o.out, filepath.Ext(o.out)) + suffix
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("-html: %w", err)
	}
	err = write(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("-html %s: %w", path, err)
	}
	fmt.Fprintf(w, "\n%s: %s\n", what, path)
	return nil
}
