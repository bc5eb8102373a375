package report

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

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

// WriteProfiles writes the merged profiles of the two runs to beforePath
// and afterPath (an existing file is an error unless overwrite) and returns the go tool pprof command that shows the diff
// flame graph of the worst row: of the runs, focused on the row by
// -tagfocus when the samples carry labels; else of the row's own profiles.
func (d *Diff) WriteProfiles(beforePath, afterPath string, overwrite bool) (string, error) {
	bp, ap := d.Before.prof, d.After.prof
	worst := d.Worst()
	labelled := hasLabel(bp, LabelName) && hasLabel(ap, LabelName)
	focus := ""
	if worst != nil {
		if labelled {
			focus = tagFocus(worst)
		} else if worst.Before != nil && worst.After != nil && worst.Before.prof != nil && worst.After.prof != nil {
			bp, ap = worst.Before.prof, worst.After.prof
		}
	}
	if bp == nil || ap == nil {
		return "", fmt.Errorf("%w: no merged profile to write", ErrNoData)
	}
	for _, x := range []struct {
		p    *profile.Profile
		path string
	}{{bp, beforePath}, {ap, afterPath}} {
		if err := WriteProfile(x.path, x.p, overwrite); err != nil {
			return "", err
		}
	}
	cmd := "go tool pprof -http=localhost:0 -diff_base=" + ShellQuote(beforePath)
	if focus != "" {
		cmd += " -tagfocus=" + ShellQuote(focus)
	}
	cmd += " " + ShellQuote(afterPath)
	return cmd, nil
}

func hasLabel(p *profile.Profile, label string) bool {
	if p == nil {
		return false
	}
	for _, s := range p.Sample {
		if len(s.Label[label]) > 0 {
			return true
		}
	}
	return false
}

// tagFocus returns a pprof -tagfocus value selecting dr's samples: its
// k6_name by path (a regexp anchored at the end), or its scenario.
func tagFocus(dr *DiffRow) string {
	row := dr.After
	for i, label := range row.By {
		if label == LabelName {
			return label + "=" + regexp.QuoteMeta(URLPath(row.Values[i])) + "$"
		}
	}
	return row.By[0] + "=^" + regexp.QuoteMeta(row.Values[0]) + "$"
}

// ShellQuote quotes s for a POSIX shell when it needs it.
func ShellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-/+:@=") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
