package report

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/pprof/profile"
)

// ProfileSource is a [Source] over pprof CPU profiles held in memory, merged
// into one; their samples carry the k6 labels (runtime/pprof labels).
type ProfileSource struct {
	name   string
	p      *profile.Profile
	period time.Duration
}

// NewProfileSource merges the CPU profiles ps (profile.Merge) into a
// source described by name. It returns an error wrapping [ErrNotCPU] for a
// profile without a cpu/nanoseconds sample value.
func NewProfileSource(name string, ps ...*profile.Profile) (*ProfileSource, error) {
	if len(ps) == 0 {
		return nil, fmt.Errorf("%w: no profile given", ErrNoData)
	}
	for _, p := range ps {
		if err := CheckCPU(p); err != nil {
			return nil, err
		}
	}
	if err := CheckValues(ps...); err != nil {
		return nil, err
	}
	p := ps[0]
	if len(ps) > 1 {
		var err error
		if p, err = profile.Merge(ps); err != nil {
			return nil, fmt.Errorf("merging %d CPU profiles: %w", len(ps), err)
		}
	}
	return &ProfileSource{name: name, p: splitConnGoroutines(p), period: 10 * time.Millisecond}, nil
}

// CheckCPU returns an error wrapping [ErrNotCPU] unless p has a
// cpu/nanoseconds sample value, naming the sample types p has instead.
func CheckCPU(p *profile.Profile) error {
	if cpuIndex(p) >= 0 {
		return nil
	}
	var types []string
	for _, st := range p.SampleType {
		types = append(types, st.Type+"/"+st.Unit)
	}
	have := "no sample types (an empty profile)"
	if len(types) > 0 {
		have = "sample types " + strings.Join(types, ", ")
	}
	return fmt.Errorf("%w: it has %s; give a CPU profile (/debug/pprof/profile, not /debug/pprof/heap or allocs)", ErrNotCPU, have)
}

// String implements [Source].
func (s *ProfileSource) String() string { return s.name }

// Totals implements [Source].
func (s *ProfileSource) Totals(context.Context) (map[string]Count, error) {
	c := map[string]Count{}
	ci, ni := cpuIndex(s.p), countIndex(s.p)
	for _, smp := range s.p.Sample {
		v := Count{CPU: time.Duration(smp.Value[ci])}
		if ni >= 0 {
			v.Samples = smp.Value[ni]
		} else {
			v.Samples = int64((v.CPU + s.period/2) / s.period)
		}
		id := first(smp.Label[LabelRunID])
		if id == "" && (first(smp.Label[LabelScenario]) != "" || first(smp.Label[LabelName]) != "") {
			id = LocalRun
		}
		if len(smp.Label[connLabel]) > 0 {
			id = ConnectionRow
		}
		c[id] = c[id].Plus(v)
	}
	return c, nil
}

// Values implements [Source].
func (s *ProfileSource) Values(_ context.Context, label string) ([]string, error) {
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

// Profile implements [Source]: a profile that shares s's locations and
// functions and holds the matching samples.
func (s *ProfileSource) Profile(_ context.Context, match []Matcher) (*profile.Profile, error) {
	q := s.empty()
	for _, smp := range s.p.Sample {
		if matches(smp, match) {
			q.Sample = append(q.Sample, smp)
		}
	}
	return q, nil
}

// Split implements [Source] in one pass over the samples: each part's
// Profile shares s's locations and functions and holds its samples.
func (s *ProfileSource) Split(_ context.Context, g Grouping, scope []Matcher) (map[string]Part, error) {
	profs := map[string]*profile.Profile{}
	vals := make([]string, len(g))
	for _, smp := range s.p.Sample {
		if !matches(smp, scope) || !labelValues(smp, g, vals) {
			continue
		}
		k := TupleKey(vals)
		p := profs[k]
		if p == nil {
			p = s.empty()
			profs[k] = p
		}
		p.Sample = append(p.Sample, smp)
	}
	out := make(map[string]Part, len(profs))
	for k, p := range profs {
		out[k] = Part{Profile: p}
	}
	return out, nil
}

// labelValues sets vals to the sample's values of g's labels and tells
// whether it has all of them.
func labelValues(smp *profile.Sample, g Grouping, vals []string) bool {
	for i, label := range g {
		if vals[i] = first(smp.Label[label]); vals[i] == "" {
			return false
		}
	}
	return true
}

// empty returns a profile without samples that shares s's header,
// locations and functions.
func (s *ProfileSource) empty() *profile.Profile {
	return &profile.Profile{
		SampleType: s.p.SampleType, DefaultSampleType: s.p.DefaultSampleType,
		Mapping: s.p.Mapping, Location: s.p.Location, Function: s.p.Function,
		Comments: s.p.Comments, DropFrames: s.p.DropFrames, KeepFrames: s.p.KeepFrames,
		TimeNanos: s.p.TimeNanos, DurationNanos: s.p.DurationNanos, PeriodType: s.p.PeriodType, Period: s.p.Period,
	}
}

func matches(s *profile.Sample, match []Matcher) bool {
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
