package pyroscopetest

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/pprof/profile"
)

// Derived answers. A query the recordings do not hold may still follow
// from them: a SelectSeries of fewer labels or a shorter window is a
// recorded SelectSeries filtered and summed; a LabelValues within one run
// is the recorded values whose recorded merged profile in that run has
// samples. The server answers such a query from the recordings when no
// exchange matches it exactly, and names the exchanges it used (Hits).

// seriesRequest is SelectSeries' request as the recordings spell it.
type seriesRequest struct {
	ProfileType string   `json:"profile_typeID"`
	Selector    string   `json:"label_selector"`
	Start       int64    `json:"start"`
	End         int64    `json:"end"`
	GroupBy     []string `json:"group_by"`
	Step        float64  `json:"step"`
}

type labelValuesRequest struct {
	Name     string   `json:"name"`
	Matchers []string `json:"matchers"`
	Start    int64    `json:"start"`
	End      int64    `json:"end"`
}

type seriesPoint struct {
	Value     float64 `json:"value"`
	Timestamp string  `json:"timestamp"`
}

type seriesLabel struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type seriesAnswer struct {
	Series []struct {
		Labels []seriesLabel `json:"labels,omitempty"`
		Points []seriesPoint `json:"points"`
	} `json:"series"`
}

// matcher is one name="value" (or !=) of a label selector.
type matcher struct {
	name, value string
	not         bool
}

// parseSelector parses {a="b",c!="d"} as Selector in package pyroscope
// writes it.
func parseSelector(s string) ([]matcher, bool) {
	if !strings.HasPrefix(s, "{") || !strings.HasSuffix(s, "}") {
		return nil, false
	}
	s = s[1 : len(s)-1]
	var out []matcher
	for s != "" {
		i := strings.IndexAny(s, "!=")
		if i <= 0 {
			return nil, false
		}
		m := matcher{name: s[:i]}
		s = s[i:]
		if strings.HasPrefix(s, "!=") {
			m.not, s = true, s[2:]
		} else {
			s = s[1:]
		}
		q, err := strconv.QuotedPrefix(s)
		if err != nil {
			return nil, false
		}
		m.value, _ = strconv.Unquote(q)
		out = append(out, m)
		s = strings.TrimPrefix(s[len(q):], ",")
	}
	return out, true
}

// split returns the service matcher and the others of a selector.
func split(sel string) (matcher, []matcher, bool) {
	ms, ok := parseSelector(sel)
	if !ok || len(ms) == 0 || ms[0].name != "service_name" || ms[0].not {
		return matcher{}, nil, false
	}
	return ms[0], ms[1:], true
}

// deriveSeries answers a SelectSeries from a recorded one of the same
// service, profile type and step over a window that holds the request's,
// on the same step grid, grouped by a label that is every label the
// request matches or groups by. It returns the answer and the exchange.
func (s *Server) deriveSeries(body []byte) ([]byte, string, bool) {
	var req seriesRequest
	if json.Unmarshal(body, &req) != nil || req.Step <= 0 {
		return nil, "", false
	}
	svc, ms, ok := split(req.Selector)
	if !ok {
		return nil, "", false
	}
	step := int64(req.Step * 1000)
	for _, x := range s.exchanges {
		var rec seriesRequest
		if !strings.HasSuffix(x.Path, "/SelectSeries") || x.Status != 200 || json.Unmarshal(x.Body, &rec) != nil {
			continue
		}
		rsvc, rms, ok := split(rec.Selector)
		if !ok || rsvc != svc || len(rms) != 0 || rec.ProfileType != req.ProfileType || rec.Start > req.Start || rec.End < req.End {
			continue
		}
		if emptyAnswer(x.Response) {
			return []byte("{}"), x.Name, true // a service without profiles there: empty for every query
		}
		if rec.Step != req.Step || (req.Start-rec.Start)%step != 0 || !groups(rec.GroupBy, req.GroupBy, ms) {
			continue
		}
		var ans seriesAnswer
		if json.Unmarshal(x.Response, &ans) != nil {
			continue
		}
		out := s.sumSeries(ans, req, ms, step)
		b, err := json.Marshal(out)
		if err != nil {
			return nil, "", false
		}
		if len(out.Series) == 0 {
			b = []byte("{}") // as the server answers an empty result
		}
		return b, x.Name, true
	}
	return nil, "", false
}

// groups tells whether a recording grouped by recorded holds every label
// a request groups by or matches (with =, not !=).
func groups(recorded, groupBy []string, ms []matcher) bool {
	for _, m := range ms {
		if m.not || !slices.Contains(recorded, m.name) {
			return false
		}
	}
	for _, g := range groupBy {
		if !slices.Contains(recorded, g) {
			return false
		}
	}
	return true
}

// sumSeries returns the series of a recorded answer that match ms, summed
// by the request's group_by labels, with the points in its window that the
// clock shows.
func (s *Server) sumSeries(ans seriesAnswer, req seriesRequest, ms []matcher, step int64) seriesAnswer {
	sums := map[string]map[int64]float64{}
	labelsOf := map[string][]seriesLabel{}
	for _, ser := range ans.Series {
		have := map[string]string{}
		for _, l := range ser.Labels {
			have[l.Name] = l.Value
		}
		if !slices.ContainsFunc(ms, func(m matcher) bool { return have[m.name] != m.value }) {
			var ls []seriesLabel
			for _, g := range req.GroupBy {
				if v := have[g]; v != "" {
					ls = append(ls, seriesLabel{g, v})
				}
			}
			k := fmt.Sprint(ls)
			if sums[k] == nil {
				sums[k], labelsOf[k] = map[int64]float64{}, ls
			}
			s.addPoints(sums[k], ser.Points, req, step)
		}
	}
	var out seriesAnswer
	for _, k := range slices.Sorted(maps.Keys(sums)) {
		if len(sums[k]) == 0 {
			continue
		}
		var pts []seriesPoint
		for _, t := range slices.Sorted(maps.Keys(sums[k])) {
			pts = append(pts, seriesPoint{sums[k][t], strconv.FormatInt(t, 10)})
		}
		out.Series = append(out.Series, struct {
			Labels []seriesLabel `json:"labels,omitempty"`
			Points []seriesPoint `json:"points"`
		}{labelsOf[k], pts})
	}
	return out
}

// addPoints adds to sum the points in the request's window that the clock
// shows, by timestamp.
func (s *Server) addPoints(sum map[int64]float64, pts []seriesPoint, req seriesRequest, step int64) {
	for _, p := range pts {
		t, err := strconv.ParseInt(p.Timestamp, 10, 64)
		if err != nil || t < req.Start || t > req.End || !s.visible(t, time.Duration(step)*time.Millisecond) {
			continue
		}
		sum[t] += p.Value
	}
}

// emptyAnswer tells whether a JSON answer holds nothing, as the server's
// {} for an unknown service.
func emptyAnswer(b []byte) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(b, &m) == nil && len(m) == 0
}

// deriveLabelValues answers a LabelValues of a selector with more matchers
// than a recorded one: the recorded values v whose recorded merged profile
// (protobuf) of the request's selector plus name="v" has samples. Every
// value needs such a recording, else there is no answer.
func (s *Server) deriveLabelValues(body []byte) ([]byte, string, bool) {
	var req labelValuesRequest
	if json.Unmarshal(body, &req) != nil || len(req.Matchers) != 1 {
		return nil, "", false
	}
	svc, ms, ok := split(req.Matchers[0])
	if !ok || len(ms) == 0 {
		return nil, "", false
	}
	recorded, from, ok := s.recordedValues(svc, req.Name, req.Start, req.End)
	if !ok {
		return nil, "", false
	}
	names := []string{}
	for _, v := range recorded {
		sel := strings.TrimSuffix(req.Matchers[0], "}") + "," + req.Name + "=" + strconv.Quote(v) + "}"
		has, found := s.mergeHasSamples(sel, req.Start, req.End)
		if !found {
			return nil, "", false
		}
		if has {
			names = append(names, v)
		}
	}
	b, err := json.Marshal(map[string][]string{"names": names})
	if err != nil {
		return nil, "", false
	}
	if len(names) == 0 {
		b = []byte("{}")
	}
	return b, from, true
}

// mergeHasSamples tells whether the recorded protobuf SelectMergeProfile of
// sel over the window has samples, and whether there is one.
func (s *Server) mergeHasSamples(sel string, start, end int64) (has, found bool) {
	for _, x := range s.exchanges {
		got, ok := x.MergeSelector()
		if !ok || got != sel || x.Status != 200 || mergeWindow(x) != [2]int64{start, end} {
			continue
		}
		if len(x.Response) == 0 {
			return false, true
		}
		p, err := profile.ParseData(x.Response)
		if err != nil {
			return false, false
		}
		return len(p.Sample) > 0, true
	}
	return false, false
}

// mergeWindow returns the start and end (fields 3 and 4) of a protobuf
// SelectMergeProfile request.
func mergeWindow(x Exchange) [2]int64 {
	var w [2]int64
	fields := protoFields(x.Body)
	w[0], w[1] = int64(fields[3]), int64(fields[4])
	return w
}

// visible tells whether a point whose step of length step ends at t ms
// has been uploaded by the server's clock (SetClock): a profile is
// uploaded when its window ends, for the step's earliest profile its
// start plus the window.
func (s *Server) visible(t int64, step time.Duration) bool {
	if s.clock == nil {
		return true
	}
	return !time.UnixMilli(t).Add(s.window - step).After(s.now)
}

// SetClock makes the server's SelectSeries answers hold only the points
// uploaded by now(), read once per request: a point is hidden until its
// step's start plus window (pyroscope-go uploads each CPU window when it
// ends), so that a test sees the answers fill in as now() advances.
// Merged profiles and label values are not changed.
func (s *Server) SetClock(now func() time.Time, window time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clock, s.window = now, window
}

// hideUnuploaded returns a recorded SelectSeries answer without the points
// the clock hides.
func (s *Server) hideUnuploaded(body, resp []byte) []byte {
	var ans seriesAnswer
	var req seriesRequest
	if s.clock == nil || json.Unmarshal(resp, &ans) != nil || json.Unmarshal(body, &req) != nil {
		return resp
	}
	step := time.Duration(req.Step * float64(time.Second))
	var out seriesAnswer
	for _, ser := range ans.Series {
		var pts []seriesPoint
		for _, p := range ser.Points {
			if t, err := strconv.ParseInt(p.Timestamp, 10, 64); err == nil && s.visible(t, step) {
				pts = append(pts, p)
			}
		}
		if len(pts) > 0 {
			ser.Points = pts
			out.Series = append(out.Series, ser)
		}
	}
	if len(out.Series) == 0 {
		return []byte("{}")
	}
	b, err := json.Marshal(out)
	if err != nil {
		return resp
	}
	return b
}

// deriveGroupedSeries answers a SelectSeries grouped by labels that no
// recorded series is grouped by together with the selector's matchers
// (one run's rows) from the recorded protobuf SelectMergeProfile of the
// same window: for each tuple of the labels' recorded values, the series
// of the selector plus those values is the CPU of its merged profile, in
// one point stamped at the end of the window's first step (merged
// profiles carry no time). Every tuple needs such a recording; the series
// of samples lacking a label, which no recording selects, are left out.
func (s *Server) deriveGroupedSeries(body []byte) ([]byte, string, bool) {
	var req seriesRequest
	if json.Unmarshal(body, &req) != nil || req.Step <= 0 || len(req.GroupBy) == 0 {
		return nil, "", false
	}
	svc, ms, ok := split(req.Selector)
	if !ok {
		return nil, "", false
	}
	for _, m := range ms {
		if m.not {
			return nil, "", false
		}
	}
	tuples := [][]seriesLabel{nil}
	for _, g := range req.GroupBy {
		vals, _, ok := s.recordedValues(svc, g, req.Start, req.End)
		if !ok {
			return nil, "", false
		}
		var next [][]seriesLabel
		for _, t := range tuples {
			for _, v := range vals {
				next = append(next, append(slices.Clone(t), seriesLabel{g, v}))
			}
		}
		tuples = next
	}
	stamp := strconv.FormatInt(req.Start+int64(req.Step*1000), 10)
	var out seriesAnswer
	var from []string
	for _, t := range tuples {
		sel := strings.TrimSuffix(req.Selector, "}")
		for _, l := range t {
			sel += "," + l.Name + "=" + strconv.Quote(l.Value)
		}
		cpu, name, found := s.mergeCPU(sel+"}", req.Start, req.End)
		if !found {
			return nil, "", false
		}
		from = append(from, name)
		if cpu > 0 {
			out.Series = append(out.Series, struct {
				Labels []seriesLabel `json:"labels,omitempty"`
				Points []seriesPoint `json:"points"`
			}{t, []seriesPoint{{cpu, stamp}}})
		}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, "", false
	}
	if len(out.Series) == 0 {
		b = []byte("{}")
	}
	return b, strings.Join(from, "+"), true
}

// recordedValues returns the recorded LabelValues of name over the
// service in the window, and the name of the exchange that holds them.
func (s *Server) recordedValues(svc matcher, name string, start, end int64) (names []string, from string, ok bool) {
	for _, x := range s.exchanges {
		var rec labelValuesRequest
		if !strings.HasSuffix(x.Path, "/LabelValues") || x.Status != 200 || json.Unmarshal(x.Body, &rec) != nil ||
			rec.Name != name || rec.Start != start || rec.End != end || len(rec.Matchers) != 1 {
			continue
		}
		if rsvc, rms, ok := split(rec.Matchers[0]); !ok || rsvc != svc || len(rms) != 0 {
			continue
		}
		var ans struct {
			Names []string `json:"names"`
		}
		if json.Unmarshal(x.Response, &ans) != nil {
			continue
		}
		return ans.Names, x.Name, true
	}
	return nil, "", false
}

// mergeCPU returns the CPU (nanoseconds) of the recorded protobuf
// SelectMergeProfile of sel over the window, the exchange's name, and
// whether there is one.
func (s *Server) mergeCPU(sel string, start, end int64) (float64, string, bool) {
	for _, x := range s.exchanges {
		got, ok := x.MergeSelector()
		if !ok || got != sel || x.Status != 200 || mergeWindow(x) != [2]int64{start, end} {
			continue
		}
		if len(x.Response) == 0 {
			return 0, x.Name, true
		}
		p, err := profile.ParseData(x.Response)
		if err != nil {
			return 0, "", false
		}
		ci := slices.IndexFunc(p.SampleType, func(st *profile.ValueType) bool { return st.Type == "cpu" })
		var cpu float64
		for _, smp := range p.Sample {
			if ci >= 0 {
				cpu += float64(smp.Value[ci])
			}
		}
		return cpu, x.Name, true
	}
	return 0, "", false
}
