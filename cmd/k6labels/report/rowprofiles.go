package report

import (
	"fmt"
	"slices"

	"github.com/google/pprof/profile"
)

// Profile returns the row's merged CPU profile: the samples the row's CPU
// was counted from. It is nil for a row whose values no sample carries, and
// for the run rows unless Options.TopEveryRow fetched them.
func (r *Row) Profile() *profile.Profile { return r.prof }

// Profiles returns the merged profiles of dr in the two runs: those of
// every row of dr's grouping whose key (k6_name as URL path unless
// MatchName) is dr.Key, merged. A side is nil when the row is not in that
// run or no profile of it was fetched.
func (d *Diff) Profiles(dr *DiffRow) (before, after *profile.Profile, err error) {
	collect := func(r *Report) (*profile.Profile, error) {
		var ps []*profile.Profile
		for i := range r.Rows {
			row := &r.Rows[i]
			if slices.Equal(row.By, dr.By) && row.prof != nil && d.rowKey(row) == dr.Key {
				ps = append(ps, row.prof)
			}
		}
		switch len(ps) {
		case 0:
			return nil, nil
		case 1:
			return ps[0], nil
		}
		p, err := profile.Merge(ps)
		if err != nil {
			return nil, fmt.Errorf("merging the %d profiles of %s=%s: %w", len(ps), dr.By, dr.Key, err)
		}
		return p, nil
	}
	if before, err = collect(d.Before); err != nil {
		return nil, nil, err
	}
	if after, err = collect(d.After); err != nil {
		return nil, nil, err
	}
	return before, after, nil
}

// Scales returns what one nanosecond of CPU in dr's before and after
// profiles is in the diff's measure: ms per request of the row (after
// also divided by the machine-speed factor), or a share of the run's
// k6-labelled CPU. Zero for a side without the row or without exposure.
func (d *Diff) Scales(dr *DiffRow) (before, after float64) {
	if dr.Before != nil {
		before = d.measureOf(d.Before, dr.Before, 1e6) / 1e6
	}
	if dr.After != nil {
		after = d.measureOf(d.After, dr.After, 1e6) / 1e6 / d.Speed
	}
	return before, after
}
