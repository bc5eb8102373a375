// Package pyrosource is the [report.Source] of a Pyroscope server: one
// service's CPU profiles in a time window, split by SelectSeries grouped by
// the k6 labels, with merged profiles (SelectMergeProfile), in which the
// report finds connection goroutines ([report.ConnectionRow]) and the rows'
// functions. It also lists the runs and checks uploads.
package pyrosource

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/pprof/profile"
	"github.com/k6labels/k6labels/cmd/k6labels/pyroscope"
	"github.com/k6labels/k6labels/cmd/k6labels/report"
)

// Source is a [report.Source] over one service of a Pyroscope server in a
// time window. Pyroscope's merged profiles carry no labels: the CPU of a
// grouping's rows is one SelectSeries grouped by its labels, and a row's
// profile its own SelectMergeProfile query with its values in the selector.
type Source struct {
	c          *pyroscope.Client
	url        string
	service    string
	start, end time.Time
	period     time.Duration
	run        string // "": every run; a k6_test_run_id or report.LocalRun: that run only
	totals     map[string]report.Count
}

// New returns a source of service's CPU profiles on the
// server of c between start and end; url names the server in messages
// (give c.URL(): it has no userinfo).
func New(c *pyroscope.Client, url, service string, start, end time.Time) *Source {
	return &Source{c: c, url: url, service: service, start: start, end: end, period: 10 * time.Millisecond}
}

// ForRun returns a copy of s whose every query selects run id's samples (a
// k6_test_run_id, or [report.LocalRun]: those with k6 labels but no run id) and
// the samples without any k6 label, whose CPU Totals gives under "".
// Other runs are in no answer: not in Totals, Values nor any profile.
func (s *Source) ForRun(id string) *Source {
	if id == s.run {
		return s
	}
	c := *s
	c.run, c.totals = id, nil
	return &c
}

// Window returns the source's query window.
func (s *Source) Window() (start, end time.Time) { return s.start, s.end }

// WithWindow returns a copy of s that queries from start to end.
func (s *Source) WithWindow(start, end time.Time) *Source {
	c := *s
	c.start, c.end, c.totals = start, end, nil
	return &c
}

// String implements [report.Source].
func (s *Source) String() string {
	return fmt.Sprintf("Pyroscope %s service %s", s.url, s.service)
}

// query returns the query of the samples matching ms in the window,
// within the source's run when it has one.
func (s *Source) query(ms ...pyroscope.Matcher) pyroscope.Query {
	if s.run != "" {
		scope := pyroscope.Matcher{Name: report.LabelRunID}
		if s.run != report.LocalRun {
			scope.Value = s.run
		}
		all := []pyroscope.Matcher{scope}
		for _, m := range ms {
			if m != scope {
				all = append(all, m)
			}
		}
		ms = all
	}
	return s.unscoped(ms...)
}

// unscoped returns the query of the samples matching ms in the window,
// whatever their run.
func (s *Source) unscoped(ms ...pyroscope.Matcher) pyroscope.Query {
	return pyroscope.Query{ProfileType: pyroscope.CPUProfileType, Selector: pyroscope.Selector(s.service, ms...), Start: s.start, End: s.end}
}

// sum returns the CPU of series' points stamped in the window: SelectSeries
// reaches one step back before the window's start, which SelectMergeProfile
// does not, so that point is left out for the two to agree.
func (s *Source) sum(ser pyroscope.Series, step time.Duration) report.Count {
	var t float64
	for _, p := range ser.Points {
		if !p.Time.Add(-step).Before(s.start) {
			t += p.Value
		}
	}
	return s.count(t)
}

// count converts a SelectSeries sum (nanoseconds of CPU) to a report.Count of
// 10 ms samples: the server's values are multiples of the period.
func (s *Source) count(nanos float64) report.Count {
	cpu := time.Duration(math.Round(nanos))
	return report.Count{CPU: cpu, Samples: int64((cpu + s.period/2) / s.period)}
}

// wrap adds to a client error what the user of the command can do.
func (s *Source) wrap(err error) error {
	var pe *pyroscope.Error
	switch {
	case errors.Is(err, pyroscope.ErrUnreachable):
		return fmt.Errorf("%w: check --pyroscope (the server's HTTP address, e.g. http://pyroscope:4040)", err)
	case errors.As(err, &pe) && pe.Code == "invalid_argument":
		return fmt.Errorf("%w: the selector is made of --service %q and k6 label values; check --service", err, s.service)
	}
	return err
}

// Totals implements [report.Source] with SelectSeries grouped by k6_test_run_id
// (or of the source's run). It returns an error wrapping [report.ErrNoData] when
// the service has no CPU in the window. The answer is kept: asked again,
// it makes no query.
func (s *Source) Totals(ctx context.Context) (map[string]report.Count, error) {
	if s.totals != nil {
		return maps.Clone(s.totals), nil
	}
	byRun, err := s.runSeries(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]report.Count{}
	for id, series := range byRun {
		for _, ser := range series {
			out[id] = out[id].Plus(s.sum(ser, report.SeriesStep))
		}
	}
	s.totals = maps.Clone(out)
	return out, nil
}

// runSeries returns the service's SelectSeries by run id, keyed as Totals
// is. The series without a run id are split by k6_scenario, then those
// without a scenario by k6_name: queries made only when there are some.
//
// Scoped to a run id, there are two queries: that run's samples, and those
// without any k6 label; scoped to [report.LocalRun], there is no first query.
func (s *Source) runSeries(ctx context.Context) (map[string][]pyroscope.Series, error) {
	out := map[string][]pyroscope.Series{}
	found := 0
	if s.run != report.LocalRun {
		var groupBy []string
		if s.run == "" {
			groupBy = []string{report.LabelRunID}
		}
		series, err := s.c.SelectSeries(ctx, s.query(), groupBy, report.SeriesStep)
		if err != nil {
			return nil, s.wrap(err)
		}
		for _, ser := range series {
			id := ser.Labels[report.LabelRunID]
			if s.run != "" {
				id = s.run
			}
			if id != "" {
				out[id] = append(out[id], ser)
			}
		}
		if s.run == "" && len(out) == len(series) {
			if len(series) == 0 {
				return nil, s.noData(ctx)
			}
			return out, nil
		}
		found = len(series)
	}
	if s.run != "" && s.run != report.LocalRun {
		// The samples without any k6 label, in one query that reads no
		// other run's.
		none := []pyroscope.Matcher{{Name: report.LabelRunID}, {Name: report.LabelScenario}, {Name: report.LabelName}}
		series, err := s.c.SelectSeries(ctx, s.unscoped(none...), nil, report.SeriesStep)
		if err != nil {
			return nil, s.wrap(err)
		}
		out[""] = series
		if found+len(series) == 0 {
			return nil, s.noData(ctx)
		}
		return out, nil
	}
	unlabelled := []pyroscope.Matcher{{Name: report.LabelRunID}}
	for _, label := range []string{report.LabelScenario, report.LabelName} {
		series, err := s.c.SelectSeries(ctx, s.unscoped(unlabelled...), []string{label}, report.SeriesStep)
		if err != nil {
			return nil, s.wrap(err)
		}
		var rest []pyroscope.Series
		for _, ser := range series {
			if ser.Labels[label] == "" {
				rest = append(rest, ser)
			} else {
				out[report.LocalRun] = append(out[report.LocalRun], ser)
			}
			found++
		}
		out[""] = rest
		if len(rest) == 0 {
			break
		}
		unlabelled = append(unlabelled, pyroscope.Matcher{Name: label})
	}
	if found == 0 {
		return nil, s.noData(ctx)
	}
	return out, nil
}

// noData returns the error for a service without CPU in the window, naming
// the services the server has when it tells.
func (s *Source) noData(ctx context.Context) error {
	of := ""
	switch {
	case s.run == report.LocalRun:
		of = " of a local k6 run or without k6 labels"
	case s.run != "":
		of = fmt.Sprintf(" with %s=%q or without k6 labels", report.LabelRunID, s.run)
	}
	msg := fmt.Sprintf("Pyroscope %s has no CPU profiles (%s) of service %q%s from %s to %s",
		s.url, pyroscope.CPUProfileType, s.service, of, s.start.UTC().Format(time.RFC3339), s.end.UTC().Format(time.RFC3339))
	q := pyroscope.Query{ProfileType: pyroscope.CPUProfileType, Start: s.start, End: s.end} // no selector: every service
	if names, err := s.c.LabelValues(ctx, pyroscope.ServiceLabel, q); err == nil && len(names) > 0 {
		slices.Sort(names)
		return fmt.Errorf("%w: %s; services there: %s (--service)", report.ErrNoData, msg, strings.Join(names, ", "))
	}
	return fmt.Errorf("%w: %s: check --service (the application name the service pushes under) and the time window", report.ErrNoData, msg)
}

// Values implements [report.Source] with LabelValues over the service.
func (s *Source) Values(ctx context.Context, label string) ([]string, error) {
	vs, err := s.c.LabelValues(ctx, label, s.query())
	if err != nil {
		return nil, s.wrap(err)
	}
	slices.Sort(vs)
	return vs, nil
}

// Split implements [report.Source] with one SelectSeries of the service and the
// scope's matchers grouped by g's labels.
func (s *Source) Split(ctx context.Context, g report.Grouping, scope []report.Matcher) (map[string]report.Part, error) {
	series, err := s.c.SelectSeries(ctx, s.query(pyroMatchers(scope)...), g, report.SeriesStep)
	if err != nil {
		return nil, s.wrap(err)
	}
	out := map[string]report.Part{}
	vals := make([]string, len(g))
	for _, ser := range series {
		ok := true
		for i, label := range g {
			vals[i] = ser.Labels[label]
			ok = ok && vals[i] != ""
		}
		if ok {
			k := report.TupleKey(vals)
			out[k] = report.Part{Count: out[k].Count.Plus(s.sum(ser, report.SeriesStep))}
		}
	}
	return out, nil
}

// pyroMatchers converts matchers to the client's.
func pyroMatchers(match []report.Matcher) []pyroscope.Matcher {
	ms := make([]pyroscope.Matcher, len(match))
	for i, m := range match {
		ms[i] = pyroscope.Matcher{Name: m.Name, Value: m.Value, Not: m.Not}
	}
	return ms
}

// Profile implements [report.Source] with one SelectMergeProfile whose selector is
// the service and the matchers, in their order.
func (s *Source) Profile(ctx context.Context, match []report.Matcher) (*profile.Profile, error) {
	q := s.query(pyroMatchers(match)...)
	p, err := s.c.SelectMergeProfile(ctx, q)
	if err != nil {
		return nil, s.wrap(err)
	}
	if len(p.Sample) > 0 {
		if err := report.CheckCPU(p); err != nil {
			return nil, err
		}
	}
	if err := report.CheckValues(p); err != nil {
		return nil, fmt.Errorf("%s: %w", s, err)
	}
	name(p, s.url, q)
	return p, nil
}

// name says in p which selection it holds, for the files diff writes:
// a comment (go tool pprof -comments) with the server, selector and
// window, and the selector's label values on every sample (-tags), as
// Pyroscope's merged profiles carry none.
func name(p *profile.Profile, url string, q pyroscope.Query) {
	p.Comments = append(p.Comments, fmt.Sprintf("k6labels: Pyroscope %s %s %s from %s to %s", url, q.ProfileType, q.Selector,
		q.Start.UTC().Format(time.RFC3339), q.End.UTC().Format(time.RFC3339)))
	labels := map[string][]string{}
	for _, m := range selectorValues(q.Selector) {
		labels[m[0]] = []string{m[1]}
	}
	for _, smp := range p.Sample {
		if smp.Label == nil {
			smp.Label = map[string][]string{}
		}
		for k, v := range labels {
			smp.Label[k] = v
		}
	}
}

// selectorValues returns the name="value" pairs of a selector made by
// [pyroscope.Selector] whose value is not empty (not != matchers).
func selectorValues(sel string) [][2]string {
	var out [][2]string
	s := strings.TrimSuffix(strings.TrimPrefix(sel, "{"), "}")
	for s != "" {
		i := strings.IndexAny(s, "!=")
		if i <= 0 {
			break
		}
		label, not := s[:i], s[i] == '!'
		s = strings.TrimPrefix(s[i:], "!")[1:]
		q, err := strconv.QuotedPrefix(s)
		if err != nil {
			break
		}
		s = strings.TrimPrefix(s[len(q):], ",")
		if v, _ := strconv.Unquote(q); !not && v != "" {
			out = append(out, [2]string{label, v})
		}
	}
	return out
}

// Runs lists the k6 test runs of the source's window, by first point; a
// local k6 run (k6 labels without a run id) is listed as [report.LocalRun].
func (s *Source) Runs(ctx context.Context) ([]report.Run, error) {
	byRun, err := s.runSeries(ctx)
	if err != nil {
		return nil, err
	}
	var runs []report.Run
	for id, series := range byRun {
		if id == "" {
			continue
		}
		var r report.Run
		for _, ser := range series {
			for _, p := range ser.Points {
				if p.Time.Add(-report.SeriesStep).Before(s.start) || p.Value == 0 {
					continue
				}
				if r.ID == "" {
					r = report.Run{ID: id, First: p.Time, Last: p.Time}
				}
				if p.Time.Before(r.First) {
					r.First = p.Time
				}
				if p.Time.After(r.Last) {
					r.Last = p.Time
				}
			}
			r.CPU += s.sum(ser, report.SeriesStep).CPU
		}
		if r.ID != "" {
			runs = append(runs, r)
		}
	}
	slices.SortFunc(runs, func(a, b report.Run) int { return cmp.Or(a.First.Compare(b.First), cmp.Compare(a.ID, b.ID)) })
	return runs, nil
}

// Uploaded tells whether the server holds the service's CPU profiles up to
// end, such as a k6 run's last request. pyroscope-go stamps a profile with
// the start of its 30 s window ([report.PyroscopeWindow]) and uploads it when the
// window ends, so the window holding end is stamped after end − window.
// Instances of a service have windows of their own: the one whose previous
// window (stamped up to end − window) began last uploads its window holding
// end last, after the others'. So the answer is yes when a profile is
// stamped at or after that previous stamp plus the window (less 2 s of
// jitter), or, when no profile is stamped in the window before, after
// end − window. It asks SelectSeries of the whole service (no run: idle
// CPU counts too) in 1 s steps from end − 2 windows (not before the
// source's start) up to now.
func (s *Source) Uploaded(ctx context.Context, end, now time.Time) (bool, error) {
	from := end.Add(-2 * report.PyroscopeWindow)
	if from.Before(s.start) {
		from = s.start
	}
	from = from.Truncate(time.Second)
	to := end.Add(report.PyroscopeWindow)
	if now.Before(to) {
		to = now
	}
	if to = to.Truncate(time.Second).Add(time.Second); !to.After(from) {
		to = from.Add(time.Second)
	}
	q := pyroscope.Query{ProfileType: pyroscope.CPUProfileType, Selector: pyroscope.Selector(s.service), Start: from, End: to}
	series, err := s.c.SelectSeries(ctx, q, nil, time.Second)
	if err != nil {
		return false, s.wrap(err)
	}
	// A point ends the step (t−1s, t] that holds a stamp: t−1s is a lower
	// bound of the stamp, t an upper one.
	last := end.Add(-report.PyroscopeWindow) // windows stamped up to here end before end
	need := last
	var stamps []time.Time
	for _, ser := range series {
		for _, p := range ser.Points {
			if p.Value > 0 && p.Time.Add(-time.Second).After(from) {
				stamps = append(stamps, p.Time)
			}
		}
	}
	for _, t := range stamps {
		if !t.After(last) {
			if next := t.Add(report.PyroscopeWindow - 2*time.Second); next.After(need) {
				need = next
			}
		}
	}
	for _, t := range stamps {
		if !t.Add(-time.Second).Before(need) {
			return true, nil
		}
	}
	return false, nil
}

// LocalOutside returns the CPU of a local k6 run's samples (k6 labels, no
// k6_test_run_id) in the profiles stamped within margin before the
// window's start and after its end: another local run's, or before the
// start this run's own first seconds (a profile is stamped at the start of
// its window). A source for [report.LocalRun] uses the k6 results' own range as
// its window, so this CPU is in none of its answers.
func (s *Source) LocalOutside(ctx context.Context, margin time.Duration) (before, after time.Duration, err error) {
	from := s.start.Add(-margin).Truncate(time.Second)
	to := s.end.Add(margin).Truncate(time.Second).Add(time.Second)
	ms := []pyroscope.Matcher{{Name: report.LabelRunID}}
	var nanosBefore, nanosAfter float64
	for _, label := range []string{report.LabelScenario, report.LabelName} {
		q := pyroscope.Query{ProfileType: pyroscope.CPUProfileType, Selector: pyroscope.Selector(s.service, ms...), Start: from, End: to}
		series, err := s.c.SelectSeries(ctx, q, []string{label}, time.Second)
		if err != nil {
			return 0, 0, s.wrap(err)
		}
		for _, ser := range series {
			if ser.Labels[label] == "" {
				continue
			}
			for _, p := range ser.Points {
				switch {
				case !p.Time.After(s.start):
					nanosBefore += p.Value
				case p.Time.Add(-time.Second).After(s.end):
					nanosAfter += p.Value
				}
			}
		}
		ms = append(ms, pyroscope.Matcher{Name: label})
	}
	return s.count(nanosBefore).CPU, s.count(nanosAfter).CPU, nil
}

// RunWindows returns the windows in which the CPU of the source's run
// lies, from one SelectSeries of the run's samples in 1 s steps over the
// source's window (widened to whole seconds): a point at t holds the
// profiles stamped in (t−1s, t], and pyroscope-go stamps a profile with
// the start of its [report.PyroscopeWindow], so the point's CPU lies in
// [t−1s, t+window). Points of profiles stamped before the window's start
// are left out, as the report's queries leave them out. A source of every
// run (no [Source.ForRun]) or of [report.LocalRun] (whose samples share
// their selector with those without k6 labels) has none.
func (s *Source) RunWindows(ctx context.Context) ([]report.Window, error) {
	if s.run == "" || s.run == report.LocalRun {
		return nil, nil
	}
	q := s.query()
	q.Start = s.start.Truncate(time.Second)
	if q.End = s.end.Truncate(time.Second); q.End.Before(s.end) {
		q.End = q.End.Add(time.Second)
	}
	series, err := s.c.SelectSeries(ctx, q, nil, time.Second)
	if err != nil {
		return nil, s.wrap(err)
	}
	var ws []report.Window
	for _, ser := range series {
		for _, p := range ser.Points {
			from := p.Time.Add(-time.Second)
			if p.Value <= 0 || from.Before(q.Start) {
				continue
			}
			ws = append(ws, report.Window{Span: report.Span{Start: from, End: p.Time.Add(report.PyroscopeWindow)}, CPU: s.count(p.Value).CPU})
		}
	}
	return ws, nil
}
