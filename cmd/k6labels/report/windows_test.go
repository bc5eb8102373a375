package report_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/k6labels/k6labels/cmd/k6labels/k6results"
	"github.com/k6labels/k6labels/cmd/k6labels/report"
)

// TestCheckWindows: CPU in windows that meet none of the requests (beyond
// report.SpanSlack) is what the requests cannot account for; less than half
// of the CPU in windows that meet them is refused, else the CPU outside is
// returned.
func TestCheckWindows(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 18, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	win := func(from, to float64, cpu time.Duration) report.Window {
		return report.Window{Span: report.Span{Start: at(from), End: at(to)}, CPU: cpu}
	}
	k := &k6results.Results{Total: 100, Start: at(40), End: at(55)}
	for _, c := range []struct {
		name    string
		ws      []report.Window
		outside time.Duration
		refused bool
	}{
		{"none", nil, 0, false},
		{"all meet", []report.Window{win(10, 41, 5*time.Second), win(54, 85, 5*time.Second)}, 0, false},
		{"ends within the slack", []report.Window{win(9.95, 39.95, time.Second), win(40, 71, 9*time.Second)}, 0, false},
		{"ends before the slack", []report.Window{win(9.85, 39.85, time.Second), win(40, 71, 9*time.Second)}, time.Second, false},
		{"after, half", []report.Window{win(40, 71, 5*time.Second), win(55.2, 86, 5*time.Second)}, 5 * time.Second, false},
		{"after, more than half", []report.Window{win(40, 71, 5*time.Second), win(55.2, 86, 5*time.Second+time.Millisecond)}, 0, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			outside, err := report.CheckWindows(c.ws, k)
			if c.refused {
				if !errors.Is(err, report.ErrNoOverlap) || !strings.Contains(err.Error(), "less than 50%") {
					t.Errorf("err %v, want a refusal", err)
				}
				return
			}
			if err != nil || outside != c.outside {
				t.Errorf("outside %s, err %v; want %s", outside, err, c.outside)
			}
		})
	}
	span, ok := report.WindowsSpan([]report.Window{win(40, 71, 0), win(10, 41, 0), win(20, 50, 0)})
	if !ok || span != (report.Span{Start: at(10), End: at(71)}) {
		t.Errorf("WindowsSpan %v %v", span, ok)
	}
	if _, ok := report.WindowsSpan(nil); ok {
		t.Error("WindowsSpan of none is known")
	}
}
