package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/k6labels/k6labels/cmd/k6labels/internal/fixture"
)

// TestErrorsSayWhatToDo: a runtime/pprof profile without k6 labels (the
// real local/ profile with its labels taken off) blames the middleware and
// k6's helper, not Pyroscope; k6's --summary-export file of a real run
// names the k6 outputs to use.
func TestErrorsSayWhatToDo(t *testing.T) {
	fx := fixture.Dir(t)
	b, err := os.ReadFile(filepath.Join(fx, "local", "fx4.cpu.pb.gz"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := profile.ParseData(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range p.Sample {
		s.Label = nil
	}
	bare := filepath.Join(t.TempDir(), "bare.pb.gz")
	f, err := os.Create(bare)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Write(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, c := range []struct {
		name string
		args []string
		want []string
		not  string
	}{
		{"no labels", []string{"report", bare}, []string{"carries k6 labels", "k6labels.LabelsFromBaggageHandler", "http-instrumentation-pyroscope"}, "--pyroscope"},
		{"summary export", []string{"report", "--k6", filepath.Join(fx, "k6", "run-fx1-summary.json"), filepath.Join(fx, "local", "fx4.cpu.pb.gz")},
			[]string{"run-fx1-summary.json", "a k6 summary, not the results of each request", "run k6 with --out json=FILE or --out csv=FILE"}, "is not JSON"},
	} {
		code, _, stderr := runCLI(t, c.args...)
		if code != exitError || strings.Contains(stderr, c.not) {
			t.Errorf("%s: exit %d, want %d without %q: %s", c.name, code, exitError, c.not, stderr)
		}
		for _, w := range c.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%s: stderr does not say %q: %s", c.name, w, stderr)
			}
		}
	}
}
