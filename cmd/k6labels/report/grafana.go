package report

import (
	"errors"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// GrafanaProfileType is the profile type id of CPU in Grafana's profiles
// view: the one pyroscope-go pushes and the report queries.
const GrafanaProfileType = "process_cpu:cpu:nanoseconds:cpu:nanoseconds"

// grafanaApp is the path of Grafana Profiles Drilldown (the Pyroscope app).
const grafanaApp = "/a/grafana-pyroscope-app/explore"

// Grafana makes links from rows to the same service, profile type, label
// selector and time range in Grafana Profiles Drilldown. Base is the
// Grafana URL; its query parameters (e.g. var-dataSource=UID) are kept.
type Grafana struct {
	Base       string
	Service    string
	Start, End time.Time // the Pyroscope query window of the report
}

// NewGrafana checks a --grafana URL and returns the link maker of one
// service's window.
func NewGrafana(base, service string, start, end time.Time) (*Grafana, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("--grafana: want Grafana's http(s) address, such as https://example.grafana.net")
	}
	if u.User != nil {
		return nil, errors.New("--grafana: leave credentials out of the URL: the links are printed in every output, and Grafana asks the browser to log in")
	}
	return &Grafana{Base: base, Service: service, Start: start, End: end}, nil
}

// filters returns the var-filters value of a row of a run: label|=|value
// items joined by ",", the Drilldown's encoding.
func grafanaFilters(runID string, by Grouping, values []string) string {
	var fs []string
	if runID != "" && runID != LocalRun {
		fs = append(fs, LabelRunID+"|=|"+runID)
	}
	for i, label := range by {
		if label == LabelRunID && runID != "" {
			continue
		}
		fs = append(fs, label+"|=|"+values[i])
	}
	return strings.Join(fs, ",")
}

func (g *Grafana) link(set func(q url.Values)) string {
	u, err := url.Parse(g.Base)
	if err != nil {
		return ""
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + grafanaApp
	q := u.Query()
	q.Set("var-serviceName", g.Service)
	q.Set("var-profileMetricId", GrafanaProfileType)
	set(q)
	u.RawQuery = q.Encode()
	return u.String()
}

func unixMs(t time.Time) string { return strconv.FormatInt(t.UnixMilli(), 10) }

// RowURL returns the flame graph view of row (of a report of run runID):
// explorationType=flame-graph, var-filters with the row's labels (and the
// run id), from and to the query window in Unix milliseconds.
func (g *Grafana) RowURL(runID string, row *Row) string {
	return g.link(func(q url.Values) {
		q.Set("explorationType", "flame-graph")
		q.Set("var-filters", grafanaFilters(runID, row.By, row.Values))
		q.Set("from", unixMs(g.Start))
		q.Set("to", unixMs(g.End))
	})
}

// DiffURL returns the diff flame graph view of a row of two runs:
// explorationType=diff-flame-graph, var-filtersBaseline and diffFrom,
// diffTo for the base run, var-filtersComparison and diffFrom-2,
// diffTo-2 for the new one, from and to spanning both.
func (g *Grafana) DiffURL(after *Grafana, beforeRun string, before *Row, afterRun string, afterRow *Row) string {
	from, to := g.Start, after.End
	if after.Start.Before(from) {
		from = after.Start
	}
	if g.End.After(to) {
		to = g.End
	}
	return g.link(func(q url.Values) {
		q.Set("explorationType", "diff-flame-graph")
		q.Set("var-filtersBaseline", grafanaFilters(beforeRun, before.By, before.Values))
		q.Set("var-filtersComparison", grafanaFilters(afterRun, afterRow.By, afterRow.Values))
		q.Set("from", unixMs(from))
		q.Set("to", unixMs(to))
		q.Set("diffFrom", unixMs(g.Start))
		q.Set("diffTo", unixMs(g.End))
		q.Set("diffFrom-2", unixMs(after.Start))
		q.Set("diffTo-2", unixMs(after.End))
	})
}

// GrafanaURL returns the link of a report row, "" without --grafana.
func (r *Report) GrafanaURL(row *Row) string {
	if r.Grafana == nil || len(row.Values) != len(row.By) {
		return ""
	}
	return r.Grafana.RowURL(r.RunID, row)
}

// GrafanaURL returns the diff flame graph link of a diff row, "" without
// --grafana or when the row is in one run only.
func (d *Diff) GrafanaURL(dr *DiffRow) string {
	if d.Before.Grafana == nil || d.After.Grafana == nil || dr.Before == nil || dr.After == nil {
		return ""
	}
	return d.Before.Grafana.DiffURL(d.After.Grafana, d.Before.RunID, dr.Before, d.After.RunID, dr.After)
}
