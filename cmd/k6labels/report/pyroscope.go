package report

import (
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
	series, err := s.c.SelectSeries(ctx, s.query(), []string{LabelRunID}, seriesStep)
	if err != nil {
		return nil, s.wrap(err)
	}
	out := map[string]Count{}
	for _, ser := range series {
		id := ser.Labels[LabelRunID]
		out[id] = out[id].add(s.count(ser.Sum()))
	}
	if len(out) == 0 {
		return nil, s.noData(ctx)
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
		ms[i] = pyroscope.Matcher{Name: m.Name, Value: m.Value}
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

// Runs lists the k6 test runs of the source's window, by first point.
func (s *PyroscopeSource) Runs(ctx context.Context) ([]Run, error) {
	series, err := s.c.SelectSeries(ctx, s.query(), []string{LabelRunID}, seriesStep)
	if err != nil {
		return nil, s.wrap(err)
	}
	var runs []Run
	for _, ser := range series {
		id := ser.Labels[LabelRunID]
		if id == "" || len(ser.Points) == 0 {
			continue
		}
		r := Run{ID: id, First: ser.Points[0].Time, Last: ser.Points[0].Time, CPU: s.count(ser.Sum()).CPU}
		for _, p := range ser.Points {
			r.First, r.Last = minTime(r.First, p.Time), maxTime(r.Last, p.Time)
		}
		runs = append(runs, r)
	}
	if len(series) == 0 {
		return nil, s.noData(ctx)
	}
	slices.SortFunc(runs, func(a, b Run) int { return a.First.Compare(b.First) })
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
