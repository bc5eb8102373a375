package htmlreport

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/k6labels/k6labels/cmd/k6labels/report"
)

// diffRows returns the rows that get a diff flame graph: every row that got
// worse, else the one with the largest change.
func diffRows(d *report.Diff) []*report.DiffRow {
	var out []*report.DiffRow
	for i := range d.Rows {
		if d.Rows[i].Verdict == report.Worse {
			out = append(out, &d.Rows[i])
		}
	}
	if len(out) == 0 {
		if w := worst(d); w != nil {
			out = append(out, w)
		}
	}
	return out
}

// worst returns the row of the --svg file: the costlier row with the
// largest change ([report.Diff.Worst]) when a row got worse, else the row
// of the finest grouping (k6_name, scenario × name, scenario) whose
// normalized change is largest either way, else Worst's row with the most
// CPU.
func worst(d *report.Diff) *report.DiffRow {
	if w := d.Worst(); w == nil || w.Verdict == report.Worse {
		return w
	}
	for _, g := range []report.Grouping{report.ByName, report.ByScenarioName, report.ByScenario} {
		var best *report.DiffRow
		for i := range d.Rows {
			dr := &d.Rows[i]
			if !slices.Equal(dr.By, g) || math.IsNaN(dr.Normalized) || math.IsInf(dr.Normalized, 0) || math.IsNaN(dr.Low) {
				continue
			}
			if best == nil || math.Abs(dr.Normalized) > math.Abs(best.Normalized) {
				best = dr
			}
		}
		if best != nil {
			return best
		}
	}
	return d.Worst()
}

// diffGraph returns the diff flame graph of dr: widths by the after run,
// colours by the change of each function's CPU per request (after divided
// by the machine-speed factor), or of its share of k6 CPU.
func diffGraph(d *report.Diff, dr *report.DiffRow, minFrac float64, maxDepth int) (*graph, error) {
	bp, ap, err := d.Profiles(dr)
	if err != nil {
		return nil, err
	}
	if bp == nil || ap == nil {
		return nil, fmt.Errorf("%w: %s=%s has no profile in both runs", report.ErrNoData, dr.By, dr.Key)
	}
	sb, sa := d.Scales(dr)
	if sb == 0 || sa == 0 {
		return nil, fmt.Errorf("%w: %s=%s has no requests in both runs", report.ErrNoData, dr.By, dr.Key)
	}
	unit := unitShare
	if d.PerRequest {
		unit = "ms/request"
	}
	return newGraph(dr.Key, unit, true, bp, sb, ap, sa, minFrac, maxDepth), nil
}

func (d diffView) change(f float64) string { return report.Change(f) }

type diffView struct{ *report.Diff }

func (d diffView) value(v float64) string {
	if math.IsNaN(v) {
		return ""
	}
	if d.PerRequest {
		return fmt.Sprintf("%.3f", v)
	}
	return pct(v)
}

// WriteDiff writes d as one self-contained html page: the tables, a chart
// of each route's normalized change with its interval, and a diff flame
// graph of every row that got worse (of the worst row when none did).
func WriteDiff(w io.Writer, d *report.Diff) error {
	v := diffView{d}
	p := &page{}
	measure := "share of k6 CPU"
	if d.PerRequest {
		measure = "CPU per request"
	}
	p.start("k6labels diff: " + measure + ", before → after")
	p.itemf("before: %s, %s", d.Before.Source, d.Before.RunName("every test run"))
	p.itemf("after: %s, %s", d.After.Source, d.After.RunName("every test run"))
	if !strings.HasPrefix(d.Normalize, "none") {
		p.itemf("Machine speed: the same work cost %s after (--normalize %s); \"normalized\" divides by it.", report.Change(d.Speed-1), d.Normalize)
	}
	p.itemf("%s", d.TestLegend())
	p.changeChart(d)
	for _, g := range groupings(d.Rows, func(dr report.DiffRow) report.Grouping { return dr.By }) {
		head := []string{title(g), "before", "after", "raw", "normalized", "95% interval", "verdict"}
		withLinks := d.Before.Grafana != nil && d.After.Grafana != nil
		if withLinks {
			head = append(head, "Grafana")
		}
		var rows [][]string
		for i := range d.Rows {
			dr := &d.Rows[i]
			if !slices.Equal(dr.By, g) {
				continue
			}
			cells := []string{esc(dr.Key)}
			if dr.Before != nil && dr.After != nil && dr.Verdict != report.InOverflow {
				cells = append(cells, v.value(dr.BeforeValue), v.value(dr.AfterValue), v.change(dr.Raw), v.change(dr.Normalized))
			} else {
				cells = append(cells, "", "", "", "")
			}
			interval := ""
			if !math.IsNaN(dr.Low) {
				interval = v.change(dr.Low) + " … " + v.change(dr.High)
			}
			cells = append(cells, interval, fmt.Sprintf(`<span class="v-%s">%s</span>`, strings.ReplaceAll(dr.Verdict, " ", "-"), esc(dr.Verdict)))
			if withLinks {
				cells = append(cells, link(d.GrafanaURL(dr), "diff flame graph"))
			}
			rows = append(rows, cells)
		}
		p.table(head, rows)
	}
	p.notes(d.Notes)
	p.printf("<h2>Diff flame graphs</h2>\n<p class=\"note\">Width: the function's CPU per request after; colour: how much it changed per request (normalized for machine speed), red grew, blue shrank, grey the same (full colour at the largest change, at least 2%% of the row's CPU). Functions that no longer run have no width. Frames under %.1f%% of a graph are left out.</p>\n", 100*pageMin)
	rows := diffRows(d)
	worse := slices.ContainsFunc(rows, func(dr *report.DiffRow) bool { return dr.Verdict == report.Worse })
	if !worse {
		p.itemf("No row got costlier beyond sampling noise; the row with the largest change:")
	}
	for _, dr := range rows {
		g, err := diffGraph(d, dr, pageMin, pageDepth)
		if err != nil {
			if errors.Is(err, report.ErrNoData) {
				p.itemf("%s=%s: no diff flame graph: %v.", dr.By, dr.Key, err)
				continue
			}
			return err
		}
		note := fmt.Sprintf("%s normalized (%s raw), verdict %s.", esc(report.Change(dr.Normalized)), esc(report.Change(dr.Raw)), esc(dr.Verdict))
		if u := d.GrafanaURL(dr); u != "" {
			note += " " + link(u, "The same in Grafana.")
		}
		p.graph(fmt.Sprintf("%s=%s", dr.By, dr.Key), note, g)
	}
	return p.end(w)
}

// changeChart draws the normalized change of each row of the reference
// grouping with its interval.
func (p *page) changeChart(d *report.Diff) {
	var bars []bar
	var by report.Grouping
	for _, g := range []report.Grouping{report.ByName, report.ByScenarioName, report.ByScenario} {
		for _, dr := range d.Rows {
			if slices.Equal(dr.By, g) && !math.IsNaN(dr.Normalized) {
				text := report.Change(dr.Normalized) + " " + dr.Verdict
				if !math.IsNaN(dr.Low) {
					text = fmt.Sprintf("%s (%s … %s) %s", report.Change(dr.Normalized), report.Change(dr.Low), report.Change(dr.High), dr.Verdict)
				}
				bars = append(bars, bar{label: dr.Key, est: dr.Normalized, low: dr.Low, high: dr.High, text: text,
					class: "v-" + strings.ReplaceAll(dr.Verdict, " ", "-")})
			}
		}
		if len(bars) > 0 {
			by = g
			break
		}
	}
	if len(bars) == 0 {
		return
	}
	p.printf("<h2>Change by %s</h2>\n<p class=\"note\">Bars: normalized change of %s; whiskers: its 95%% interval (sampling noise).</p>\n", esc(title(by)), esc(diffView{d}.measure()))
	p.chart(bars, true)
}

func (d diffView) measure() string {
	if d.PerRequest {
		return "CPU per request"
	}
	return "the share of k6-labelled CPU"
}

// WriteDiffSVG writes the diff flame graph of d's worst row (the costlier
// row with the largest change, else the row with the largest change) as a
// standalone SVG with a title line: frames down to 0.5% of the row's CPU,
// 40 deep, so that it stays small enough to attach to a pull request.
func WriteDiffSVG(w io.Writer, d *report.Diff) error {
	dr := worst(d)
	if dr == nil {
		return fmt.Errorf("%w: no row to draw", report.ErrNoData)
	}
	g, err := diffGraph(d, dr, svgMin, svgDepth)
	if err != nil {
		return err
	}
	g.Title = fmt.Sprintf("%s=%s: %s", dr.By, dr.Key, dr.Verdict)
	if c := report.Change(dr.Normalized); c != "" {
		g.Title = fmt.Sprintf("%s=%s %s normalized, %s", dr.By, dr.Key, c, dr.Verdict)
	}
	g.Frames[0].Name = g.Title
	return g.writeSVG(w, svgWidth, false)
}
