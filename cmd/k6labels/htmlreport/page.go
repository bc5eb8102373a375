// Package htmlreport writes k6labels reports and diffs as one
// self-contained html page (--format html): the tables, a chart of the CPU
// per request of each route with its interval, and interactive flame
// graphs drawn as inline SVG, which need no network and no script library
// to view. It also writes the diff flame graph of a diff's worst row as a
// standalone SVG small enough to attach to a pull request.
package htmlreport

import (
	_ "embed"
	"fmt"
	"github.com/k6labels/k6labels"
	"html"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/k6labels/k6labels/cmd/k6labels/report"
)

//go:embed page.css
var pageCSS string

//go:embed page.js
var pageJS string

// Flame graph sizes: the page's graphs keep frames down to 0.1% of the
// graph's CPU, the standalone SVG down to 0.5% and 40 frames deep.
const (
	pageWidth  = 1180
	pageMin    = 0.001
	pageDepth  = 200
	svgWidth   = 1000
	svgMin     = 0.005
	svgDepth   = 40
	maxGraphs  = 60 // flame graphs per page: the scenarios and routes first
	chartWidth = 1180
)

// page accumulates the html of one report or diff.
type page struct {
	b      strings.Builder
	graphs int
}

func esc(s string) string { return html.EscapeString(s) }

func (p *page) printf(format string, a ...any) { fmt.Fprintf(&p.b, format, a...) }

func (p *page) start(title string) {
	p.printf("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>%s</title>\n", esc(title))
	p.printf("<meta name=\"generator\" content=\"k6labels\">\n<style>\n%s</style>\n", pageCSS)
	// The script comes first so that it sees every error of the page.
	p.printf("<script>\n%s</script>\n</head>\n<body>\n<h1>%s</h1>\n", pageJS, esc(title))
}

func (p *page) end(w io.Writer) error {
	p.printf("<p class=\"foot\">Written by k6labels. Flame graphs: click a frame to zoom in, the top frame to zoom out; hover for the CPU.</p>\n</body>\n</html>\n")
	_, err := io.WriteString(w, p.b.String())
	return err
}

// itemf writes a paragraph of escaped text.
func (p *page) itemf(format string, a ...any) {
	p.printf("<p>%s</p>\n", esc(fmt.Sprintf(format, a...)))
}

// link returns an anchor to u, "" for no u.
func link(u, text string) string {
	if u == "" {
		return ""
	}
	return fmt.Sprintf(`<a href="%s" rel="noopener">%s</a>`, esc(u), esc(text))
}

// table writes a table; cells are html already escaped, the first column
// left-aligned.
func (p *page) table(head []string, rows [][]string) {
	p.printf("<table>\n<thead><tr>")
	for _, h := range head {
		p.printf("<th>%s</th>", esc(h))
	}
	p.printf("</tr></thead>\n<tbody>\n")
	for _, r := range rows {
		p.printf("<tr>")
		for _, c := range r {
			p.printf("<td>%s</td>", c)
		}
		p.printf("</tr>\n")
	}
	p.printf("</tbody>\n</table>\n")
}

// graph writes a flame graph section; false when the page has its fill.
func (p *page) graph(heading, note string, g *graph) {
	if len(g.Frames) == 0 {
		return
	}
	if p.graphs >= maxGraphs {
		if p.graphs == maxGraphs {
			p.itemf("More flame graphs left out: a page holds at most %d.", maxGraphs)
			p.graphs++
		}
		return
	}
	p.graphs++
	g.ID = fmt.Sprintf("fg%d", p.graphs)
	p.printf("<section class=\"flame\">\n<h3>%s</h3>\n", esc(heading))
	if note != "" {
		p.printf("<p class=\"note\">%s</p>\n", note)
	}
	p.printf("<div class=\"fgwrap\">")
	_ = g.writeSVG(&p.b, pageWidth, true)
	p.printf("</div>\n</section>\n")
}

func secs(d time.Duration) string { return fmt.Sprintf("%.2fs", d.Seconds()) }
func pct(f float64) string        { return fmt.Sprintf("%.1f%%", 100*f) }
func msr(d time.Duration) string  { return fmt.Sprintf("%.3f", float64(d)/1e6) }

func groupings[T any](rows []T, by func(T) report.Grouping) []report.Grouping {
	var out []report.Grouping
	for _, r := range rows {
		if g := by(r); !slices.ContainsFunc(out, func(h report.Grouping) bool { return slices.Equal(g, h) }) {
			out = append(out, g)
		}
	}
	return out
}

func title(g report.Grouping) string { return strings.Join(g, " × ") }

// WriteReport writes r as one self-contained html page: the tables of
// every grouping, a chart of the CPU per request of each route (k6_name
// rows, else scenario × name) with its interval, and a flame graph of the
// run, of each scenario and of each route. The page loads nothing.
func WriteReport(w io.Writer, r *report.Report) error {
	p := &page{}
	p.start("k6labels report: " + r.Source + ", " + r.RunName("every test run in it"))
	p.itemf("%s of CPU in %d samples; the run's k6-labelled CPU %s (%s); without k6 labels %s.",
		secs(r.Total.CPU), r.Total.Samples, secs(r.K6.CPU), pct(ratio(float64(r.K6.CPU), float64(r.Total.CPU))), secs(r.Unlabelled.CPU))
	if r.HasRequests {
		p.itemf("k6 results: %d requests from %s to %s (%.1fs).", r.Requests,
			r.Start.UTC().Format(time.RFC3339), r.End.UTC().Format(time.RFC3339), r.End.Sub(r.Start).Seconds())
		p.perRequestChart(r)
	} else {
		p.itemf("No k6 results given: shares only (pass --k6 FILE for requests and CPU per request).")
	}
	for _, g := range groupings(r.Rows, func(row report.Row) report.Grouping { return row.By }) {
		head := []string{title(g), "CPU", "of all", "of k6"}
		if r.HasRequests {
			head = append(head, "requests", "ms/request", fmt.Sprintf("%.0f%% interval", 100*r.Confidence))
		}
		if r.Grafana != nil {
			head = append(head, "Grafana")
		}
		var rows [][]string
		for _, row := range r.RowsBy(g) {
			cells := []string{esc(row.Key()), secs(row.CPU), pct(row.OfAll), pct(row.OfK6)}
			if r.HasRequests {
				switch {
				case row.InOverflow:
					cells = append(cells, fmt.Sprint(row.Requests), "in "+esc(k6labels.OverflowValue)+"?", "")
				case row.Requests > 0:
					cells = append(cells, fmt.Sprint(row.Requests), msr(row.PerRequest.Est), msr(row.PerRequest.Low)+"–"+msr(row.PerRequest.High))
				default:
					cells = append(cells, "0", "", "")
				}
			}
			if r.Grafana != nil {
				cells = append(cells, link(r.GrafanaURL(&row), "flame graph"))
			}
			rows = append(rows, cells)
		}
		p.table(head, rows)
	}
	p.notes(r.Notes)
	p.printf("<h2>Flame graphs</h2>\n<p class=\"note\">Width: CPU of the samples whose stacks pass through a function (seconds in the tooltip). Colour: one per package. Frames under %.1f%% of a graph are left out.</p>\n", 100*pageMin)
	if prof := r.Profile(); prof != nil {
		p.graph("The run: "+r.RunName("every test run"), "", newGraph("all", "s", false, nil, 0, prof, 1e-9, pageMin, pageDepth))
	}
	for _, g := range []report.Grouping{report.ByScenario, report.ByName, report.ByScenarioName, report.ByRun} {
		for _, row := range r.RowsBy(g) {
			if prof := row.Profile(); prof != nil {
				note := ""
				if u := r.GrafanaURL(&row); u != "" {
					note = link(u, "the same in Grafana")
				}
				p.graph(fmt.Sprintf("%s=%s", g, row.Key()), note, newGraph(row.Key(), "s", false, nil, 0, prof, 1e-9, pageMin, pageDepth))
			}
		}
	}
	return p.end(w)
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

func (p *page) notes(notes []string) {
	for _, n := range notes {
		p.itemf("Note: %s.", n)
	}
}

// perRequestChart draws the CPU per request of each route with its
// interval: a bar to the estimate, a whisker over the interval.
func (p *page) perRequestChart(r *report.Report) {
	rows := r.RowsBy(report.ByName)
	by := report.ByName
	if len(rows) == 0 {
		rows, by = r.RowsBy(report.ByScenarioName), report.ByScenarioName
	}
	var bars []bar
	for _, row := range rows {
		if row.Requests > 0 && !row.InOverflow {
			pr := row.PerRequest
			bars = append(bars, bar{label: row.Key(), est: float64(pr.Est) / 1e6, low: float64(pr.Low) / 1e6, high: float64(pr.High) / 1e6,
				text: fmt.Sprintf("%s ms (%s–%s)", msr(pr.Est), msr(pr.Low), msr(pr.High)), class: "est"})
		}
	}
	if len(bars) == 0 {
		return
	}
	p.printf("<h2>CPU per request by %s</h2>\n<p class=\"note\">Bars: ms of CPU per request; whiskers: the %.0f%% interval from the row's sample count.</p>\n",
		esc(title(by)), 100*r.Confidence)
	p.chart(bars, false)
}

// A bar is one row of a chart.
type bar struct {
	label          string
	est, low, high float64 // NaN low/high: no whisker
	text           string
	class          string
}

// chart draws bars as inline SVG; centred charts have 0 in the middle (for
// changes).
func (p *page) chart(bars []bar, centred bool) {
	const rowH, labelW, textW = 22, 330, 260
	plotW := float64(chartWidth - labelW - textW)
	lo, hi := 0.0, 0.0
	for _, b := range bars {
		for _, v := range []float64{b.est, b.low, b.high} {
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	if centred {
		m := math.Max(-lo, hi)
		lo, hi = -m, m
	}
	if hi-lo <= 0 {
		hi = lo + 1
	}
	x := func(v float64) float64 {
		v = math.Max(lo, math.Min(hi, v))
		return labelW + (v-lo)/(hi-lo)*plotW
	}
	h := len(bars)*rowH + 6
	p.printf(`<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", chartWidth, h)
	p.printf(`<line x1="%.1f" y1="0" x2="%.1f" y2="%d" stroke="#888"/>`+"\n", x(0), x(0), h)
	for i, b := range bars {
		y := float64(i*rowH + 3)
		p.printf(`<text x="%d" y="%.1f" text-anchor="end">%s</text>`, labelW-8, y+15, esc(label(b.label, labelW)))
		if !math.IsNaN(b.est) && !math.IsInf(b.est, 0) {
			x0, x1 := x(0), x(b.est)
			p.printf(`<rect class="%s" x="%.1f" y="%.1f" width="%.1f" height="%d"><title>%s</title></rect>`, b.class, math.Min(x0, x1), y+3, math.Abs(x1-x0), rowH-8, esc(b.label+": "+b.text))
		}
		if !math.IsNaN(b.low) && !math.IsNaN(b.high) {
			p.printf(`<line class="ci" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/><line class="ci" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/><line class="ci" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/>`,
				x(b.low), y+11, x(b.high), y+11, x(b.low), y+6, x(b.low), y+16, x(b.high), y+6, x(b.high), y+16)
		}
		p.printf(`<text x="%d" y="%.1f">%s</text>`+"\n", chartWidth-textW+6, y+15, esc(b.text))
	}
	p.printf("</svg>\n")
}
