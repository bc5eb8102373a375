package pyroscopetest

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"
)

// Answers from a labelled profile. A run that no Pyroscope recording holds
// (such as one recorded in a test) is pushed as a runtime/pprof profile
// whose samples carry the labels; the server answers from it as the
// recordings show Pyroscope does: SelectSeries sums the CPU of the samples
// its selector matches per tuple of group_by values (a sample lacking a
// label is in the series without it), LabelValues lists a label's values on
// them, and SelectMergeProfile merges them into a profile of CPU alone,
// stacks kept and labels dropped. The profile holds no time: it is in every
// window, its series one point just past the end of the window's first step.

// pushed is a labelled profile the server answers from, for one service,
// with the index of its CPU value.
type pushed struct {
	service string
	p       *profile.Profile
	cpu     int
}

// AddProfile makes the server answer the SelectSeries, LabelValues and
// SelectMergeProfile requests of service that no exchange matches from p,
// a CPU profile whose samples carry the labels (runtime/pprof). It fails
// t when p has no cpu/nanoseconds value.
func (s *Server) AddProfile(service string, p *profile.Profile) {
	s.t.Helper()
	ci := slices.IndexFunc(p.SampleType, func(st *profile.ValueType) bool { return st.Type == "cpu" && st.Unit == "nanoseconds" })
	if ci < 0 {
		s.t.Fatalf("pyroscopetest: AddProfile of %s: no cpu/nanoseconds value", service)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pushed = append(s.pushed, pushed{service: service, p: p, cpu: ci})
}

// fromProfile answers a request to path with body from a pushed profile of
// its selector's service; it returns the answer, its content type, the
// name its hits are counted under, and whether it answers.
func (s *Server) fromProfile(path string, ct string, body []byte) ([]byte, string, string, bool) {
	switch method := path[strings.LastIndex(path, "/")+1:]; {
	case method == "SelectSeries" && ct == "application/json":
		var req seriesRequest
		if json.Unmarshal(body, &req) != nil || req.Step <= 0 {
			return nil, "", "", false
		}
		pu, ms, ok := s.pushedOf(req.Selector)
		if !ok {
			return nil, "", "", false
		}
		b, err := pu.series(req, ms)
		return b, ct, "profile " + method, err == nil
	case method == "LabelValues" && ct == "application/json":
		var req labelValuesRequest
		if json.Unmarshal(body, &req) != nil || len(req.Matchers) != 1 {
			return nil, "", "", false
		}
		pu, ms, ok := s.pushedOf(req.Matchers[0])
		if !ok {
			return nil, "", "", false
		}
		b, err := pu.values(req.Name, ms)
		return b, ct, "profile " + method, err == nil
	case method == "SelectMergeProfile":
		sel, ok := Exchange{Path: path, ContentType: ct, Body: body}.MergeSelector()
		if !ok {
			return nil, "", "", false
		}
		pu, ms, ok := s.pushedOf(sel)
		if !ok {
			return nil, "", "", false
		}
		b, err := pu.merge(ms)
		return b, ct, "profile " + method, err == nil
	}
	return nil, "", "", false
}

// pushedOf returns the pushed profile of sel's service and sel's other
// matchers.
func (s *Server) pushedOf(sel string) (pushed, []matcher, bool) {
	svc, ms, ok := split(sel)
	if !ok {
		return pushed{}, nil, false
	}
	for _, pu := range s.pushed {
		if pu.service == svc.value {
			return pu, ms, true
		}
	}
	return pushed{}, nil, false
}

// selects tells whether smp matches every matcher; an empty value matches
// the samples without the label.
func selects(smp *profile.Sample, ms []matcher) bool {
	for _, m := range ms {
		v := ""
		if vs := smp.Label[m.name]; len(vs) > 0 {
			v = vs[0]
		}
		if (v == m.value) == m.not {
			return false
		}
	}
	return true
}

func (pu pushed) series(req seriesRequest, ms []matcher) ([]byte, error) {
	sums := map[string]float64{}
	labels := map[string][]seriesLabel{}
	for _, smp := range pu.p.Sample {
		if !selects(smp, ms) {
			continue
		}
		var ls []seriesLabel
		var key []string
		for _, g := range req.GroupBy {
			if vs := smp.Label[g]; len(vs) > 0 && vs[0] != "" {
				ls = append(ls, seriesLabel{g, vs[0]})
				key = append(key, g+"="+strconv.Quote(vs[0]))
			}
		}
		k := strings.Join(key, ",")
		sums[k] += float64(smp.Value[pu.cpu])
		labels[k] = ls
	}
	// A millisecond past the first step: the start was truncated to the ms.
	stamp := strconv.FormatInt(req.Start+int64(req.Step*1000)+1, 10)
	var out seriesAnswer
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range sums {
			if !yield(k) {
				return
			}
		}
	}) {
		if sums[k] > 0 {
			out.Series = append(out.Series, struct {
				Labels []seriesLabel `json:"labels,omitempty"`
				Points []seriesPoint `json:"points"`
			}{labels[k], []seriesPoint{{sums[k], stamp}}})
		}
	}
	if len(out.Series) == 0 {
		return []byte("{}"), nil
	}
	return json.Marshal(out)
}

func (pu pushed) values(name string, ms []matcher) ([]byte, error) {
	var names []string
	for _, smp := range pu.p.Sample {
		if vs := smp.Label[name]; len(vs) > 0 && vs[0] != "" && selects(smp, ms) && !slices.Contains(names, vs[0]) {
			names = append(names, vs[0])
		}
	}
	if len(names) == 0 {
		return []byte("{}"), nil
	}
	slices.Sort(names)
	return json.Marshal(map[string][]string{"names": names})
}

func (pu pushed) merge(ms []matcher) ([]byte, error) {
	src := pu.p
	out := &profile.Profile{
		SampleType: []*profile.ValueType{src.SampleType[pu.cpu]},
		PeriodType: src.PeriodType, Period: src.Period,
		Mapping: src.Mapping, Location: src.Location, Function: src.Function,
	}
	for _, smp := range src.Sample {
		if selects(smp, ms) {
			out.Sample = append(out.Sample, &profile.Sample{Location: smp.Location, Value: []int64{smp.Value[pu.cpu]}})
		}
	}
	var b bytes.Buffer
	err := out.WriteUncompressed(&b)
	return b.Bytes(), err
}
