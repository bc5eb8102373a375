package k6results_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/k6labels/k6labels/cmd/k6labels/internal/fixture"
	"github.com/k6labels/k6labels/cmd/k6labels/k6results"
)

// wholeLinesOf returns b up to its last newline.
func wholeLinesOf(b []byte) []byte { return b[:bytes.LastIndexByte(b, '\n')+1] }

// checkCut reads cut, content that ends mid-line or mid-gzip-stream, and
// checks that it counts exactly what the complete lines before the cut
// (whole, read as a complete file) count, and says where it was cut.
func checkCut(t *testing.T, cut, whole []byte, wantGzip bool, partial int) *k6results.Results {
	t.Helper()
	res, err := k6results.Read(bytes.NewReader(cut))
	if err != nil {
		t.Fatalf("a file cut as one k6 is still writing: %v", err)
	}
	want, err := k6results.Read(bytes.NewReader(whole))
	if err != nil {
		t.Fatal(err)
	}
	if want.Truncated != nil {
		t.Fatalf("complete lines said to be cut: %+v", want.Truncated)
	}
	if !maps.Equal(res.Requests, want.Requests) || res.Total != want.Total || !res.End.Equal(want.End) || res.Points != want.Points {
		t.Errorf("cut file: %d requests to %s, %d points, %v; its complete lines: %d to %s, %d points, %v",
			res.Total, res.End, res.Points, res.Requests, want.Total, want.End, want.Points, want.Requests)
	}
	c := res.Truncated
	if c == nil {
		t.Fatal("Truncated is nil: the cut is not said")
	}
	lines := int64(bytes.Count(whole, []byte("\n")))
	if c.Gzip != wantGzip || c.Line != lines+1 || c.Offset != int64(len(whole)) || c.Partial != partial {
		t.Errorf("cut %+v, want line %d at %d, %d bytes left out, gzip %v", *c, lines+1, len(whole), partial, wantGzip)
	}
	return res
}

// TestTruncatedGzip: the fixture's gzip json cut after 400,000 bytes, as k6
// leaves its gzip output until it exits, gives the requests of the lines
// that were decompressed whole, and says the gzip stream ends early.
func TestTruncatedGzip(t *testing.T) {
	gz, err := os.ReadFile(filepath.Join(fixture.Dir(t), "local", "run-fx4.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	cut := gz[:400000]
	zr, err := gzip.NewReader(bytes.NewReader(cut))
	if err != nil {
		t.Fatal(err)
	}
	content, err := io.ReadAll(zr)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("the cut gzip reads with %v, want an unexpected EOF", err)
	}
	whole := wholeLinesOf(content)
	res := checkCut(t, cut, whole, true, len(content)-len(whole))
	if res.Total == 0 || res.Total >= 9764 {
		t.Errorf("%d requests, want some of the run's 9764", res.Total)
	}
	if !strings.Contains(res.Truncated.String(), "gzip stream ends early") {
		t.Errorf("cut said as %q", res.Truncated)
	}
}

// TestTruncatedJSON: the fixture's json cut in the middle of an http_reqs
// line (the reader decodes those: it used to fail with "line N is not
// JSON") gives the requests of the lines before it.
func TestTruncatedJSON(t *testing.T) {
	content, err := io.ReadAll(fixture.Gunzip(t, filepath.Join(fixture.Dir(t), "local", "run-fx4.json.gz")))
	if err != nil {
		t.Fatal(err)
	}
	at := 20000000 + bytes.Index(content[20000000:], []byte(`{"metric":"http_reqs"`)) + 100
	whole := wholeLinesOf(content[:at])
	res := checkCut(t, content[:at], whole, false, at-len(whole))
	if !strings.Contains(res.Truncated.String(), "last line") {
		t.Errorf("cut said as %q", res.Truncated)
	}
	// A broken line that is not the last stays an error.
	broken := append(bytes.Clone(content[:at]), "\n"+`{"metric":"vus"}`+"\n"...)
	if _, err := k6results.Read(bytes.NewReader(broken)); !errors.Is(err, k6results.ErrFormat) || !strings.Contains(err.Error(), "is not JSON") {
		t.Errorf("a broken line inside the file: %v, want not JSON", err)
	}
}

// TestTruncatedCSV: the fixture's csv cut in the scenario column of an
// http_reqs row ("rush_h"): the row is left out, not counted under a
// scenario cut short as encoding/csv's short last record used to be.
func TestTruncatedCSV(t *testing.T) {
	content, err := io.ReadAll(fixture.Gunzip(t, filepath.Join(fixture.Dir(t), "local", "run-fx4.csv.gz")))
	if err != nil {
		t.Fatal(err)
	}
	row := 10000000 + bytes.Index(content[10000000:], []byte("\nhttp_reqs,")) + 1
	at := row + bytes.Index(content[row:], []byte(",rush_hour,")) + len(",rush_h")
	if i := bytes.LastIndexByte(content[:at], '\n'); !bytes.HasPrefix(content[i+1:], []byte("http_reqs,")) {
		t.Fatalf("the row cut is not an http_reqs row: %q", content[i+1:at])
	}
	whole := wholeLinesOf(content[:at])
	res := checkCut(t, content[:at], whole, false, at-len(whole))
	for k := range res.Requests {
		if k.Scenario == "rush_h" {
			t.Errorf("the cut row is counted under scenario %q", k.Scenario)
		}
	}
	// A row cut after its last field's start still has every column: kept.
	last := bytes.LastIndex(whole[:len(whole)-1], []byte("\n")) + 1
	if lastRow := whole[last : len(whole)-1]; bytes.Count(lastRow, []byte(",")) != 18 {
		t.Fatalf("row %q: not 19 columns", lastRow)
	}
	res, err = k6results.Read(bytes.NewReader(whole[:len(whole)-1]))
	if err != nil || res.Truncated != nil || res.Points != int64(bytes.Count(whole, []byte("\n"))-1) {
		t.Errorf("a last row with all its columns and no newline: %v, cut %v, %d points", err, res.Truncated, res.Points)
	}
}

// TestCompleteNotTruncated: complete files, and a last line without newline
// that is whole, are not said to be cut.
func TestCompleteNotTruncated(t *testing.T) {
	dir := fixture.Dir(t)
	for _, name := range []string{"run-fx4.json.gz", "run-fx4.csv.gz"} {
		res, err := k6results.ReadFile(filepath.Join(dir, "local", name))
		if err != nil || res.Truncated != nil || res.Total != 9764 {
			t.Errorf("%s: %v, cut %v, %d requests", name, err, res.Truncated, res.Total)
		}
	}
	in := `{"metric":"http_reqs","type":"Point","data":{"time":"2026-01-01T00:00:01Z","value":1,"tags":{"name":"a","scenario":"s"}}}`
	res, err := k6results.Read(strings.NewReader(in))
	if err != nil || res.Truncated != nil || res.Total != 1 {
		t.Errorf("one whole line without newline: %v, cut %v, %d requests", err, res.Truncated, res.Total)
	}
	// Cut before its first request: an error that says so.
	_, err = k6results.Read(strings.NewReader(in[:40]))
	if !errors.Is(err, k6results.ErrNoHTTPReqs) || !strings.Contains(err.Error(), "still writing") {
		t.Errorf("cut before any request: %v", err)
	}
}
