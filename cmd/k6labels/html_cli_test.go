package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/k6labels/k6labels/cmd/k6labels/internal/fixture"
)

// TestHTMLFormat: report and diff --format html write one page on stdout
// (the profiles line goes to stderr), diff --svg the worst row's SVG, and
// runs refuses html.
func TestHTMLFormat(t *testing.T) {
	t.Parallel() // no CPU profile, environment or global of the package
	fx := fixture.Dir(t)
	prof, k6 := filepath.Join(fx, "local", "fx4.cpu.pb.gz"), filepath.Join(fx, "local", "run-fx4.json.gz")
	code, out, errOut := pyrRun(t, "report", "--format", "html", "--k6", k6, prof)
	if code != exitOK || !strings.HasPrefix(out, "<!DOCTYPE html>") || !strings.Contains(out, `class="fg"`) || !strings.HasSuffix(out, "</html>\n") {
		t.Fatalf("report: exit %d, %s\n%.300s", code, errOut, out)
	}
	dir := t.TempDir()
	svg := filepath.Join(dir, "worst.svg")
	code, out, errOut = pyrRun(t, "diff", "--format", "html", "--base-k6", k6, "--k6", k6, "--base-profile", prof, "--profile", prof,
		"--write-profiles", filepath.Join(dir, "d"), "--svg", svg)
	if code != exitOK || !strings.HasPrefix(out, "<!DOCTYPE html>") || !strings.HasSuffix(out, "</html>\n") {
		t.Fatalf("diff: exit %d, %s\n%.300s", code, errOut, out)
	}
	if !strings.Contains(errOut, "Merged profiles written") {
		t.Errorf("diff: stderr lacks the profiles line: %s", errOut)
	}
	b, err := os.ReadFile(svg)
	if err != nil || !strings.HasPrefix(string(b), "<svg ") || !strings.Contains(string(b), "k6_name=/car") {
		t.Errorf("--svg: %v\n%.200s", err, b)
	}
	if code, _, errOut := pyrRun(t, "runs", "--format", "html", "--pyroscope", "http://127.0.0.1:1", "--service", "s"); code != exitUsage ||
		!strings.Contains(errOut, "--format html is for report and diff") {
		t.Errorf("runs --format html: exit %d: %s", code, errOut)
	}
}
