// Package pprofsource is the [report.Source] of pprof CPU profiles held in
// memory, whose samples carry the k6 labels: split in one pass over the
// samples per grouping. Connection goroutines that keep a request's labels
// are counted apart ([report.ConnectionRow]).
package pprofsource

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/pprof/profile"
	"github.com/k6labels/k6labels/cmd/k6labels/report"
)

// Source is a [report.Source] over pprof CPU profiles held in memory, merged
// into one; their samples carry the k6 labels (runtime/pprof labels).
type Source struct {
	name   string
	p      *profile.Profile
	period time.Duration
}

// New merges the CPU profiles ps (profile.Merge) into a
// source described by name. It returns an error wrapping [report.ErrNotCPU] for a
// profile without a cpu/nanoseconds sample value.
func New(name string, ps ...*profile.Profile) (*Source, error) {
	if len(ps) == 0 {
		return nil, fmt.Errorf("%w: no profile given", report.ErrNoData)
	}
	for _, p := range ps {
		if err := report.CheckCPU(p); err != nil {
			return nil, err
		}
	}
	if err := report.CheckValues(ps...); err != nil {
		return nil, err
	}
	p := ps[0]
	if len(ps) > 1 {
		var err error
		if p, err = profile.Merge(ps); err != nil {
			return nil, fmt.Errorf("merging %d CPU profiles: %w", len(ps), err)
		}
	}
	return &Source{name: name, p: splitConnGoroutines(p), period: 10 * time.Millisecond}, nil
}

// Whole returns the merged profile the source splits.
func (s *Source) Whole() *profile.Profile { return s.p }

// String implements [report.Source].
func (s *Source) String() string { return s.name }

// Totals implements [report.Source].
func (s *Source) Totals(context.Context) (map[string]report.Count, error) {
	c := map[string]report.Count{}
	ci, ni := report.CPUIndex(s.p), report.CountIndex(s.p)
	for _, smp := range s.p.Sample {
		v := report.Count{CPU: time.Duration(smp.Value[ci])}
		if ni >= 0 {
			v.Samples = smp.Value[ni]
		} else {
			v.Samples = int64((v.CPU + s.period/2) / s.period)
		}
		id := first(smp.Label[report.LabelRunID])
		if id == "" && (first(smp.Label[report.LabelScenario]) != "" || first(smp.Label[report.LabelName]) != "") {
			id = report.LocalRun
		}
		if len(smp.Label[connLabel]) > 0 {
			id = report.ConnectionRow
		}
		c[id] = c[id].Plus(v)
	}
	return c, nil
}

// Values implements [report.Source].
func (s *Source) Values(_ context.Context, label string) ([]string, error) {
	seen := map[string]bool{}
	for _, smp := range s.p.Sample {
		if v := first(smp.Label[label]); v != "" {
			seen[v] = true
		}
	}
	out := make([]string, 0, len(seen))
	for v := range seen {
		out = append(out, v)
	}
	slices.Sort(out)
	return out, nil
}

// Profile implements [report.Source]: a profile that shares s's locations and
// functions and holds the matching samples.
func (s *Source) Profile(_ context.Context, match []report.Matcher) (*profile.Profile, error) {
	q := s.empty()
	for _, smp := range s.p.Sample {
		if matches(smp, match) {
			q.Sample = append(q.Sample, smp)
		}
	}
	return q, nil
}

// Split implements [report.Source] in one pass over the samples: each part's
// Profile shares s's locations and functions and holds its samples.
func (s *Source) Split(_ context.Context, g report.Grouping, scope []report.Matcher) (map[string]report.Part, error) {
	profs := map[string]*profile.Profile{}
	vals := make([]string, len(g))
	for _, smp := range s.p.Sample {
		if !matches(smp, scope) || !labelValues(smp, g, vals) {
			continue
		}
		k := report.TupleKey(vals)
		p := profs[k]
		if p == nil {
			p = s.empty()
			profs[k] = p
		}
		p.Sample = append(p.Sample, smp)
	}
	out := make(map[string]report.Part, len(profs))
	for k, p := range profs {
		out[k] = report.Part{Profile: p}
	}
	return out, nil
}

// labelValues sets vals to the sample's values of g's labels and tells
// whether it has all of them.
func labelValues(smp *profile.Sample, g report.Grouping, vals []string) bool {
	for i, label := range g {
		if vals[i] = first(smp.Label[label]); vals[i] == "" {
			return false
		}
	}
	return true
}

// empty returns a profile without samples that shares s's header,
// locations and functions.
func (s *Source) empty() *profile.Profile {
	return &profile.Profile{
		SampleType: s.p.SampleType, DefaultSampleType: s.p.DefaultSampleType,
		Mapping: s.p.Mapping, Location: s.p.Location, Function: s.p.Function,
		Comments: s.p.Comments, DropFrames: s.p.DropFrames, KeepFrames: s.p.KeepFrames,
		TimeNanos: s.p.TimeNanos, DurationNanos: s.p.DurationNanos, PeriodType: s.p.PeriodType, Period: s.p.Period,
	}
}

func matches(s *profile.Sample, match []report.Matcher) bool {
	for _, m := range match {
		if (first(s.Label[m.Name]) == m.Value) == m.Not {
			return false
		}
	}
	return true
}

func first(vs []string) string {
	if len(vs) == 0 {
		return ""
	}
	return vs[0]
}

// connLabel marks, in a [Source]'s profile, a sample of a connection
// goroutine; its k6 labels are taken off.
const connLabel = report.ConnLabel

// splitConnGoroutines returns p with the k6 labels taken off the samples of
// connection goroutines that carry them (marked with connLabel instead);
// p itself is not changed.
func splitConnGoroutines(p *profile.Profile) *profile.Profile {
	var out *profile.Profile
	for i, s := range p.Sample {
		if len(s.Label[report.LabelRunID]) == 0 && len(s.Label[report.LabelScenario]) == 0 && len(s.Label[report.LabelName]) == 0 {
			continue
		}
		if !report.ConnGoroutine(s) {
			continue
		}
		if out == nil {
			out = &profile.Profile{
				SampleType: p.SampleType, DefaultSampleType: p.DefaultSampleType,
				Sample:  append([]*profile.Sample(nil), p.Sample...),
				Mapping: p.Mapping, Location: p.Location, Function: p.Function,
				Comments: p.Comments, DropFrames: p.DropFrames, KeepFrames: p.KeepFrames,
				TimeNanos: p.TimeNanos, DurationNanos: p.DurationNanos, PeriodType: p.PeriodType, Period: p.Period,
			}
		}
		c := *s
		c.Label = map[string][]string{connLabel: {"true"}}
		for k, v := range s.Label {
			if k != report.LabelRunID && k != report.LabelScenario && k != report.LabelName {
				c.Label[k] = v
			}
		}
		out.Sample[i] = &c
	}
	if out == nil {
		return p
	}
	return out
}
