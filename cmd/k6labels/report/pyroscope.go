package report

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/google/pprof/profile"
	"github.com/k6labels/k6labels/cmd/k6labels/pyroscope"
)

// PyroscopeSource is a [Source] over one service of a Pyroscope server in a
// time window. Pyroscope's merged profiles carry no labels: each row is its
// own SelectMergeProfile query with the row's label values in the selector.
type PyroscopeSource struct {
	c          *pyroscope.Client
	url        string
	service    string
	start, end time.Time
	period     time.Duration
}

// NewPyroscopeSource returns a source of service's CPU profiles on the
// server of c between start and end; url names the server in messages.
func NewPyroscopeSource(c *pyroscope.Client, url, service string, start, end time.Time) *PyroscopeSource {
	return &PyroscopeSource{c: c, url: url, service: service, start: start, end: end, period: 10 * time.Millisecond}
}

// String implements [Source].
func (s *PyroscopeSource) String() string {
	return fmt.Sprintf("Pyroscope %s service %s", s.url, s.service)
}

func (s *PyroscopeSource) query(ms ...pyroscope.Matcher) pyroscope.Query {
	return pyroscope.Query{ProfileType: pyroscope.CPUProfileType, Selector: pyroscope.Selector(s.service, ms...), Start: s.start, End: s.end}
}

// count converts a SelectSeries sum (nanoseconds of CPU) to a Count of
// 10 ms samples: the server's values are multiples of the period.
func (s *PyroscopeSource) count(nanos float64) Count {
	cpu := time.Duration(math.Round(nanos))
	return Count{CPU: cpu, Samples: int64((cpu + s.period/2) / s.period)}
}

// wrap adds to a client error what the user of the command can do.
func (s *PyroscopeSource) wrap(err error) error {
	var pe *pyroscope.Error
	switch {
	case errors.Is(err, pyroscope.ErrUnreachable):
		return fmt.Errorf("%w: check --pyroscope (the server's HTTP address, e.g. http://pyroscope:4040)", err)
	case errors.As(err, &pe) && pe.Code == "invalid_argument":
		return fmt.Errorf("%w: the selector is made of --service %q and k6 label values; check --service", err, s.service)
	}
	return err
}

// Totals implements [Source] with SelectSeries grouped by k6_test_run_id.
// It returns an error wrapping [ErrNoData] when the service has no CPU in
// the window.
func (s *PyroscopeSource) Totals(ctx context.Context) (map[string]Count, error) {
	byRun, err := s.runSeries(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]Count{}
	for id, series := range byRun {
		for _, ser := range series {
			out[id] = out[id].add(s.count(ser.Sum()))
		}
	}
	return out, nil
}

// runSeries returns the service's SelectSeries by run id, keyed as Totals
// is. The series without a run id are split by k6_scenario, then those
// without a scenario by k6_name: queries made only when there are some.
func (s *PyroscopeSource) runSeries(ctx context.Context) (map[string][]pyroscope.Series, error) {
	series, err := s.c.SelectSeries(ctx, s.query(), []string{LabelRunID}, seriesStep)
	if err != nil {
		return nil, s.wrap(err)
	}
	if len(series) == 0 {
		return nil, s.noData(ctx)
	}
	out := map[string][]pyroscope.Series{}
	for _, ser := range series {
		if id := ser.Labels[LabelRunID]; id != "" {
			out[id] = append(out[id], ser)
		}
	}
	if len(out) == len(series) {
		return out, nil
	}
	unlabelled := []pyroscope.Matcher{{Name: LabelRunID}}
	for _, label := range []string{LabelScenario, LabelName} {
		series, err := s.c.SelectSeries(ctx, s.query(unlabelled...), []string{label}, seriesStep)
		if err != nil {
			return nil, s.wrap(err)
		}
		var rest []pyroscope.Series
		for _, ser := range series {
			if ser.Labels[label] != "" {
				out[LocalRun] = append(out[LocalRun], ser)
			} else {
				rest = append(rest, ser)
			}
		}
		out[""] = rest
		if len(rest) == 0 {
			break
		}
		unlabelled = append(unlabelled, pyroscope.Matcher{Name: label})
	}
	return out, nil
}

// noData returns the error for a service without CPU in the window, naming
// the services the server has when it tells.
func (s *PyroscopeSource) noData(ctx context.Context) error {
	msg := fmt.Sprintf("Pyroscope %s has no CPU profiles (%s) of service %q from %s to %s",
		s.url, pyroscope.CPUProfileType, s.service, s.start.UTC().Format(time.RFC3339), s.end.UTC().Format(time.RFC3339))
	q := pyroscope.Query{ProfileType: pyroscope.CPUProfileType, Start: s.start, End: s.end} // no selector: every service
	if names, err := s.c.LabelValues(ctx, pyroscope.ServiceLabel, q); err == nil && len(names) > 0 {
		slices.Sort(names)
		return fmt.Errorf("%w: %s; services there: %s (--service)", ErrNoData, msg, strings.Join(names, ", "))
	}
	return fmt.Errorf("%w: %s: check --service (the application name the service pushes under) and the time window", ErrNoData, msg)
}

// Values implements [Source] with LabelValues over the service.
func (s *PyroscopeSource) Values(ctx context.Context, label string) ([]string, error) {
	vs, err := s.c.LabelValues(ctx, label, s.query())
	if err != nil {
		return nil, s.wrap(err)
	}
	slices.Sort(vs)
	return vs, nil
}

// Profile implements [Source] with one SelectMergeProfile whose selector is
// the service and the matchers, in their order.
func (s *PyroscopeSource) Profile(ctx context.Context, match []Matcher) (*profile.Profile, error) {
	ms := make([]pyroscope.Matcher, len(match))
	for i, m := range match {
		ms[i] = pyroscope.Matcher{Name: m.Name, Value: m.Value, Not: m.Not}
	}
	p, err := s.c.SelectMergeProfile(ctx, s.query(ms...))
	if err != nil {
		return nil, s.wrap(err)
	}
	if len(p.Sample) > 0 {
		if err := CheckCPU(p); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// Runs lists the k6 test runs of the source's window, by first point; a
// local k6 run (k6 labels without a run id) is listed as [LocalRun].
func (s *PyroscopeSource) Runs(ctx context.Context) ([]Run, error) {
	byRun, err := s.runSeries(ctx)
	if err != nil {
		return nil, err
	}
	var runs []Run
	for id, series := range byRun {
		if id == "" {
			continue
		}
		var r Run
		for _, ser := range series {
			for _, p := range ser.Points {
				if r.ID == "" {
					r = Run{ID: id, First: p.Time, Last: p.Time}
				}
				r.First, r.Last = minTime(r.First, p.Time), maxTime(r.Last, p.Time)
			}
			r.CPU += s.count(ser.Sum()).CPU
		}
		if r.ID != "" {
			runs = append(runs, r)
		}
	}
	slices.SortFunc(runs, func(a, b Run) int { return cmp.Or(a.First.Compare(b.First), cmp.Compare(a.ID, b.ID)) })
	return runs, nil
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
