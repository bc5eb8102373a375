package report

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
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
		c[id] = c[id].add(v)
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
	q := &profile.Profile{
		SampleType: s.p.SampleType, DefaultSampleType: s.p.DefaultSampleType,
		Mapping: s.p.Mapping, Location: s.p.Location, Function: s.p.Function,
		Comments: s.p.Comments, DropFrames: s.p.DropFrames, KeepFrames: s.p.KeepFrames,
		TimeNanos: s.p.TimeNanos, DurationNanos: s.p.DurationNanos, PeriodType: s.p.PeriodType, Period: s.p.Period,
	}
	for _, smp := range s.p.Sample {
		if matches(smp, match) {
			q.Sample = append(q.Sample, smp)
		}
	}
	return q, nil
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

// maxProfileBytes bounds a profile read from a file or URL (after gzip), so
// that a wrong URL cannot fill memory.
const maxProfileBytes = 512 << 20

// ReadProfile reads a pprof CPU profile from a file or from an http(s) URL
// such as http://host:port/debug/pprof/profile?seconds=30 (the request lasts
// as long as the profile). It returns an error wrapping [ErrNotCPU] for
// another kind of profile.
func ReadProfile(ctx context.Context, hc *http.Client, where string) (*profile.Profile, error) {
	var r io.Reader
	if u, err := url.Parse(where); err == nil && (u.Scheme == "http" || u.Scheme == "https") {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, where, nil)
		if err != nil {
			return nil, err
		}
		if hc == nil {
			hc = http.DefaultClient
		}
		resp, err := hc.Do(req)
		if err != nil {
			return nil, fmt.Errorf("reading profile: %w (is the service running and serving /debug/pprof/?)", err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
			return nil, fmt.Errorf("reading profile %s: %s: %s (the CPU profile of a Go service is at /debug/pprof/profile once it imports net/http/pprof)",
				where, resp.Status, strings.TrimSpace(string(body)))
		}
		r = resp.Body
	} else {
		f, err := os.Open(where)
		if err != nil {
			return nil, fmt.Errorf("reading profile: %w (give pprof CPU profile files or /debug/pprof/profile URLs)", err)
		}
		defer f.Close()
		r = f
	}
	p, err := profile.Parse(io.LimitReader(r, maxProfileBytes))
	if err != nil {
		return nil, fmt.Errorf("profile %s: not a pprof profile: %w (give a CPU profile such as /debug/pprof/profile writes; go tool pprof reads it)", where, err)
	}
	if err := CheckCPU(p); err != nil {
		return nil, fmt.Errorf("profile %s: %w", where, err)
	}
	return p, nil
}
