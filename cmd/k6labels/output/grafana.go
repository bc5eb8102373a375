package output

import (
	"fmt"
	"io"
)

// writeLinks lists the rows' Grafana links after the tables.
func (r reportOut) writeLinks(w io.Writer, f Format) {
	if r.Grafana == nil {
		return
	}
	heading(w, f, 3, "Grafana Profiles Drilldown")
	for i := range r.Rows {
		row := &r.Rows[i]
		if u := r.GrafanaURL(row); u != "" {
			itemf(w, f, "%s=%s: %s", row.By, row.Key(), u)
		}
	}
	fmt.Fprintln(w)
}

// writeLinks lists the diff rows' Grafana diff flame graph links.
func (d diffOut) writeLinks(w io.Writer, f Format) {
	if d.Before.Grafana == nil || d.After.Grafana == nil {
		return
	}
	heading(w, f, 3, "Grafana Profiles Drilldown: diff flame graphs")
	for i := range d.Rows {
		dr := &d.Rows[i]
		if u := d.GrafanaURL(dr); u != "" {
			itemf(w, f, "%s=%s (%s): %s", dr.By, dr.Key, dr.Verdict, u)
		}
	}
	fmt.Fprintln(w)
}
