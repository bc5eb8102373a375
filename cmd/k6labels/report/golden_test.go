package report_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"github.com/k6labels/k6labels/cmd/k6labels/output"
	"github.com/k6labels/k6labels/cmd/k6labels/pprofsource"
	"github.com/k6labels/k6labels/cmd/k6labels/report"
)

// update rewrites the golden files: go test ./report -run Golden -update
var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// golden compares got with testdata/name, or writes it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run Golden -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the output; the output:\n%s\n(go test -run Golden -update rewrites it after a deliberate change)", path, got)
	}
}

var formats = []output.Format{output.Text, output.Markdown, output.JSON}

func ext(f output.Format) string {
	return map[output.Format]string{output.Text: "txt", output.Markdown: "md", output.JSON: "json"}[f]
}

// writeAll renders v (a report or diff) in every format and checks each
// against its golden file; the json must also decode.
func writeAll(t *testing.T, base string, write func(*bytes.Buffer, output.Format) error) {
	t.Helper()
	for _, f := range formats {
		var buf bytes.Buffer
		if err := write(&buf, f); err != nil {
			t.Fatal(err)
		}
		if f == output.JSON && !json.Valid(buf.Bytes()) {
			t.Errorf("%s: invalid json", base)
		}
		golden(t, base+"."+ext(f)+".golden", buf.Bytes())
	}
}

// TestGoldenReport: the report of the real local/ run (labelled CPU
// profile read from the demo service, k6 json), top functions of every row.
func TestGoldenReport(t *testing.T) {
	r := fx4Report(t, report.Options{Top: 3, TopEveryRow: true})
	writeAll(t, "report-fx4", func(b *bytes.Buffer, f output.Format) error { return output.WriteReport(b, r, f) })
}

// TestGoldenReportShares: the same profile without k6 results (shares
// only), scenario and name rows.
func TestGoldenReportShares(t *testing.T) {
	src, err := pprofsource.New("fx4.cpu.pb.gz", fxProfile(t, "local/fx4.cpu.pb.gz"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := report.New(t.Context(), src, report.Options{By: []report.Grouping{report.ByScenario, report.ByName}})
	if err != nil {
		t.Fatal(err)
	}
	writeAll(t, "report-fx4-shares", func(b *bytes.Buffer, f output.Format) error { return output.WriteReport(b, r, f) })
}

// TestGoldenReportPyroscope: the report of fx1 from the merged profiles a
// real Pyroscope server answered.
func TestGoldenReportPyroscope(t *testing.T) {
	r := fxPyroscopeReport(t, "fx1")
	writeAll(t, "report-fx1-pyroscope", func(b *bytes.Buffer, f output.Format) error { return output.WriteReport(b, r, f) })
}

// TestGoldenDiffNoChange: fx1 → fx2, two real runs of the same build.
func TestGoldenDiffNoChange(t *testing.T) {
	d, err := report.NewDiff(fxPyroscopeReport(t, "fx1"), fxPyroscopeReport(t, "fx2"), report.DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	writeAll(t, "diff-fx1-fx2", func(b *bytes.Buffer, f output.Format) error { return output.WriteDiff(b, d, f) })
}

// costlier returns a copy of p in which every sample of the k6_name path
// costs factor times as much (cpu and sample count), the rest unchanged:
// a real profile with one route made costlier, for the verdict's output.
func costlier(p *profile.Profile, name string, factor float64) *profile.Profile {
	q := p.Copy()
	for _, s := range q.Sample {
		if slices.Contains(s.Label[report.LabelName], name) {
			for i := range s.Value {
				s.Value[i] = int64(float64(s.Value[i]) * factor)
			}
		}
	}
	return q
}

// TestGoldenDiffCostlier: the real local/ run against itself with /car
// made 30% costlier: the output with a "worse" row and its functions, and
// the share diff without k6 results (json).
func TestGoldenDiffCostlier(t *testing.T) {
	p := fxProfile(t, "local/fx4.cpu.pb.gz")
	k := fxK6(t, "local/run-fx4.json.gz")
	mk := func(name string, p *profile.Profile, withK6 bool) *report.Report {
		src, err := pprofsource.New(name, p)
		if err != nil {
			t.Fatal(err)
		}
		opts := report.Options{By: report.AllGroupings[1:]}
		if withK6 {
			opts.K6 = k
		}
		r, err := report.New(t.Context(), src, opts)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	after := costlier(p, fxBase+"/car", 1.3)
	d, err := report.NewDiff(mk("fx4.cpu.pb.gz", p, true), mk("fx4, /car ×1.3", after, true), report.DiffOptions{Normalize: "none"})
	if err != nil {
		t.Fatal(err)
	}
	writeAll(t, "diff-fx4-car-costlier", func(b *bytes.Buffer, f output.Format) error { return output.WriteDiff(b, d, f) })

	shares, err := report.NewDiff(mk("fx4.cpu.pb.gz", p, false), mk("fx4, /car ×1.3", after, false), report.DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, dr := range shares.Rows {
		if dr.BeforeValue < 0 || dr.BeforeValue > 1 || dr.AfterValue < 0 || dr.AfterValue > 1 {
			t.Errorf("share diff %s=%s: values %v, %v are not shares of the k6-labelled CPU", dr.By, dr.Key, dr.BeforeValue, dr.AfterValue)
		}
	}
	var buf bytes.Buffer
	if err := output.WriteDiff(&buf, shares, output.JSON); err != nil {
		t.Fatal(err)
	}
	golden(t, "diff-fx4-car-costlier-shares.json.golden", buf.Bytes())
}

// TestGoldenRuns: the runs table of the recorded Pyroscope window.
func TestGoldenRuns(t *testing.T) {
	ms := time.UnixMilli
	runs := []report.Run{
		{ID: "fx1", First: ms(1796234565000), Last: ms(1796234565000), CPU: 23770 * time.Millisecond},
		{ID: "fx2", First: ms(1796234565000), Last: ms(1796234595000), CPU: 23090 * time.Millisecond},
	}
	for _, f := range formats {
		var buf bytes.Buffer
		if err := output.WriteRuns(&buf, f, "Pyroscope http://127.0.0.1:4040 service rideshare.k6labels", ms(1796234535000), ms(1796234640000), runs); err != nil {
			t.Fatal(err)
		}
		golden(t, "runs."+ext(f)+".golden", buf.Bytes())
	}
}

// TestJSONFieldsDocumented: every field of the json outputs (the golden
// files) is named in docs/report.md, as `field`, `x[].field` or `field[]`.
func TestJSONFieldsDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join("testdata", "*.json.golden"))
	if err != nil || len(files) < 4 {
		t.Fatalf("json goldens %v: %v", files, err)
	}
	keys := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				keys[k] = true
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		walk(v)
	}
	for k := range keys {
		if !regexp.MustCompile("[`.]" + regexp.QuoteMeta(k) + "[`\\[]").Match(doc) {
			t.Errorf("json field %q is not documented in docs/report.md", k)
		}
	}
}
