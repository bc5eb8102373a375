package main

import (
	"context"
	"io"

	"github.com/k6labels/k6labels/cmd/k6labels/htmlreport"
	"github.com/k6labels/k6labels/cmd/k6labels/output"
	"github.com/k6labels/k6labels/cmd/k6labels/report"
)

// runReport is the report command.
func runReport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := newCommon("report", "[flags] [profile ...]",
		`Splits the CPU of k6-labelled profiles by k6 test run, scenario, request name
and scenario × name. With k6's results (--k6) it also shows the requests and the
CPU per request of each row with a 95% interval from the row's sample count.
Profiles are pprof CPU profile files or /debug/pprof/profile URLs (merged when
several), or with --pyroscope the merged profiles of one service.
`, stderr)
	c.pyroscopeFlags()
	c.runFlags()
	var s side
	var top int
	var topAll bool
	c.fs.StringVar(&s.k6, "k6", "", "k6 results `file` (k6 run --out json=FILE or --out csv=FILE, gzip or not)")
	c.fs.StringVar(&s.runID, "run-id", "", "the k6_test_run_id to report on (default: the only one)")
	c.fs.StringVar(&c.by, "by", "run,scenario,name,scenario+name", "row `groupings`: run, scenario, name, scenario+name, comma-separated")
	c.fs.IntVar(&top, "top", 5, "functions by self CPU listed per scenario (0: none)")
	c.fs.BoolVar(&topAll, "top-every-row", false, "list top functions for every row, not only scenarios")
	c.fs.Var((*listFlag)(&s.profiles), "profile", "pprof CPU profile `file or URL` (repeatable; also as arguments)")
	c.writeFlags("write the profiles read to `PREFIX`.pb.gz (several: PREFIX.1.pb.gz, …), before anything else can fail")
	tf := addTraceFlags(c.fs)
	if err := c.parse(args); err != nil {
		return err
	}
	s.profiles = append(s.profiles, c.args...)
	by, err := c.groupings("")
	if err != nil {
		return err
	}
	if tf.src != "" {
		return c.keepOnError(c.traceReport(ctx, tf, s, by, stdout))
	}
	if c.save != "" {
		s.save = reportPaths(c.save, max(1, len(s.profiles)))
		if err := c.checkSave(s.save...); err != nil {
			return err
		}
	}
	if top == 0 {
		top = -1
	}
	f, _ := output.ParseFormat(c.format)
	r, err := c.load(ctx, s, report.Options{By: by, Top: top, TopEveryRow: topAll, Profiles: f == output.HTML})
	if err != nil {
		return c.keepOnError(err)
	}
	if f == output.HTML {
		return c.keepOnError(htmlreport.WriteReport(stdout, r))
	}
	return c.keepOnError(output.WriteReport(stdout, r, f))
}
