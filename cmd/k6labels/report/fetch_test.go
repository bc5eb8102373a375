package report_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"github.com/k6labels/k6labels/cmd/k6labels/pprofsource"
	"github.com/k6labels/k6labels/cmd/k6labels/report"
)

// seriesSource is a pprofsource.Source whose Split gives counts only, as
// Pyroscope's SelectSeries does; it counts the profiles asked of it.
type seriesSource struct {
	*pprofsource.Source
	asked []string
}

func (s *seriesSource) Split(ctx context.Context, g report.Grouping, scope []report.Matcher) (map[string]report.Part, error) {
	parts, err := s.Source.Split(ctx, g, scope)
	for k, p := range parts {
		var c report.Count
		for _, smp := range p.Profile.Sample {
			c.Samples += smp.Value[0]
			c.CPU += time.Duration(smp.Value[1])
		}
		parts[k] = report.Part{Count: c}
	}
	return parts, err
}

func (s *seriesSource) Profile(ctx context.Context, match []report.Matcher) (*profile.Profile, error) {
	s.asked = append(s.asked, fmt.Sprint(match))
	return s.Source.Profile(ctx, match)
}

// TestFetchWorseRows: with a source that gives no row profiles at no cost,
// a diff's reports fetch none for the name rows; Fetch then fetches those
// of the one row found worse, on both sides, and lists the function that
// grew in it.
func TestFetchWorseRows(t *testing.T) {
	names := []string{"/a", "/b", "/c", "/d", "/slow"}
	var k6 strings.Builder
	for _, name := range names {
		for range 100 {
			fmt.Fprintf(&k6, `{"metric":"http_reqs","type":"Point","data":{"time":"2026-12-02T18:15:54Z","value":1,"tags":{"name":%q,"scenario":"s"}}}`+"\n", name)
		}
	}
	side := func(slow int64) (*report.Report, *seriesSource) {
		var samples []sample
		for _, name := range names {
			samples = append(samples, sample{labels: map[string]string{"k6_test_run_id": "r1", "k6_scenario": "s", "k6_name": name}, n: 100})
		}
		samples = append(samples, sample{labels: map[string]string{"k6_test_run_id": "r1", "k6_scenario": "s", "k6_name": "/slow"}, n: slow, fn: "main.slow"})
		ps, err := pprofsource.New("p.pb.gz", buildProfile(samples...))
		if err != nil {
			t.Fatal(err)
		}
		src := &seriesSource{Source: ps}
		r, err := report.New(t.Context(), src, report.Options{By: []report.Grouping{report.ByName}, Top: -1, K6: readK6(t, k6.String())})
		if err != nil {
			t.Fatal(err)
		}
		return r, src
	}
	before, bsrc := side(1)
	after, asrc := side(300)
	if len(bsrc.asked) != 1 || len(asrc.asked) != 1 {
		t.Errorf("profiles asked before the diff: %q, %q; want the run's only", bsrc.asked, asrc.asked)
	}
	d, err := report.NewDiff(before, after, report.DiffOptions{Normalize: "none"})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Fetch(t.Context()); err != nil {
		t.Fatal(err)
	}
	worse := 0
	for _, dr := range d.Rows {
		if dr.Verdict != report.Worse {
			continue
		}
		worse++
		if dr.Key != "/slow" || len(dr.Grew) == 0 || dr.Grew[0].Name != "main.slow" {
			t.Errorf("worse row %s grew %+v, want /slow with main.slow first", dr.Key, dr.Grew)
		}
	}
	if worse != 1 {
		t.Errorf("%d rows worse, want /slow only", worse)
	}
	for _, src := range []*seriesSource{bsrc, asrc} {
		if len(src.asked) != 2 || !strings.Contains(src.asked[1], "/slow") {
			t.Errorf("profiles asked: %q; want the run's, then /slow's", src.asked)
		}
	}
}

// TestProfilesOption: with a source that gives counts only, rows get their
// profiles (for flame graphs) with Options.Profiles, and only the scenario
// rows, whose top functions are listed, without it.
func TestProfilesOption(t *testing.T) {
	var samples []sample
	for _, name := range []string{"/a", "/b"} {
		samples = append(samples, sample{labels: map[string]string{"k6_test_run_id": "r1", "k6_scenario": "s", "k6_name": name}, n: 10})
	}
	ps, err := pprofsource.New("p.pb.gz", buildProfile(samples...))
	if err != nil {
		t.Fatal(err)
	}
	for _, all := range []bool{false, true} {
		src := &seriesSource{Source: ps}
		r, err := report.New(t.Context(), src, report.Options{Profiles: all})
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range r.Rows {
			want := all || row.By.String() == report.LabelScenario
			if got := row.Profile() != nil; got != want || row.Samples != 10 && row.Samples != 20 {
				t.Errorf("Profiles %v: row %s=%s has a profile %v (want %v), %d samples", all, row.By, row.Key(), got, want, row.Samples)
			}
		}
	}
}
