package main

import (
	"context"
	"io"

	"github.com/k6labels/k6labels/cmd/k6labels/output"
)

// runRuns is the runs command.
func runRuns(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := newCommon("runs", "--pyroscope URL --service NAME [flags]",
		`Lists the k6 test run ids a Pyroscope server has CPU profiles of for one
service, with the time range of their points: SelectSeries grouped by
k6_test_run_id in 15 s steps on a fixed grid (the window is widened to whole
steps), each point the end of the step holding a profile's stamp, the start
of its 30 s CPU window. A run's requests lie between 15 s before its first
point and 30 s after its last.
`, stderr)
	c.pyroscopeFlags()
	if err := c.parse(args); err != nil {
		return err
	}
	if c.format == string(output.HTML) {
		return c.bad("--format html is for report and diff; use text, markdown or json")
	}
	if c.pyroscope == "" {
		return c.bad("runs needs --pyroscope URL and --service NAME")
	}
	start, end, err := c.runsWindow()
	if err != nil {
		return err
	}
	src, err := newPyroscopeSource(c, start, end)
	if err != nil {
		return err
	}
	runs, err := src.Runs(ctx)
	if err != nil {
		return err
	}
	f, _ := output.ParseFormat(c.format)
	return output.WriteRuns(stdout, f, src.String(), start, end, runs)
}
