// Package profiletest records real CPU profiles in tests and reads their
// samples with github.com/google/pprof/profile, so that tests across this
// repository's modules check labels the way Pyroscope and go tool pprof see
// them.
//
// Only one CPU profile can run in a process at a time: tests that use Record
// must not run in parallel with each other.
package profiletest

import (
	"bytes"
	"regexp"
	"runtime/pprof"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/pprof/profile"
)

// Record runs f under the CPU profiler and returns the decoded profile.
func Record(t testing.TB, f func()) *profile.Profile {
	t.Helper()
	var buf bytes.Buffer
	if err := pprof.StartCPUProfile(&buf); err != nil {
		t.Fatalf("start CPU profile: %v", err)
	}
	f()
	pprof.StopCPUProfile()
	p, err := profile.Parse(&buf)
	if err != nil {
		t.Fatalf("parse CPU profile: %v", err)
	}
	return p
}

// Spin burns CPU on the calling goroutine for about d. Call it from a function
// of your own, marked //go:noinline, so that its samples can be found by that
// function's name.
//
//go:noinline
func Spin(d time.Duration) {
	end := time.Now().Add(d)
	x := uint64(1)
	for time.Now().Before(end) {
		for i := 0; i < 1000; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	sink.Store(x) // keeps the loop from being optimised away
}

var sink atomic.Uint64

// Burn does n steps of arithmetic on the calling goroutine. Unlike Spin it
// is a fixed amount of CPU, not of wall-clock time, so on a loaded machine
// the work still collects its samples at pprof's 100 Hz, only later. About
// 80,000,000 steps make 0.1 s of CPU. Call it from a function of your own,
// marked //go:noinline, so that its samples can be found by that function's
// name.
//
//go:noinline
func Burn(n int) {
	x := uint64(1)
	for range n {
		x = x*6364136223846793005 + 1442695040888963407
	}
	sink.Store(x)
}

// HasFunc reports whether any frame of s is in a function whose name
// contains name.
func HasFunc(s *profile.Sample, name string) bool {
	for _, loc := range s.Location {
		for _, line := range loc.Line {
			if line.Function != nil && strings.Contains(line.Function.Name, name) {
				return true
			}
		}
	}
	return false
}

// Labels returns the string labels of s, one value per key.
func Labels(s *profile.Sample) map[string]string {
	m := make(map[string]string, len(s.Label))
	for k, v := range s.Label {
		if len(v) > 0 {
			m[k] = v[0]
		}
	}
	return m
}

// Samples returns the samples of p that have a frame in a function whose
// name contains name.
func Samples(p *profile.Profile, name string) []*profile.Sample {
	var out []*profile.Sample
	for _, s := range p.Sample {
		if HasFunc(s, name) {
			out = append(out, s)
		}
	}
	return out
}

var validName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

// CheckLabels fails t for every label of p that Pyroscope would reject: a
// name outside [a-zA-Z_][a-zA-Z0-9_]*, or a value that is not valid UTF-8 or
// is longer than maxValue bytes.
func CheckLabels(t testing.TB, p *profile.Profile, maxValue int) {
	t.Helper()
	for _, s := range p.Sample {
		for k, vs := range s.Label {
			if !validName.MatchString(k) {
				t.Errorf("invalid label name %q", k)
			}
			for _, v := range vs {
				if !utf8.ValidString(v) || len(v) > maxValue {
					t.Errorf("label %s has an invalid value %q", k, v)
				}
			}
		}
	}
}
