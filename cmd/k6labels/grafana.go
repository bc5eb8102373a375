package main

import (
	"time"

	"github.com/k6labels/k6labels/cmd/k6labels/report"
)

// checkGrafana checks --grafana: it needs --pyroscope (the links select
// what the Pyroscope server holds) and an http(s) URL without credentials.
func (c *common) checkGrafana() error {
	if c.grafana == "" {
		return nil
	}
	if c.pyroscope == "" {
		return c.bad("--grafana links rows to the profiles of a Pyroscope server: give --pyroscope URL --service NAME too")
	}
	if _, err := report.NewGrafana(c.grafana, c.service, time.Time{}, time.Time{}); err != nil {
		return c.bad("%v", err)
	}
	return nil
}

// linkGrafana gives r the Grafana links of the query window start, end.
func (c *common) linkGrafana(r *report.Report, start, end time.Time) error {
	if c.grafana == "" {
		return nil
	}
	g, err := report.NewGrafana(c.grafana, c.service, start, end)
	if err != nil {
		return err
	}
	r.Grafana = g
	return nil
}
