package trace

import (
	"cmp"
	"slices"
	"strings"

	"github.com/k6labels/k6labels/cmd/k6labels/report"
	"github.com/k6labels/k6labels/cmd/k6labels/stats"
)

// Metric is one measure of a request.
type Metric int

// The metrics of a row, in the order reports list them; Blocked+r is the
// blocked time for reason r.
const (
	Wall Metric = iota
	CPU
	Runnable
	BlockedAll
	Blocked
	NumMetrics = Blocked + Metric(NumReasons)
)

// String returns the metric's name in reports.
func (m Metric) String() string {
	switch m {
	case Wall:
		return "wall"
	case CPU:
		return "cpu"
	case Runnable:
		return "runnable"
	case BlockedAll:
		return "blocked"
	}
	return "blocked_" + Reason(m-Blocked).String()
}

// Value returns metric m of r in nanoseconds.
func (r *Request) Value(m Metric) int64 {
	switch m {
	case Wall:
		return r.Wall
	case CPU:
		return r.CPU
	case Runnable:
		return r.Runnable
	case BlockedAll:
		return r.BlockedTotal()
	}
	return r.Blocked[m-Blocked]
}

// Summary is the distribution of one metric over a row's requests, in
// nanoseconds; percentiles are nearest-rank.
type Summary struct {
	Mean, P50, P95, P99 float64
}

// Row is one row of a trace report: the requests whose labels have the
// row's values for its grouping.
type Row struct {
	Grouping report.Grouping
	Values   []string // one per label of Grouping
	Requests int
	Cut      int // requests the window cut, not measured
	Stats    [NumMetrics]Summary
	Top      []StackTime // blocking stacks by blocked time, most first
	samples  []int       // indexes into Trace.Requests
}

// StackTime is one blocking stack's blocked time in a row, in total and per
// request of the row.
type StackTime struct {
	Stack
	Total      int64
	PerRequest float64
}

// Key returns the row's values joined by " × ".
func (r *Row) Key() string { return strings.Join(r.Values, " × ") }

// Samples returns metric m of each of the row's requests, in nanoseconds.
func (r *Row) Samples(t *Trace, m Metric) []float64 {
	out := make([]float64, len(r.samples))
	for i, j := range r.samples {
		out[i] = float64(t.Requests[j].Value(m))
	}
	return out
}

// Rows groups the requests of t by each grouping, with top blocking stacks
// per row, rows ordered by the grouping, then by total wall time.
func (t *Trace) Rows(groupings []report.Grouping, top int) []*Row {
	var out []*Row
	for _, g := range groupings {
		byKey := map[string]*Row{}
		var rows []*Row
		rowOf := func(labels int) *Row {
			vals := make([]string, len(g))
			for i, name := range g {
				vals[i] = t.Labels[labels][name]
			}
			k := strings.Join(vals, "\x00")
			r := byKey[k]
			if r == nil {
				r = &Row{Grouping: g, Values: vals}
				byKey[k] = r
				rows = append(rows, r)
			}
			return r
		}
		for i := range t.Requests {
			r := rowOf(t.Requests[i].Labels)
			r.samples = append(r.samples, i)
		}
		for labels, n := range t.Cut {
			rowOf(labels).Cut += n
		}
		stacks := map[*Row]map[int]int64{}
		for k, d := range t.BlockedStacks {
			r := rowOf(k.Labels)
			if stacks[r] == nil {
				stacks[r] = map[int]int64{}
			}
			stacks[r][k.Stack] += d
		}
		for _, r := range rows {
			r.Requests = len(r.samples)
			for m := range NumMetrics {
				r.Stats[m] = Summarize(r.Samples(t, m))
			}
			for st, d := range stacks[r] {
				r.Top = append(r.Top, StackTime{Stack: t.Stacks[st], Total: d})
			}
			slices.SortFunc(r.Top, func(a, b StackTime) int {
				return cmp.Or(cmp.Compare(b.Total, a.Total), slices.Compare(a.Frames, b.Frames))
			})
			if len(r.Top) > top {
				r.Top = r.Top[:top]
			}
			for i := range r.Top {
				if r.Requests > 0 {
					r.Top[i].PerRequest = float64(r.Top[i].Total) / float64(r.Requests)
				}
			}
		}
		slices.SortStableFunc(rows, func(a, b *Row) int {
			return cmp.Or(cmp.Compare(b.Stats[Wall].Mean*float64(b.Requests), a.Stats[Wall].Mean*float64(a.Requests)),
				cmp.Compare(a.Key(), b.Key()))
		})
		out = append(out, rows...)
	}
	return out
}

// Summarize returns the mean and nearest-rank percentiles of xs, or a zero
// Summary for none.
func Summarize(xs []float64) Summary {
	if len(xs) == 0 {
		return Summary{}
	}
	s := slices.Sorted(slices.Values(xs))
	return Summary{Mean: stats.Mean(s), P50: stats.NearestRank(s, 0.50), P95: stats.NearestRank(s, 0.95), P99: stats.NearestRank(s, 0.99)}
}

// KeepRun keeps only the requests, cut requests and blocking stacks of the
// k6 test run id, and returns how many requests it kept.
func (t *Trace) KeepRun(id string) int {
	in := func(labels int) bool { return t.Labels[labels][report.LabelRunID] == id }
	kept := t.Requests[:0]
	for _, r := range t.Requests {
		if in(r.Labels) {
			kept = append(kept, r)
		}
	}
	t.Requests = kept
	for l := range t.Cut {
		if !in(l) {
			delete(t.Cut, l)
		}
	}
	for k := range t.BlockedStacks {
		if !in(k.Labels) {
			delete(t.BlockedStacks, k)
		}
	}
	return len(kept)
}
