package report

import "time"

// PyroscopeWindow is the length of pyroscope-go's CPU profiling window: a
// profile is stamped with the start of the window it covers, so a query
// must start this much before the run to see the run's first samples.
const PyroscopeWindow = 30 * time.Second

// SeriesStep is the SelectSeries step of totals and runs: a run's points
// are stamped with the end of their step, on a grid of this step from the
// window's start.
const SeriesStep = 15 * time.Second

// A Run is one k6 test run a Pyroscope server has CPU of.
type Run struct {
	ID          string
	First, Last time.Time // stamps of its first and last points (pyroscope-go window starts)
	CPU         time.Duration
}
