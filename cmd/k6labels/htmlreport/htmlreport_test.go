package htmlreport

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"maps"
	"math"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/k6labels/k6labels/cmd/k6labels/internal/fixture"
	"github.com/k6labels/k6labels/cmd/k6labels/k6results"
	"github.com/k6labels/k6labels/cmd/k6labels/pprofsource"
	"github.com/k6labels/k6labels/cmd/k6labels/report"
)

// The local run of the fixtures: a real k6-labelled CPU profile of the demo
// service and k6's json results of the same run.
const (
	fxProfile = "local/fx4.cpu.pb.gz"
	fxK6      = "local/run-fx4.json.gz"
)

func readFixture(t testing.TB) (*profile.Profile, *k6results.Results) {
	t.Helper()
	dir := fixture.Dir(t)
	p, err := profile.Parse(fixture.Gunzip(t, filepath.Join(dir, fxProfile)))
	if err != nil {
		t.Fatal(err)
	}
	k, err := k6results.ReadFile(filepath.Join(dir, fxK6))
	if err != nil {
		t.Fatal(err)
	}
	return p, k
}

func newReport(t testing.TB, p *profile.Profile, k *k6results.Results) *report.Report {
	t.Helper()
	src, err := pprofsource.New("fx4.cpu.pb.gz", p)
	if err != nil {
		t.Fatal(err)
	}
	r, err := report.New(context.Background(), src, report.Options{K6: k})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// scaled returns a copy of p whose samples carrying k6_name=name (any name
// when name is "") have their values multiplied by f.
func scaled(p *profile.Profile, name string, f float64) *profile.Profile {
	q := p.Copy()
	for _, s := range q.Sample {
		if name != "" && !slicesContains(s.Label["k6_name"], name) {
			continue
		}
		for i := range s.Value {
			s.Value[i] = int64(math.Round(float64(s.Value[i]) * f))
		}
	}
	return q
}

func slicesContains(ss []string, s string) bool {
	for _, x := range ss {
		if strings.HasSuffix(x, s) {
			return true
		}
	}
	return false
}

// doubled returns k6 results with every request count doubled.
func doubled(k *k6results.Results) *k6results.Results {
	d := *k
	d.Requests = maps.Clone(k.Requests)
	for key := range d.Requests {
		d.Requests[key] *= 2
	}
	d.Total *= 2
	return &d
}

func frameNamed(g *graph, name string, parent string) *frame {
	for i, f := range g.Frames {
		if f.Name != name {
			continue
		}
		// The parent is the last frame one row up that spans f.
		for j := i - 1; j >= 0; j-- {
			if p := g.Frames[j]; p.Depth == f.Depth-1 && p.X0 <= f.X0 && p.X1 >= f.X1 {
				if parent == "" || p.Name == parent {
					return &g.Frames[i]
				}
				break
			}
		}
	}
	return nil
}

// TestFlameGraphSumsTheProfile: the top frame of a row's flame graph is
// the row's CPU, and each frame's children sum to at most its own width.
func TestFlameGraphSumsTheProfile(t *testing.T) {
	p, k := readFixture(t)
	r := newReport(t, p, k)
	for _, row := range r.RowsBy(report.ByScenario) {
		g := newGraph(row.Key(), "s", false, nil, 0, row.Profile(), 1e-9, 0, 1000)
		if got, want := g.Frames[0].After, row.CPU.Seconds(); math.Abs(got-want) > 1e-9 {
			t.Errorf("%s: top frame %.4fs, the row's CPU %.4fs", row.Key(), got, want)
		}
		kids := map[int]float64{}
		for i, f := range g.Frames[1:] {
			for j := i; j >= 0; j-- {
				if g.Frames[j].Depth == f.Depth-1 {
					kids[j] += f.X1 - f.X0
					break
				}
			}
		}
		for j, w := range kids {
			if f := g.Frames[j]; w > f.X1-f.X0+1e-9 {
				t.Errorf("%s: children of %s span %.6f, it spans %.6f", row.Key(), f.Name, w, f.X1-f.X0)
			}
		}
		// The demo's costly function is where its CPU goes.
		var w float64
		for _, f := range g.Frames {
			if f.Name == "main.findNearestVehicle" {
				w += f.X1 - f.X0
			}
		}
		if w < 0.5 {
			t.Errorf("%s: main.findNearestVehicle spans %.2f of the graph, want most of it", row.Key(), w)
		}
	}
}

// TestDiffGraphPerRequest: the colours of a diff flame graph are the change
// per request, not per total. Twice the CPU for twice the requests is no
// change (white frames); 1.5 times the CPU of /car for the same requests is
// +50% on /car's frames (red).
func TestDiffGraphPerRequest(t *testing.T) {
	p, k := readFixture(t)
	before := newReport(t, p, k)

	twice := newReport(t, scaled(p, "", 2), doubled(k))
	d, err := report.NewDiff(before, twice, report.DiffOptions{Normalize: "none"})
	if err != nil {
		t.Fatal(err)
	}
	for _, dr := range d.Rows {
		if dr.Before == nil || dr.After == nil || dr.Before.Requests == 0 {
			continue
		}
		g, err := diffGraph(d, &dr, 0.01, 100)
		if err != nil {
			t.Fatalf("%s: %v", dr.Key, err)
		}
		for _, f := range g.Frames {
			if math.Abs(f.After-f.Before) > 1e-9*math.Max(1, f.Before) {
				t.Errorf("%s: %s before %.6f after %.6f ms/request, want the same (twice the CPU for twice the requests)", dr.Key, f.Name, f.Before, f.After)
			}
			if c := g.colour(f); c != neutral {
				t.Errorf("%s: %s coloured %s, want grey (no change)", dr.Key, f.Name, c)
			}
		}
	}

	costlier := newReport(t, scaled(p, "/car", 1.5), k)
	d, err = report.NewDiff(before, costlier, report.DiffOptions{Normalize: "none"})
	if err != nil {
		t.Fatal(err)
	}
	rows := diffRows(d)
	var car *report.DiffRow
	for _, dr := range rows {
		if dr.Verdict != report.Worse {
			t.Errorf("diffRows has %s=%s, %s", dr.By, dr.Key, dr.Verdict)
		}
		if dr.Key == "/car" {
			car = dr
		}
	}
	if car == nil {
		t.Fatalf("no diff flame graph for /car among %d rows", len(rows))
	}
	g, err := diffGraph(d, car, 0.01, 100)
	if err != nil {
		t.Fatal(err)
	}
	f := frameNamed(g, "main.findNearestVehicle", "main.orderVehicle")
	if f == nil {
		t.Fatal("no main.findNearestVehicle frame in /car's diff flame graph")
	}
	if got := f.After / f.Before; math.Abs(got-1.5) > 0.001 {
		t.Errorf("main.findNearestVehicle after/before %.4f per request, want 1.5", got)
	}
	if c := g.colour(*f); !strings.HasPrefix(c, "rgb(250,") {
		t.Errorf("main.findNearestVehicle coloured %s, want red", c)
	}
}

var external = regexp.MustCompile(`(?i)(<script[^>]+src=|<link[^>]+href=|<img|<iframe|@import|url\(|fetch\(|XMLHttpRequest)`)

// TestPagesSelfContained: the report and diff pages load nothing: no
// external script, style, image or request; their svg are well-formed XML.
func TestPagesSelfContained(t *testing.T) {
	p, k := readFixture(t)
	before := newReport(t, p, k)
	d, err := report.NewDiff(before, newReport(t, scaled(p, "/car", 1.5), k), report.DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for name, write := range map[string]func(io.Writer) error{
		"report": func(w io.Writer) error { return WriteReport(w, before) },
		"diff":   func(w io.Writer) error { return WriteDiff(w, d) },
	} {
		var b bytes.Buffer
		if err := write(&b); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		page := b.String()
		if m := external.FindString(page); m != "" {
			t.Errorf("%s page loads something: %q", name, m)
		}
		svgs := regexp.MustCompile(`(?s)<svg .*?</svg>`).FindAllString(page, -1)
		if len(svgs) < 2 {
			t.Errorf("%s page: %d svg, want a chart and flame graphs", name, len(svgs))
		}
		for _, s := range svgs {
			if err := xml.Unmarshal([]byte(s), new(struct{})); err != nil {
				t.Errorf("%s page: an svg is no XML: %v", name, err)
			}
		}
		if name == "diff" && !strings.Contains(page, "k6_name=/car") {
			t.Errorf("diff page lacks the diff flame graph of /car")
		}
		if name == "diff" && !strings.Contains(page, "a between-run spread of") {
			t.Errorf("diff page's legend does not say how rows were tested (the text output's sentence)")
		}
	}
}

// TestDiffSVGSmall: the --svg file is a standalone, well-formed SVG of the
// worst row, small enough for a pull request comment.
func TestDiffSVGSmall(t *testing.T) {
	p, k := readFixture(t)
	d, err := report.NewDiff(newReport(t, p, k), newReport(t, scaled(p, "/car", 1.5), k), report.DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteDiffSVG(&b, d); err != nil {
		t.Fatal(err)
	}
	if b.Len() > 100<<10 {
		t.Errorf("svg of %d bytes, want under 100 KiB", b.Len())
	}
	if err := xml.Unmarshal(b.Bytes(), new(struct{})); err != nil {
		t.Fatalf("not XML: %v", err)
	}
	if !strings.HasPrefix(b.String(), `<svg xmlns="http://www.w3.org/2000/svg"`) || !strings.Contains(b.String(), "k6_name=/car +50.0% normalized, worse") {
		t.Errorf("svg lacks the namespace or the worst row's title:\n%.300s", b.String())
	}
}

// TestFlameGraphBounded: a graph keeps at most maxFrames frames, leaving
// out the narrowest, and the top frame is still the whole profile.
func TestFlameGraphBounded(t *testing.T) {
	p, _ := readFixture(t)
	all := newGraph("all", "s", false, nil, 0, p, 1e-9, 0, 1000)
	defer func(n int) { maxFrames = n }(maxFrames)
	maxFrames = len(all.Frames) / 4
	g := newGraph("all", "s", false, nil, 0, p, 1e-9, 0, 1000)
	if len(g.Frames) > maxFrames || len(g.Frames) == 0 {
		t.Fatalf("%d frames of %d, want at most %d", len(g.Frames), len(all.Frames), maxFrames)
	}
	if g.Frames[0].After != all.Frames[0].After {
		t.Errorf("top frame %v, want %v", g.Frames[0].After, all.Frames[0].After)
	}
}

// TestDiffRowsWithoutWorse: when no row got worse, the one diff flame graph
// (and the --svg file) is of the row with the largest change: /bike, 5%
// costlier per request, within noise with 1597 requests.
func TestDiffRowsWithoutWorse(t *testing.T) {
	p, k := readFixture(t)
	d, err := report.NewDiff(newReport(t, p, k), newReport(t, scaled(p, "/bike", 1.05), k), report.DiffOptions{Normalize: "none"})
	if err != nil {
		t.Fatal(err)
	}
	rows := diffRows(d)
	// No row got worse: /bike, the largest change, is within noise (same,
	// or inconclusive where the test could not see 10%).
	if len(rows) != 1 || rows[0].Key != "/bike" || rows[0].Verdict == report.Worse {
		for _, dr := range rows {
			t.Errorf("diff flame graph of %s=%s (%s, %s)", dr.By, dr.Key, dr.Verdict, report.Change(dr.Normalized))
		}
		t.Fatalf("%d rows, want /bike alone", len(rows))
	}
	var b bytes.Buffer
	if err := WriteDiffSVG(&b, d); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), fmt.Sprintf("k6_name=/bike +5.0%% normalized, %s", rows[0].Verdict)) {
		t.Errorf("svg title:\n%.400s", b.String())
	}
}
