package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/google/pprof/profile"
	"github.com/k6labels/k6labels/cmd/k6labels/htmlreport"
	"github.com/k6labels/k6labels/cmd/k6labels/k6results"
	"github.com/k6labels/k6labels/cmd/k6labels/report"
	"golang.org/x/term"
)

// listFlag is a flag that may be given several times.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

// common are the flags every command has.
type common struct {
	fs        *flag.FlagSet
	stderr    io.Writer
	pyroscope string
	service   string
	margin    time.Duration
	start     string
	end       string
	since     time.Duration
	format    string
	grafana   string
	by        string
	hc        *http.Client
	args      []string // positional arguments, wherever they stood among the flags
	save      string   // --write-profiles PREFIX: keep the profiles read
	force     bool     // --force: overwrite the files --write-profiles names
	pyro      pyroFlags
	limits
}

func newCommon(name, synopsis, about string, stderr io.Writer) *common {
	c := &common{fs: flag.NewFlagSet("k6labels "+name, flag.ContinueOnError), stderr: stderr, hc: &http.Client{}}
	c.fs.SetOutput(stderr)
	c.fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: k6labels %s %s\n\n%s\nFlags:\n", name, synopsis, about)
		c.fs.PrintDefaults()
	}
	c.fs.StringVar(&c.format, "format", "text", "output `format`: text, markdown, json or html (report and diff: one page with flame graphs)")
	c.limitFlags()
	return c
}

// pyroscopeFlags adds the flags that choose a Pyroscope server and window.
func (c *common) pyroscopeFlags() {
	c.fs.StringVar(&c.pyroscope, "pyroscope", "", "read merged profiles from the Pyroscope server at `URL` instead of pprof profiles")
	c.fs.StringVar(&c.service, "service", "", "with --pyroscope: the service `name` (service_name label, the application name pyroscope-go pushes under)")
	c.fs.StringVar(&c.start, "start", "", "with --pyroscope: window start (RFC 3339), instead of the k6 results' time range")
	c.fs.StringVar(&c.end, "end", "", "with --pyroscope: window end (RFC 3339)")
	c.fs.StringVar(&c.grafana, "grafana", "", "with --pyroscope: link each row to Grafana Profiles Drilldown at `URL` (its query, e.g. ?var-dataSource=UID, is kept)")
	c.fs.DurationVar(&c.since, "since", time.Hour, "with --pyroscope and no k6 results or --start: the window is the last `duration`")
	c.pyro.register(c.fs)
}

// parse parses args and checks the common flags; it prints usage errors.
// Flags may follow positional arguments (report --k6 run.json cpu.pb.gz
// --by name); after "--" every argument is positional.
func (c *common) parse(args []string) error {
	var err error
	if c.args, err = parseInterspersed(c.fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	if _, err := report.ParseFormat(c.format); err != nil {
		return c.bad("%v", err)
	}
	if c.pyroscope != "" && c.service == "" {
		return c.bad("--pyroscope needs --service: the service_name whose profiles to read")
	}
	if c.pyroscope == "" && c.service != "" {
		return c.bad("--service is for --pyroscope; without it, give pprof profiles")
	}
	if err := c.checkGrafana(); err != nil {
		return err
	}
	return c.checkPyroscope()
}

// bad prints a usage error and returns errUsage.
func (c *common) bad(format string, a ...any) error {
	fmt.Fprintf(c.stderr, "%s: %s\n", c.fs.Name(), fmt.Sprintf(format, a...))
	fmt.Fprintf(c.stderr, "Run '%s -h' for its flags.\n", c.fs.Name())
	return errUsage
}

func (c *common) groupings(def string) ([]report.Grouping, error) {
	s := c.by
	if s == "" {
		s = def
	}
	g, err := report.ParseGroupings(s)
	if err != nil {
		return nil, c.bad("%v", err)
	}
	return g, nil
}

// progress returns stderr when it is a terminal (not a file, pipe or
// /dev/null), else nil.
func (c *common) progress() io.Writer {
	if f, ok := c.stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return f
	}
	return nil
}

// window returns the Pyroscope query window for k6 results k (nil: flags).
func (c *common) window(k *k6results.Results) (time.Time, time.Time, error) {
	if c.start != "" || c.end != "" {
		start, err := time.Parse(time.RFC3339, c.start)
		if err != nil {
			return time.Time{}, time.Time{}, c.bad("--start %q: want RFC 3339 such as 2026-12-02T18:02:15Z", c.start)
		}
		end, err := time.Parse(time.RFC3339, c.end)
		if err != nil || !end.After(start) {
			return time.Time{}, time.Time{}, c.bad("--end %q: want RFC 3339 after --start", c.end)
		}
		return start, end, nil
	}
	if k != nil {
		return k.Start.Add(-c.margin), k.End.Add(c.margin), nil
	}
	now := time.Now()
	return now.Add(-c.since), now, nil
}

// readProfiles reads profiles at once, so that URLs of several replicas
// profile the same seconds.
func (c *common) readProfiles(ctx context.Context, where []string) ([]*profile.Profile, error) {
	ps := make([]*profile.Profile, len(where))
	errs := make([]error, len(where))
	var wg sync.WaitGroup
	if w := c.progress(); w != nil {
		fmt.Fprintf(w, "k6labels: reading %d profile(s)…\n", len(where))
	}
	_, stop := c.status(fmt.Sprintf("reading %d profile(s)", len(where)))
	defer stop()
	for i, p := range where {
		wg.Go(func() { ps[i], errs[i] = report.ReadProfileWith(ctx, c.hc, p, c.readOptions()) })
	}
	wg.Wait()
	return ps, errors.Join(errs...)
}

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
		return c.traceReport(ctx, tf, s, by, stdout)
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
	f, _ := report.ParseFormat(c.format)
	r, err := c.load(ctx, s, report.Options{By: by, Top: top, TopEveryRow: topAll, Profiles: f == report.HTML})
	if err != nil {
		return err
	}
	if f == report.HTML {
		return htmlreport.WriteReport(stdout, r)
	}
	return r.Write(stdout, f)
}

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
	c.pyroscopeFlags()
	c.runFlags()
	var before, after side
	var failAbove, normalize, match, svgFile string
	var alpha, runSD float64
	var allowInconclusive bool
	var beforeK6, afterK6 listFlag
	c.fs.Var(&beforeK6, "base-k6", "k6 results `file` of the base (before) run; repeated, one per run with one --base-profile each: several runs, compared by a rank test")
	c.fs.Var(&afterK6, "k6", "k6 results `file` of the new (after) run; repeated as --base-k6")
	c.fs.StringVar(&before.runID, "base-run-id", "", "k6_test_run_id of the base run (default: the only one)")
	c.fs.StringVar(&after.runID, "run-id", "", "k6_test_run_id of the new run (default: the only one)")
	c.fs.Var((*listFlag)(&before.profiles), "base-profile", "pprof CPU profile `file or URL` of the base run (repeatable)")
	c.fs.Var((*listFlag)(&after.profiles), "profile", "pprof CPU profile `file or URL` of the new run (repeatable)")
	c.fs.StringVar(&c.by, "by", "scenario,name,scenario+name", "row `groupings`: scenario, name, scenario+name, comma-separated")
	c.fs.StringVar(&failAbove, "fail-above", "", "exit with status 3 when a row's CPU per request grew by more than `P%` (normalized) beyond noise, and 4 when a row could not have shown such a change")
	c.fs.BoolVar(&allowInconclusive, "allow-inconclusive", false, "with --fail-above: exit 0, not 4, when rows are inconclusive (the test could not see P% in them)")
	c.fs.Float64Var(&alpha, "alpha", 0.05, "family-wise false alarm rate of the beyond-noise test over all rows")
	c.fs.Float64Var(&runSD, "run-sd", report.DefaultRunSD, "least between-run spread `σ` of a row's CPU per request (0.05 = 5% per run); 0: none, the sampling noise alone")
	c.fs.StringVar(&normalize, "normalize", "median", "machine-speed normalization: median (of the k6_name rows' changes), total, none, or row:KEY (a control row, e.g. row:/health)")
	c.fs.StringVar(&match, "match", "path", "match k6_name rows across runs by URL `path` or by full name")
	c.fs.StringVar(&svgFile, "svg", "", "write the diff flame graph of the worst row to `FILE` as SVG (small, for a pull request)")
	c.writeFlags("write the two runs' merged profiles to `PREFIX`.before.pb.gz and PREFIX.after.pb.gz (default: none)")
	td := addTraceDiffFlags(c.fs)
	if err := c.parse(args); err != nil {
		return err
	}
	if len(c.args) > 0 {
		return c.bad("unexpected arguments %q: give profiles with --base-profile and --profile", c.args)
	}
	writeTo := c.save
	threshold, err := parseFailAbove(failAbove)
	if err != nil {
		return c.bad("%v", err)
	}
	if !(alpha > 0 && alpha < 1) {
		return c.bad("--alpha %v: want a rate between 0 and 1, such as 0.05", alpha)
	}
	if !(runSD >= 0 && runSD < 1) {
		return c.bad("--run-sd %v: want a spread between 0 and 1, such as 0.05 for 5%% per run", runSD)
	}
	if runSD == 0 {
		runSD = -1 // DiffOptions: negative is none
	}
	if match != "path" && match != "name" {
		return c.bad("--match %q: use path or name", match)
	}
	if td.base != "" || td.after != "" {
		return c.traceDiff(ctx, td, threshold, failAbove, alpha, match == "path", stdout)
	}
	if c.pyroscope == "" && (len(before.profiles) == 0 || len(after.profiles) == 0) {
		return c.bad("give the profiles of both runs (--base-profile and --profile), or --pyroscope URL --service NAME")
	}
	if len(beforeK6) > 0 {
		before.k6 = beforeK6[0]
	}
	if len(afterK6) > 0 {
		after.k6 = afterK6[0]
	}
	beforeRuns, err := c.runsOf("base", before, beforeK6)
	if err != nil {
		return err
	}
	afterRuns, err := c.runsOf("new", after, afterK6)
	if err != nil {
		return err
	}
	if c.pyroscope != "" && before.runID == "" && before.k6 == "" {
		return c.bad("with --pyroscope, say which run is the base: --base-run-id or --base-k6")
	}
	by, err := c.groupings("")
	if err != nil {
		return err
	}
	if writeTo != "" {
		before.save, after.save = []string{writeTo + ".before.pb.gz"}, []string{writeTo + ".after.pb.gz"}
		if err := c.checkSave(before.save[0], after.save[0]); err != nil {
			return err
		}
	}
	f, _ := report.ParseFormat(c.format)
	// Flame graphs and profile files need every row's profile; else only
	// the rows found worse get theirs (d.Fetch).
	opts := report.Options{By: by, Top: -1, Profiles: f == report.HTML || svgFile != "" || writeTo != ""}
	detect := 0.0 // the default 10%
	if threshold >= 0 {
		detect = max(threshold, 1e-6) // 0%: no change is small enough to vouch for
	}
	var bs, as []*report.Report
	for i, s := range beforeRuns {
		b, err := c.load(ctx, s, opts)
		if err != nil {
			return fmt.Errorf("base run%s: %w", runNumber(i, len(beforeRuns)), err)
		}
		bs = append(bs, b)
	}
	for i, s := range afterRuns {
		a, err := c.load(ctx, s, opts)
		if err != nil {
			return fmt.Errorf("new run%s: %w", runNumber(i, len(afterRuns)), err)
		}
		as = append(as, a)
	}
	d, err := report.NewDiffRuns(bs, as, report.DiffOptions{Alpha: alpha, Normalize: normalize, MatchName: match == "name",
		RunSD: runSD, Detect: detect})
	if err != nil {
		return err
	}
	if err := d.Fetch(ctx); err != nil {
		return err
	}
	if err := writeDiff(stdout, stderr, d, f, svgFile); err != nil {
		return err
	}
	if writeTo != "" {
		cmd, err := d.WriteProfiles(before.save[0], after.save[0], true) // load made them
		if err != nil {
			return err
		}
		if f == report.JSON || f == report.HTML {
			fmt.Fprintf(stderr, "Merged profiles written; diff flame graph:\n  %s\n", cmd)
		} else {
			fmt.Fprintf(stdout, "\nMerged profiles: %s.before.pb.gz, %s.after.pb.gz. Diff flame graph of the worst row:\n  %s\n", writeTo, writeTo, cmd)
		}
	}
	if threshold >= 0 {
		if regs := d.Regressions(threshold); len(regs) > 0 {
			var keys []string
			for _, r := range regs {
				keys = append(keys, fmt.Sprintf("%s=%s %s", strings.Join(r.By, ","), r.Key, report.Change(r.Normalized)))
			}
			unnormalized := ""
			if strings.HasPrefix(d.Normalize, "none (") {
				unnormalized = " (machine speed NOT normalized: too few routes for --normalize median; see the WARNING above)"
			}
			return fmt.Errorf("%w: CPU per request grew by more than %s beyond noise%s: %s", errRegression, failAbove, unnormalized, strings.Join(keys, "; "))
		}
		if err := inconclusive(d, threshold, failAbove); err != nil && !allowInconclusive {
			return err
		}
	}
	return nil
}

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
	if c.format == string(report.HTML) {
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
	f, _ := report.ParseFormat(c.format)
	return report.WriteRuns(stdout, f, src.String(), start, end, runs)
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
		runs[i] = side{k6: f, runID: s.runID}
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
