// Package output writes reports, diffs and run lists, and execution-trace
// reports and comparisons (package trace), as text, markdown or json (html
// is package htmlreport): the model's figures in words and tables, with the
// json schemas documented in docs/report.md.
package output

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/k6labels/k6labels/cmd/k6labels/report"
	"github.com/k6labels/k6labels/cmd/k6labels/texttab"
	"github.com/k6labels/k6labels/cmd/k6labels/trace"
)

// reportOut and diffOut carry the writing methods of a report and a diff;
// traceOut and traceDiffOut those of a trace report and a trace comparison.
type (
	reportOut    struct{ *report.Report }
	diffOut      struct{ *report.Diff }
	traceOut     struct{ *trace.Report }
	traceDiffOut struct{ *trace.Comparison }
)

// WriteReport writes the report r in format f (not html).
func WriteReport(w io.Writer, r *report.Report, f Format) error { return reportOut{r}.Write(w, f) }

// WriteDiff writes the diff d in format f (not html).
func WriteDiff(w io.Writer, d *report.Diff, f Format) error { return diffOut{d}.Write(w, f) }

// WriteTrace writes the trace report r in format f (not html).
func WriteTrace(w io.Writer, r *trace.Report, f Format) error { return traceOut{r}.Write(w, f) }

// WriteTraceDiff writes the trace comparison d in format f (not html).
func WriteTraceDiff(w io.Writer, d *trace.Comparison, f Format) error {
	return traceDiffOut{d}.Write(w, f)
}

// A Format is one of the output formats of reports and diffs.
type Format string

// The output formats.
const (
	Text     Format = "text"     // aligned tables for a terminal
	Markdown Format = "markdown" // GitHub-flavoured tables, for CI summaries and PR comments
	JSON     Format = "json"     // one object; fields documented in docs/report.md
	HTML     Format = "html"     // one self-contained page with flame graphs, written by package htmlreport
)

// ParseFormat checks a --format value.
func ParseFormat(s string) (Format, error) {
	switch f := Format(s); f {
	case Text, Markdown, JSON, HTML:
		return f, nil
	}
	return "", fmt.Errorf("--format: unknown format %q: use text, markdown, json or html", s)
}

// writeTable writes t in format f, then a blank line. A write error is
// kept by w, a [texttab.Sticky] of the caller, which writes nothing after.
func writeTable(w io.Writer, f Format, t *texttab.Table) {
	if t.Write(w, f == Markdown) == nil {
		fmt.Fprintln(w)
	}
}

func ms(d time.Duration) string { return fmt.Sprintf("%.3f", float64(d)/1e6) }

func heading(w io.Writer, f Format, level int, s string) {
	if f == Markdown {
		fmt.Fprintf(w, "%s %s\n\n", strings.Repeat("#", level), s)
		return
	}
	fmt.Fprintf(w, "%s\n\n", s)
}

// itemf writes one line of prose: as it is in text, as a list item in
// markdown (where consecutive lines would run into one paragraph).
func itemf(w io.Writer, f Format, format string, a ...any) {
	if f == Markdown {
		format = "- " + format
	}
	fmt.Fprintf(w, format+"\n", a...)
}
