package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
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
}

func newCommon(name, synopsis, about string, stderr io.Writer) *common {
	c := &common{fs: flag.NewFlagSet("k6labels "+name, flag.ContinueOnError), stderr: stderr, hc: &http.Client{}}
	c.fs.SetOutput(stderr)
	c.fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: k6labels %s %s\n\n%s\nFlags:\n", name, synopsis, about)
		c.fs.PrintDefaults()
	}
	c.fs.StringVar(&c.format, "format", "text", "output `format`: text, markdown, json or html (report and diff: one page with flame graphs)")
	return c
}

// pyroscopeFlags adds the flags that choose a Pyroscope server and window.
func (c *common) pyroscopeFlags() {
	c.fs.StringVar(&c.pyroscope, "pyroscope", "", "read merged profiles from the Pyroscope server at `URL` instead of pprof profiles")
	c.fs.StringVar(&c.service, "service", "", "with --pyroscope: the service `name` (service_name label, the application name pyroscope-go pushes under)")
	c.fs.DurationVar(&c.margin, "margin", report.PyroscopeWindow, "with --pyroscope and k6 results: query this much before and after the run (at least pyroscope-go's 30s CPU window)")
	c.fs.StringVar(&c.start, "start", "", "with --pyroscope: window start (RFC 3339), instead of the k6 results' time range")
	c.fs.StringVar(&c.end, "end", "", "with --pyroscope: window end (RFC 3339)")
	c.fs.StringVar(&c.grafana, "grafana", "", "with --pyroscope: link each row to Grafana Profiles Drilldown at `URL` (its query, e.g. ?var-dataSource=UID, is kept)")
	c.fs.DurationVar(&c.since, "since", time.Hour, "with --pyroscope and no k6 results or --start: the window is the last `duration`")
}

// parse parses args and checks the common flags; it prints usage errors.
func (c *common) parse(args []string) error {
	if err := c.fs.Parse(args); err != nil {
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
	if c.pyroscope != "" && c.margin < report.PyroscopeWindow {
		fmt.Fprintf(c.stderr, "k6labels: warning: --margin %s is less than pyroscope-go's %s CPU window: the run's first samples may be missed\n", c.margin, report.PyroscopeWindow)
	}
	return nil
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

// side is what one run is read from.
type side struct {
	k6       string
	runID    string
	profiles []string
}

// load reads the k6 results and profiles of one run and makes its report.
func (c *common) load(ctx context.Context, s side, opts report.Options) (*report.Report, error) {
	switch {
	case c.pyroscope != "" && len(s.profiles) > 0:
		return nil, c.bad("give either --pyroscope or pprof profiles, not both")
	case c.pyroscope == "" && len(s.profiles) == 0:
		return nil, c.bad("no profiles: give pprof CPU profiles (files or /debug/pprof/profile URLs), or --pyroscope URL --service NAME")
	}
	if s.k6 != "" {
		k, err := k6results.ReadFile(s.k6)
		if err != nil {
			return nil, err
		}
		opts.K6 = k
	}
	opts.RunID = s.runID
	var src report.Source
	var start, end time.Time
	switch {
	case c.pyroscope != "":
		var err error
		start, end, err = c.window(opts.K6)
		if err != nil {
			return nil, err
		}
		if src, err = newPyroscopeSource(c, start, end); err != nil {
			return nil, err
		}
	case len(s.profiles) > 0:
		ps, err := c.readProfiles(ctx, s.profiles)
		if err != nil {
			return nil, err
		}
		name := s.profiles[0]
		if len(s.profiles) > 1 {
			name = fmt.Sprintf("%d profiles merged (%s, …)", len(s.profiles), s.profiles[0])
		}
		if src, err = report.NewProfileSource(name, ps...); err != nil {
			return nil, err
		}
	}
	w, stop := c.status("making the report")
	defer stop()
	opts.Progress = w
	r, err := report.New(ctx, src, opts)
	if err != nil {
		return nil, err
	}
	return r, c.linkGrafana(r, start, end)
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
		wg.Go(func() { ps[i], errs[i] = report.ReadProfile(ctx, c.hc, p) })
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
	var s side
	var top int
	var topAll bool
	c.fs.StringVar(&s.k6, "k6", "", "k6 results `file` (k6 run --out json=FILE or --out csv=FILE, gzip or not)")
	c.fs.StringVar(&s.runID, "run-id", "", "the k6_test_run_id to report on (default: the only one)")
	c.fs.StringVar(&c.by, "by", "run,scenario,name,scenario+name", "row `groupings`: run, scenario, name, scenario+name, comma-separated")
	c.fs.IntVar(&top, "top", 5, "functions by self CPU listed per scenario (0: none)")
	c.fs.BoolVar(&topAll, "top-every-row", false, "list top functions for every row, not only scenarios")
	c.fs.Var((*listFlag)(&s.profiles), "profile", "pprof CPU profile `file or URL` (repeatable; also as arguments)")
	if err := c.parse(args); err != nil {
		return err
	}
	s.profiles = append(s.profiles, c.fs.Args()...)
	by, err := c.groupings("")
	if err != nil {
		return err
	}
	if top == 0 {
		top = -1
	}
	r, err := c.load(ctx, s, report.Options{By: by, Top: top, TopEveryRow: topAll})
	if err != nil {
		return err
	}
	f, _ := report.ParseFormat(c.format)
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
matched by URL path. It writes the two merged profiles and prints the
go tool pprof command of the worst row's diff flame graph.
`, stderr)
	c.pyroscopeFlags()
	var before, after side
	var failAbove, normalize, match, writeTo, svgFile string
	var alpha float64
	c.fs.StringVar(&before.k6, "base-k6", "", "k6 results `file` of the base (before) run")
	c.fs.StringVar(&after.k6, "k6", "", "k6 results `file` of the new (after) run")
	c.fs.StringVar(&before.runID, "base-run-id", "", "k6_test_run_id of the base run (default: the only one)")
	c.fs.StringVar(&after.runID, "run-id", "", "k6_test_run_id of the new run (default: the only one)")
	c.fs.Var((*listFlag)(&before.profiles), "base-profile", "pprof CPU profile `file or URL` of the base run (repeatable)")
	c.fs.Var((*listFlag)(&after.profiles), "profile", "pprof CPU profile `file or URL` of the new run (repeatable)")
	c.fs.StringVar(&c.by, "by", "scenario,name,scenario+name", "row `groupings`: scenario, name, scenario+name, comma-separated")
	c.fs.StringVar(&failAbove, "fail-above", "", "exit with status 3 when a row's CPU per request grew by more than `P%` (normalized) beyond noise")
	c.fs.Float64Var(&alpha, "alpha", 0.05, "family-wise false alarm rate of the beyond-noise test over all rows")
	c.fs.StringVar(&normalize, "normalize", "median", "machine-speed normalization: median (of the k6_name rows' changes), total, none, or row:KEY (a control row, e.g. row:/health)")
	c.fs.StringVar(&match, "match", "path", "match k6_name rows across runs by URL `path` or by full name")
	c.fs.StringVar(&svgFile, "svg", "", "write the diff flame graph of the worst row to `FILE` as SVG (small, for a pull request)")
	c.fs.StringVar(&writeTo, "write-profiles", "k6labels-diff", "write the merged profiles to `PREFIX`.before.pb.gz and PREFIX.after.pb.gz (\"\": do not)")
	if err := c.parse(args); err != nil {
		return err
	}
	if c.fs.NArg() > 0 {
		return c.bad("unexpected arguments %q: give profiles with --base-profile and --profile", c.fs.Args())
	}
	threshold := -1.0
	if failAbove != "" {
		v, err := strconv.ParseFloat(strings.TrimSuffix(failAbove, "%"), 64)
		if err != nil || v < 0 {
			return c.bad("--fail-above %q: want a percentage such as 10%%", failAbove)
		}
		threshold = v / 100
	}
	if alpha <= 0 || alpha >= 1 {
		return c.bad("--alpha %v: want a rate between 0 and 1, such as 0.05", alpha)
	}
	if match != "path" && match != "name" {
		return c.bad("--match %q: use path or name", match)
	}
	if c.pyroscope == "" && (len(before.profiles) == 0 || len(after.profiles) == 0) {
		return c.bad("give the profiles of both runs (--base-profile and --profile), or --pyroscope URL --service NAME")
	}
	if c.pyroscope != "" && before.runID == "" && before.k6 == "" {
		return c.bad("with --pyroscope, say which run is the base: --base-run-id or --base-k6")
	}
	by, err := c.groupings("")
	if err != nil {
		return err
	}
	opts := report.Options{By: by, Top: -1}
	b, err := c.load(ctx, before, opts)
	if err != nil {
		return fmt.Errorf("base run: %w", err)
	}
	a, err := c.load(ctx, after, opts)
	if err != nil {
		return fmt.Errorf("new run: %w", err)
	}
	d, err := report.NewDiff(b, a, report.DiffOptions{Alpha: alpha, Normalize: normalize, MatchName: match == "name"})
	if err != nil {
		return err
	}
	f, _ := report.ParseFormat(c.format)
	if err := writeDiff(stdout, stderr, d, f, svgFile); err != nil {
		return err
	}
	if writeTo != "" {
		cmd, err := d.WriteProfiles(writeTo+".before.pb.gz", writeTo+".after.pb.gz")
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
			return fmt.Errorf("%w: CPU per request grew by more than %s beyond noise: %s", errRegression, failAbove, strings.Join(keys, "; "))
		}
	}
	return nil
}

func runRuns(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := newCommon("runs", "--pyroscope URL --service NAME [flags]",
		`Lists the k6 test run ids a Pyroscope server has CPU profiles of for one
service, with the time range of their points (SelectSeries grouped by
k6_test_run_id; points are stamped at the start of pyroscope-go's CPU window,
so the run itself may start up to 30 s after the first).
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
	start, end, err := c.window(nil)
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
