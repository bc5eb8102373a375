package report

import (
	"errors"
	"fmt"
	"time"

	"github.com/google/pprof/profile"
	"github.com/k6labels/k6labels/cmd/k6labels/k6results"
)

// A Span is the time range a set of profiles covers.
type Span struct{ Start, End time.Time }

// IsZero tells whether s is unknown.
func (s Span) IsZero() bool { return s.Start.IsZero() && s.End.IsZero() }

// String writes s as "START – END (N.Ns)" in RFC 3339 UTC.
func (s Span) String() string {
	return fmt.Sprintf("%s – %s (%.1fs)", s.Start.UTC().Format(time.RFC3339Nano), s.End.UTC().Format(time.RFC3339Nano), s.End.Sub(s.Start).Seconds())
}

// ProfileSpan returns the time ps cover, from the earliest TimeNanos to the
// latest TimeNanos+DurationNanos (profiles of several replicas read at
// once share one span). ok is false when a profile has no start time or
// no duration (Pyroscope's merged profiles): then the span is unknown.
func ProfileSpan(ps ...*profile.Profile) (s Span, ok bool) {
	for _, p := range ps {
		if p.TimeNanos <= 0 || p.DurationNanos <= 0 {
			return Span{}, false
		}
		start := time.Unix(0, p.TimeNanos).UTC()
		end := start.Add(time.Duration(p.DurationNanos))
		if s.Start.IsZero() || start.Before(s.Start) {
			s.Start = start
		}
		if end.After(s.End) {
			s.End = end
		}
	}
	return s, len(ps) > 0
}

// SpanSlack widens a profile's span on both sides when k6 requests are
// counted in it: runtime/pprof stamps a profile a little after profiling
// began (when its writer starts), and a request that ends just outside the
// span spent part of its CPU inside.
const SpanSlack = 100 * time.Millisecond

// ErrNoOverlap is returned, wrapped, when k6's results and the profiles
// cover times that do not, or barely, overlap.
var ErrNoOverlap = errors.New("the k6 results are not of the profiled time")

// MinOverlap is the least share of the shorter of the two time ranges
// (profiles', k6 results') that they must have in common: less, and the
// k6 results are of another run, or too few of the profiled seconds.
const MinOverlap = 0.5

// CheckOverlap checks k6 results k, read with the profiles' span (zero:
// unknown, nothing to check) as their window: it returns an error wrapping
// [ErrNoOverlap], with both time ranges, when no request is in the span,
// or when the two overlap by less than [MinOverlap] of the shorter one.
func CheckOverlap(span Span, k *k6results.Results) error {
	if span.IsZero() || k == nil {
		return nil
	}
	all := Span{k.AllStart, k.AllEnd}
	if k.Total == 0 {
		return fmt.Errorf("%w: none of its %d requests (%s) is in the profiles' time span (%s): give the k6 results of the run the profiles were taken during",
			ErrNoOverlap, k.Outside, all, span)
	}
	start, end := span.Start, span.End
	if all.Start.After(start) {
		start = all.Start
	}
	if all.End.Before(end) {
		end = all.End
	}
	overlap := end.Sub(start)
	shorter := min(span.End.Sub(span.Start), all.End.Sub(all.Start))
	if float64(overlap) < MinOverlap*float64(shorter) {
		return fmt.Errorf("%w: its requests (%s) and the profiles (%s) have only %.1fs in common, less than %.0f%% of the shorter: give the k6 results of the run the profiles were taken during, or profile the whole run",
			ErrNoOverlap, all, span, overlap.Seconds(), 100*MinOverlap)
	}
	return nil
}

// AlignLine returns the header line that says which of the k6 requests
// were counted, when some were outside the profiles' span; "" if none.
func (r *Report) AlignLine() string {
	if r.Outside == 0 {
		return ""
	}
	return fmt.Sprintf("Counted: only the %d of %d k6 requests made while the profiles ran; the %d others (the k6 results run %s) are outside them.",
		r.Requests, r.Requests+r.Outside, r.Outside, r.K6Span)
}

// A Window is CPU known to lie somewhere in a span, no closer: that of a
// point of a Pyroscope series, whose profiles were stamped within its
// step and each hold the CPU of the window after its stamp.
type Window struct {
	Span
	CPU time.Duration
}

// WindowsSpan returns the time ws cover, from the earliest start to the
// latest end, as [ProfileSpan] does for profiles; ok is false when ws is
// empty.
func WindowsSpan(ws []Window) (s Span, ok bool) {
	for _, w := range ws {
		if s.Start.IsZero() || w.Start.Before(s.Start) {
			s.Start = w.Start
		}
		if w.End.After(s.End) {
			s.End = w.End
		}
	}
	return s, len(ws) > 0
}

// CheckWindows checks k6 results k, read and checked by [CheckOverlap]
// with the span of ws as their window, against the windows ws in which a
// run's CPU lies: CPU in a window that ends before k's first counted
// request or starts after its last (widened by [SpanSlack]) was spent
// while none of them was made. It returns an error wrapping
// [ErrNoOverlap], with both time ranges, when less than [MinOverlap] of the
// CPU is in windows that meet k's range; else the CPU outside (0 if none),
// which a report of ws counts over k's requests.
func CheckWindows(ws []Window, k *k6results.Results) (time.Duration, error) {
	if len(ws) == 0 || k == nil || k.Total == 0 {
		return 0, nil
	}
	reqs := Span{k.Start, k.End}
	from, to := reqs.Start.Add(-SpanSlack), reqs.End.Add(SpanSlack)
	var all, outside time.Duration
	for _, w := range ws {
		all += w.CPU
		if !w.End.After(from) || w.Start.After(to) {
			outside += w.CPU
		}
	}
	if all > 0 && float64(all-outside) < MinOverlap*float64(all) {
		span, _ := WindowsSpan(ws)
		return 0, fmt.Errorf("%w: its requests (%s) can account for only %.2fs of the %.2fs of CPU in the profiles (%s), less than %.0f%%: the other %.2fs is in profiles whose time holds none of them: give the k6 results of the run the profiles were taken during",
			ErrNoOverlap, reqs, (all - outside).Seconds(), all.Seconds(), span, 100*MinOverlap, outside.Seconds())
	}
	return outside, nil
}
