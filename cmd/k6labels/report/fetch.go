package report

import (
	"context"
	"fmt"
	"slices"

	"github.com/google/pprof/profile"
)

// fetcher fetches the profiles of a report's rows after [New]: those of
// the rows a diff finds worse, when the source gave none at no cost.
type fetcher struct {
	src   Source
	scope []Matcher
	opts  Options
	conn  bool // builder.conn of the report
	// variants is builder.variants of the report.
	variants map[string][]string
}

// fetchRows fetches the profile of the rows of r that sel selects and that
// have CPU but no profile yet, in r's runs too for a sum of runs; it tells
// whether it fetched any.
func (r *Report) fetchRows(ctx context.Context, sel func(*Row) bool) (bool, error) {
	fetched := false
	for _, run := range r.runs {
		f, err := run.fetchRows(ctx, sel)
		if err != nil {
			return false, err
		}
		fetched = fetched || f
	}
	if fetched {
		r.remerge(sel)
	}
	if r.fetch == nil {
		return fetched, nil
	}
	b := builder{ctx: ctx, src: r.fetch.src, opts: &r.fetch.opts, r: r, scope: r.fetch.scope, conn: r.fetch.conn, variants: r.fetch.variants}
	for i := range r.Rows {
		row := &r.Rows[i]
		if !sel(row) || row.self != nil || row.Samples == 0 {
			continue
		}
		count := row.Count
		if _, err := b.fill(row, b.rowMatch(row)...); err != nil {
			return false, err
		}
		row.Count = count
		b.setTop(row)
		fetched = true
	}
	if b.opts.Progress != nil && b.done > 0 {
		fmt.Fprintln(b.opts.Progress)
	}
	return fetched, nil
}

// remerge sums again the functions and profiles of the rows of a sum of
// runs that sel selects, from its runs' rows.
func (r *Report) remerge(sel func(*Row) bool) {
	for i := range r.Rows {
		mr := &r.Rows[i]
		if !sel(mr) {
			continue
		}
		mr.self = map[string]Count{}
		var ps []*profile.Profile
		for _, run := range r.runs {
			row := run.Row(mr.By, mr.Values...)
			if row == nil {
				continue
			}
			for f, c := range row.self {
				mr.self[f] = mr.self[f].Plus(c)
			}
			if row.prof != nil {
				ps = append(ps, row.prof)
			}
		}
		mr.prof = nil
		if len(ps) == len(r.runs) {
			if p, err := profile.Merge(ps); err == nil {
				mr.prof = p
			}
		}
	}
}

// Fetch fetches the profiles of the rows that got worse, when a report's
// source gave them only for listed rows (Pyroscope), and lists the
// functions that grew in them. Rows with profiles already make no query.
func (d *Diff) Fetch(ctx context.Context) error {
	for i := range d.Rows {
		dr := &d.Rows[i]
		if dr.Verdict != Worse {
			continue
		}
		sel := func(row *Row) bool { return slices.Equal(row.By, dr.By) && d.rowKey(row) == dr.Key }
		for _, side := range []struct {
			r   *Report
			row *Row
		}{{d.Before, dr.Before}, {d.After, dr.After}} {
			if side.row == nil {
				continue
			}
			fetched, err := side.r.fetchRows(ctx, sel)
			if err != nil {
				return err
			}
			if fetched {
				side.row.self, side.row.prof = sumRows(side.r, sel)
			}
		}
	}
	d.grew(d.grewN)
	return nil
}

// sumRows returns the summed functions of r's rows that sel selects, and
// their profile when there is one such row.
func sumRows(r *Report, sel func(*Row) bool) (map[string]Count, *profile.Profile) {
	self := map[string]Count{}
	var ps []*profile.Profile
	for i := range r.Rows {
		row := &r.Rows[i]
		if !sel(row) {
			continue
		}
		for f, c := range row.self {
			self[f] = self[f].Plus(c)
		}
		ps = append(ps, row.prof)
	}
	if len(ps) == 1 {
		return self, ps[0]
	}
	return self, nil
}
