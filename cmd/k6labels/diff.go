package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/k6labels/k6labels/cmd/k6labels/output"
	"github.com/k6labels/k6labels/cmd/k6labels/report"
)

// diffFlags are the flags of the diff command beyond the common ones.
type diffFlags struct {
	before, after        side
	failAbove, normalize string
	match, svgFile       string
	alpha, runSD         float64
	allowInconclusive    bool
	beforeK6, afterK6    listFlag
	threshold            float64 // --fail-above as a fraction; < 0: none
	td                   *traceDiffFlags
}

// runDiff is the diff command.
func runDiff(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := newCommon("diff", "[flags]",
		`Compares two runs row by row: CPU per request before and after (with k6
results for both), the change raw and normalized for machine speed, and
whether it is beyond sampling noise. The runs are two sets of pprof profiles
(--base-profile, --profile), or two test run ids / time ranges of one
Pyroscope service (--base-run-id, --run-id with --base-k6, --k6). Rows are
matched by URL path. With --write-profiles it writes the two merged profiles
and prints the go tool pprof command of the worst row's diff flame graph.
`, stderr)
	var df diffFlags
	df.register(c)
	if err := c.parse(args); err != nil {
		return err
	}
	if err := df.check(c); err != nil {
		return err
	}
	if df.td.base != "" || df.td.after != "" {
		return c.traceDiff(ctx, df.td, df.threshold, df.failAbove, df.alpha, df.match == "path", stdout)
	}
	beforeRuns, afterRuns, by, err := df.sides(c)
	if err != nil {
		return err
	}
	d, err := df.compare(ctx, c, by, beforeRuns, afterRuns)
	if err != nil {
		return c.keepOnError(err)
	}
	if err := df.write(c, d, stdout, stderr); err != nil {
		return c.keepOnError(err)
	}
	return df.gate(d)
}

// register adds the diff command's flags to c.
func (df *diffFlags) register(c *common) {
	c.pyroscopeFlags()
	c.runFlags()
	c.fs.Var(&df.beforeK6, "base-k6", "k6 results `file` of the base (before) run; repeated, one per run with one --base-profile each: several runs, compared by a rank test")
	c.fs.Var(&df.afterK6, "k6", "k6 results `file` of the new (after) run; repeated as --base-k6")
	c.fs.StringVar(&df.before.runID, "base-run-id", "", "k6_test_run_id of the base run (default: the only one)")
	c.fs.StringVar(&df.after.runID, "run-id", "", "k6_test_run_id of the new run (default: the only one)")
	c.fs.Var((*listFlag)(&df.before.profiles), "base-profile", "pprof CPU profile `file or URL` of the base run (repeatable)")
	c.fs.Var((*listFlag)(&df.after.profiles), "profile", "pprof CPU profile `file or URL` of the new run (repeatable)")
	c.fs.StringVar(&c.by, "by", "scenario,name,scenario+name", "row `groupings`: scenario, name, scenario+name, comma-separated")
	c.fs.StringVar(&df.failAbove, "fail-above", "", "exit with status 3 when a row's CPU per request grew by more than `P%` (normalized) beyond noise, and 4 when a row could not have shown such a change")
	c.fs.BoolVar(&df.allowInconclusive, "allow-inconclusive", false, "with --fail-above: exit 0, not 4, when rows are inconclusive (the test could not see P% in them) or untested (CPU without requests on a side)")
	c.fs.Float64Var(&df.alpha, "alpha", 0.05, "family-wise false alarm rate of the beyond-noise test over all rows")
	c.fs.Float64Var(&df.runSD, "run-sd", report.DefaultRunSD, "least between-run spread `σ` of a row's CPU per request (0.05 = 5% per run); 0: none, the sampling noise alone")
	c.fs.StringVar(&df.normalize, "normalize", "median", "machine-speed normalization: median (of the k6_name rows' changes), total, none, or row:KEY (a control row, e.g. row:/health)")
	c.fs.StringVar(&df.match, "match", "path", "match k6_name rows across runs by URL `path` or by full name")
	c.fs.StringVar(&df.svgFile, "svg", "", "write the diff flame graph of the worst row to `FILE` as SVG (small, for a pull request)")
	c.writeFlags("write the two runs' merged profiles to `PREFIX`.before.pb.gz and PREFIX.after.pb.gz (default: none)")
	df.td = addTraceDiffFlags(c.fs)
}

// check checks the diff flags once parsed; it prints usage errors.
func (df *diffFlags) check(c *common) error {
	if len(c.args) > 0 {
		return c.bad("unexpected arguments %q: give profiles with --base-profile and --profile", c.args)
	}
	var err error
	if df.threshold, err = parseFailAbove(df.failAbove); err != nil {
		return c.bad("%v", err)
	}
	if !(df.alpha > 0 && df.alpha < 1) {
		return c.bad("--alpha %v: want a rate between 0 and 1, such as 0.05", df.alpha)
	}
	if !(df.runSD >= 0 && df.runSD < 1) {
		return c.bad("--run-sd %v: want a spread between 0 and 1, such as 0.05 for 5%% per run", df.runSD)
	}
	if df.runSD == 0 {
		df.runSD = -1 // DiffOptions: negative is none
	}
	if df.match != "path" && df.match != "name" {
		return c.bad("--match %q: use path or name", df.match)
	}
	return nil
}

// sides returns the runs of each side and the groupings; it prints usage
// errors.
func (df *diffFlags) sides(c *common) (before, after []side, by []report.Grouping, err error) {
	if c.pyroscope == "" && (len(df.before.profiles) == 0 || len(df.after.profiles) == 0) {
		return nil, nil, nil, c.bad("give the profiles of both runs (--base-profile and --profile), or --pyroscope URL --service NAME")
	}
	if len(df.beforeK6) > 0 {
		df.before.k6 = df.beforeK6[0]
	}
	if len(df.afterK6) > 0 {
		df.after.k6 = df.afterK6[0]
	}
	df.before.runFlag = "--base-run-id"
	if before, err = c.runsOf("base", df.before, df.beforeK6); err != nil {
		return nil, nil, nil, err
	}
	if after, err = c.runsOf("new", df.after, df.afterK6); err != nil {
		return nil, nil, nil, err
	}
	if c.pyroscope != "" && df.before.runID == "" && df.before.k6 == "" {
		return nil, nil, nil, c.bad("with --pyroscope, say which run is the base: --base-run-id or --base-k6")
	}
	if by, err = c.groupings(""); err != nil {
		return nil, nil, nil, err
	}
	if c.save != "" {
		df.before.save, df.after.save = []string{c.save + ".before.pb.gz"}, []string{c.save + ".after.pb.gz"}
		if err := c.checkSave(df.before.save[0], df.after.save[0]); err != nil {
			return nil, nil, nil, err
		}
	}
	return before, after, by, nil
}

// compare loads the runs of both sides and compares them; with neither
// flame graphs nor profile files to write, only the rows found worse get
// their profiles fetched (a Pyroscope source's other rows need none).
func (df *diffFlags) compare(ctx context.Context, c *common, by []report.Grouping, beforeRuns, afterRuns []side) (*report.Diff, error) {
	f, _ := output.ParseFormat(c.format)
	opts := report.Options{By: by, Top: -1, Profiles: f == output.HTML || df.svgFile != "" || c.save != ""}
	load := func(name string, runs []side) ([]*report.Report, error) {
		var rs []*report.Report
		for i, s := range runs {
			r, err := c.load(ctx, s, opts)
			if err != nil {
				return nil, fmt.Errorf("%s run%s: %w", name, runNumber(i, len(runs)), err)
			}
			rs = append(rs, r)
		}
		return rs, nil
	}
	bs, err := load("base", beforeRuns)
	if err != nil {
		return nil, err
	}
	as, err := load("new", afterRuns)
	if err != nil {
		return nil, err
	}
	detect := 0.0 // the default 10%
	if df.threshold >= 0 {
		detect = max(df.threshold, 1e-6) // 0%: no change is small enough to vouch for
	}
	d, err := report.NewDiffRuns(bs, as, report.DiffOptions{Alpha: df.alpha, Normalize: df.normalize, MatchName: df.match == "name",
		RunSD: df.runSD, Detect: detect})
	if err != nil {
		return nil, err
	}
	if err := d.Fetch(ctx); err != nil {
		return nil, err
	}
	return d, nil
}

// write writes the diff, and with --write-profiles the command of the
// worst row's diff flame graph.
func (df *diffFlags) write(c *common, d *report.Diff, stdout, stderr io.Writer) error {
	f, _ := output.ParseFormat(c.format)
	if err := writeDiff(stdout, stderr, d, f, df.svgFile); err != nil {
		return err
	}
	if c.save == "" {
		return nil
	}
	cmd, err := d.WriteProfiles(df.before.save[0], df.after.save[0], true) // load made them
	if err != nil {
		return err
	}
	if f == output.JSON || f == output.HTML {
		fmt.Fprintf(stderr, "Merged profiles written; diff flame graph:\n  %s\n", cmd)
	} else {
		fmt.Fprintf(stdout, "\nMerged profiles: %s.before.pb.gz, %s.after.pb.gz. Diff flame graph of the worst row:\n  %s\n", c.save, c.save, cmd)
	}
	return nil
}

// gate returns the error of --fail-above: a regression, or rows that
// could not have shown one (unless --allow-inconclusive).
func (df *diffFlags) gate(d *report.Diff) error {
	if df.threshold < 0 {
		return nil
	}
	if regs := d.Regressions(df.threshold); len(regs) > 0 {
		var keys []string
		for _, r := range regs {
			keys = append(keys, fmt.Sprintf("%s=%s %s", strings.Join(r.By, ","), r.Key, report.Change(r.Normalized)))
		}
		unnormalized := ""
		if strings.HasPrefix(d.Normalize, "none (") {
			unnormalized = " (machine speed NOT normalized: too few routes for --normalize median; see the WARNING above)"
		}
		return fmt.Errorf("%w: CPU per request grew by more than %s beyond noise%s: %s", errRegression, df.failAbove, unnormalized, strings.Join(keys, "; "))
	}
	if err := inconclusive(d, df.threshold, df.failAbove); err != nil && !df.allowInconclusive {
		return err
	}
	return nil
}

// runsOf splits one side of a diff into its runs: one run, or with several
// k6 results files one run per file, each with the profile given in the
// same position (or, with --pyroscope, the window of its k6 results).
func (c *common) runsOf(name string, s side, k6 []string) ([]side, error) {
	if len(k6) <= 1 {
		return []side{s}, nil
	}
	if c.pyroscope == "" && len(s.profiles) != len(k6) {
		return nil, c.bad("%d k6 results files for the %s run but %d profiles: with several runs per side, give one profile per k6 file, in the same order", len(k6), name, len(s.profiles))
	}
	runs := make([]side, len(k6))
	for i, f := range k6 {
		runs[i] = side{k6: f, runID: s.runID, runFlag: s.runFlag}
		if c.pyroscope == "" {
			runs[i].profiles = []string{s.profiles[i]}
		}
	}
	return runs, nil
}

// runNumber names run i of n in an error: "" for a single run.
func runNumber(i, n int) string {
	if n == 1 {
		return ""
	}
	return fmt.Sprintf(" %d of %d", i+1, n)
}
