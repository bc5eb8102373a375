package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/k6labels/k6labels/cmd/k6labels/k6results"
	"github.com/k6labels/k6labels/cmd/k6labels/pyroscope"
	"github.com/k6labels/k6labels/cmd/k6labels/pyrosource"
	"github.com/k6labels/k6labels/cmd/k6labels/report"
)

// The environment variables that give Pyroscope credentials; a flag wins.
const (
	envTenant   = "K6LABELS_PYROSCOPE_TENANT"
	envUser     = "K6LABELS_PYROSCOPE_USER"
	envPassword = "K6LABELS_PYROSCOPE_PASSWORD"
	envToken    = "K6LABELS_PYROSCOPE_TOKEN"
)

// defaultWait is --wait's default: pyroscope-go uploads a 30 s CPU window
// when it ends, so the window holding a run's last request is there at most
// 30 s after it, plus the upload and the server's ingestion (a few seconds).
const defaultWait = 45 * time.Second

// pollEvery is how often the command asks whether the run's last window is
// uploaded while it waits.
const pollEvery = 5 * time.Second

// now and sleep are the clock of the wait for uploads; tests replace them
// with a simulated clock that the replay server shares.
var (
	now   = time.Now
	sleep = func(ctx context.Context, d time.Duration) error {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			return nil
		}
	}
)

// errIncomplete is returned under --strict when the run's last window is
// not yet in Pyroscope after --wait.
var errIncomplete = errors.New("incomplete")

// pyroFlags are the Pyroscope flags beyond the server, service and window.
type pyroFlags struct {
	tenant, user, password, token string
	maxAnswer                     string
	timeout                       time.Duration
	wait                          time.Duration
	strict                        bool
	passwordFlag                  bool // --password was on the command line
}

// register adds the connection flags: credentials, bounds, timeout.
func (p *pyroFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&p.tenant, "tenant", "", "with --pyroscope: tenant `id` sent as X-Scope-OrgID (default $"+envTenant+")")
	fs.StringVar(&p.user, "user", "", "with --pyroscope: basic auth `user` (default $"+envUser+"; the password from $"+envPassword+")")
	fs.Func("password", "with --pyroscope: basic auth password; prefer $"+envPassword+", which no process list shows", func(s string) error {
		p.password, p.passwordFlag = s, true
		return nil
	})
	fs.StringVar(&p.token, "token", "", "with --pyroscope: bearer `token` (default $"+envToken+")")
	fs.StringVar(&p.maxAnswer, "pyroscope-max-answer", pyroscope.FormatBytes(pyroscope.DefaultMaxAnswer), "with --pyroscope: refuse an answer longer than `size` (after decompression)")
	fs.DurationVar(&p.timeout, "timeout", pyroscope.DefaultTimeout, "with --pyroscope: the longest one query to the server may take, its answer included")
}

// runFlags adds the flags of commands that read one k6 run from Pyroscope.
func (c *common) runFlags() {
	c.fs.DurationVar(&c.margin, "margin", report.PyroscopeWindow, "with --pyroscope, k6 results and a test run id: query this much before and after the run (at least pyroscope-go's 30s CPU window)")
	c.fs.DurationVar(&c.pyro.wait, "wait", defaultWait, "with --pyroscope and k6 results: wait up to this long for the run's last 30s CPU window to be uploaded")
	c.fs.BoolVar(&c.pyro.strict, "strict", false, "with --pyroscope: fail (exit 1) rather than warn when the run's last CPU window is not uploaded after --wait")
}

// checkPyroscope checks the Pyroscope flags and fills credentials from the
// environment; it prints usage errors and warnings.
func (c *common) checkPyroscope() error {
	p := &c.pyro
	if p.maxAnswer == "" {
		return nil // a command without Pyroscope flags
	}
	env := func(v *string, name string) {
		if *v == "" {
			*v = os.Getenv(name)
		}
	}
	env(&p.tenant, envTenant)
	env(&p.user, envUser)
	env(&p.password, envPassword)
	env(&p.token, envToken)
	if _, err := pyroscope.ParseBytes(p.maxAnswer); err != nil {
		return c.bad("--pyroscope-max-answer: %v", err)
	}
	switch {
	case p.timeout <= 0:
		return c.bad("--timeout %s: want a positive duration such as 30s", p.timeout)
	case p.wait < 0:
		return c.bad("--wait %s: want 0 (do not wait) or a duration such as 45s", p.wait)
	case p.password != "" && p.user == "":
		return c.bad("a password without a user: give --user (or $%s) too", envUser)
	case p.token != "" && p.user != "":
		return c.bad("give either basic auth (--user) or a bearer token (--token), not both")
	}
	if p.passwordFlag && c.pyroscope != "" {
		fmt.Fprintf(c.stderr, "k6labels: warning: --password is visible to other users of this machine in its process list; set $%s instead\n", envPassword)
	}
	if c.pyroscope != "" && c.margin != 0 && c.margin < report.PyroscopeWindow {
		fmt.Fprintf(c.stderr, "k6labels: warning: --margin %s is less than pyroscope-go's %s CPU window: the run's first samples may be missed\n", c.margin, report.PyroscopeWindow)
	}
	return nil
}

// client returns the Pyroscope client of the flags.
func (c *common) client() (*pyroscope.Client, error) {
	p := &c.pyro
	maxAnswer, _ := pyroscope.ParseBytes(p.maxAnswer)
	opts := []pyroscope.Option{pyroscope.WithMaxAnswer(maxAnswer), pyroscope.WithTimeout(p.timeout)}
	if p.tenant != "" {
		opts = append(opts, pyroscope.WithTenant(p.tenant))
	}
	if p.user != "" {
		opts = append(opts, pyroscope.WithBasicAuth(p.user, p.password))
	}
	if p.token != "" {
		opts = append(opts, pyroscope.WithBearerToken(p.token))
	}
	client, err := pyroscope.NewClient(c.pyroscope, c.hc, opts...)
	if err != nil {
		return nil, c.bad("--pyroscope: %v", err)
	}
	return client, nil
}

func newPyroscopeSource(c *common, start, end time.Time) (*pyrosource.Source, error) {
	client, err := c.client()
	if err != nil {
		return nil, err
	}
	return pyrosource.New(client, client.URL(), c.service, start, end), nil
}

// runsWindow returns the window of the runs command, widened to whole
// SelectSeries steps so that the points' stamps do not move with the time
// of asking.
func (c *common) runsWindow() (time.Time, time.Time, error) {
	start, end, err := c.window(nil)
	if err != nil {
		return start, end, err
	}
	step := report.SeriesStep
	start = start.Truncate(step)
	if t := end.Truncate(step); t.Before(end) {
		end = t.Add(step)
	}
	return start, end, nil
}

// pyroscopeSource returns the source of one run's report: the run given
// (runID, given by runFlag, "" for --run-id), else the only one in the k6
// results' range. With k6 results it first waits for the run's last window
// to be uploaded. It returns the run it chose, notes for the report, and
// whether the server may not hold the run's last CPU yet.
func (c *common) pyroscopeSource(ctx context.Context, k *k6results.Results, runID, runFlag string) (src report.Source, id string, notes []string, incomplete bool, err error) {
	start, end, err := c.window(k) // --start/--end, else k ± --margin, else --since
	if err != nil {
		return nil, "", nil, false, err
	}
	base, err := newPyroscopeSource(c, start, end)
	if err != nil {
		return nil, "", nil, false, err
	}
	var missing string
	if k != nil {
		if missing, err = c.waitUploaded(ctx, base, k.End); err != nil {
			return nil, "", nil, false, err
		}
	}
	switch {
	case runID == "":
		only, err := onlyRun(ctx, base, k != nil, cmp.Or(runFlag, "--run-id"), start, end)
		if err != nil {
			return nil, "", nil, false, err
		}
		if only == "" {
			return base, "", nil, false, nil // no run, or several without k6 results: New says so
		}
		runID = only
	case runID != report.LocalRun:
		if base, err = checkRun(ctx, base, runID, start, end); err != nil {
			return nil, "", nil, false, err
		}
	}
	// The note of an incomplete upload, once the run's data is known to
	// be there (else the error that it is not says more).
	notes, err = c.incompleteNote(missing)
	if err != nil {
		return nil, "", nil, false, err
	}
	if runID != report.LocalRun || k == nil || c.start != "" || c.end != "" {
		return base.ForRun(runID), runID, notes, missing != "", nil
	}
	local, note, err := c.localSource(ctx, base, k)
	if err != nil {
		return nil, "", nil, false, err
	}
	if note != "" {
		notes = append(notes, note)
	}
	return local, runID, notes, missing != "", nil
}

// onlyRun returns the only run of base's window; "" when there is none,
// or several and no k6 results (the report sums them), and an error when
// there are several and k6 results are of one, naming runFlag.
func onlyRun(ctx context.Context, base *pyrosource.Source, withK6 bool, runFlag string, start, end time.Time) (string, error) {
	totals, err := base.Totals(ctx)
	if err != nil {
		return "", err
	}
	var runs []string
	for id := range totals {
		if id != "" {
			runs = append(runs, id)
		}
	}
	slices.Sort(runs)
	switch {
	case len(runs) == 1:
		return runs[0], nil
	case len(runs) > 1 && withK6:
		return "", fmt.Errorf("%w: %s holds %d test runs from %s to %s: %s; pass %s to say which one the k6 results are of",
			report.ErrManyRuns, base, len(runs), start.UTC().Format(time.RFC3339), end.UTC().Format(time.RFC3339), describeRuns(totals), runFlag)
	}
	return "", nil
}

// checkRun returns base scoped to run id, or an error that lists the
// runs there are when id has no CPU.
func checkRun(ctx context.Context, base *pyrosource.Source, id string, start, end time.Time) (*pyrosource.Source, error) {
	base = base.ForRun(id)
	totals, err := base.Totals(ctx)
	if err != nil {
		return nil, err
	}
	if totals[id].Samples > 0 {
		return base, nil
	}
	// Say what there is: the one query of other runs, in an error.
	all, err := base.ForRun("").Totals(ctx)
	if err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("%w: no CPU with %s=%q in %s from %s to %s; it has %s",
		report.ErrNoData, report.LabelRunID, id, base, start.UTC().Format(time.RFC3339), end.UTC().Format(time.RFC3339), describeRuns(all))
}

// incompleteNote returns the notes of an incomplete upload (none for ""),
// warning on stderr, or under --strict the error.
func (c *common) incompleteNote(incomplete string) ([]string, error) {
	if incomplete == "" {
		return nil, nil
	}
	if c.pyro.strict {
		return nil, fmt.Errorf("%w: %s; --strict refuses to answer: ask again later, or raise --wait", errIncomplete, incomplete)
	}
	fmt.Fprintf(c.stderr, "k6labels: warning: %s\n", incomplete)
	return []string{incomplete + "; ask again later, raise --wait, or use --strict to fail instead"}, nil
}

// localSource returns the source of a local run (k6 labels, no run id):
// no run id tells it from another local run, so its window is the k6
// results' own, without margin. The note says what CPU of a local run
// lies just outside it, also warned on stderr.
func (c *common) localSource(ctx context.Context, base *pyrosource.Source, k *k6results.Results) (*pyrosource.Source, string, error) {
	src := base.WithWindow(k.Start, k.End).ForRun(report.LocalRun)
	before, after, err := src.LocalOutside(ctx, report.PyroscopeWindow)
	if err != nil {
		return nil, "", err
	}
	if totals, err := src.Totals(ctx); err != nil || totals[report.LocalRun].Samples == 0 {
		if err != nil && !errors.Is(err, report.ErrNoData) {
			return nil, "", err
		}
		return nil, "", fmt.Errorf("%w: no profile of a local k6 run (k6 labels, no test run id) of service %q is stamped within its k6 results' range, %s to %s, the only window that holds no other local run's; "+
			"%.2fs of such CPU is in the profiles stamped in the %s before it (this run's, another's, or both: Pyroscope stamps a profile with the start of its %s window). "+
			"Set K6_CLOUDRUN_TEST_RUN_ID (k6 run -e K6_CLOUDRUN_TEST_RUN_ID=build-124) so that the run can be told apart",
			report.ErrNoData, c.service, k.Start.UTC().Format(time.RFC3339), k.End.UTC().Format(time.RFC3339), before.Seconds(), report.PyroscopeWindow, report.PyroscopeWindow)
	}
	if before == 0 && after == 0 {
		return src, "", nil
	}
	note := fmt.Sprintf("a local k6 run's CPU (k6 labels, no test run id) is in profiles stamped outside this run's k6 results: %.2fs in the %s before its first request, %.2fs in the %s after its last. "+
		"It is not counted: it may be another local run's, or (before) this run's own first seconds, as Pyroscope stamps a profile with the start of its %s window, so this run's CPU per request may be low by up to that much",
		before.Seconds(), report.PyroscopeWindow, after.Seconds(), report.PyroscopeWindow, report.PyroscopeWindow)
	if after > 0 {
		note += "; and the profile holding its last request, counted, also covers seconds after it in which a local run was active"
	}
	note += ". Set K6_CLOUDRUN_TEST_RUN_ID (k6 run -e K6_CLOUDRUN_TEST_RUN_ID=build-124) to tell runs apart"
	fmt.Fprintf(c.stderr, "k6labels: warning: %s\n", note)
	return src, note, nil
}

// describeRuns lists the runs of Totals with their CPU: "fx1 (23.77s), …".
func describeRuns(totals map[string]report.Count) string {
	var parts []string
	for _, id := range slices.Sorted(maps.Keys(totals)) {
		if id != "" {
			parts = append(parts, fmt.Sprintf("%s (%.2fs)", id, totals[id].CPU.Seconds()))
		}
	}
	if len(parts) == 0 {
		return "no k6-labelled CPU"
	}
	return strings.Join(parts, ", ")
}

// uploadsDone is how long after a run's end every upload that holds it
// has been made: its window's end (at most one window), the next window
// (the check looks for a later stamp when the last one had no samples),
// and the upload itself.
const uploadsDone = 2*report.PyroscopeWindow + 15*time.Second

// waitUploaded waits up to --wait for the server to hold the service's
// profiles up to end, not longer than uploadsDone after end: later, more
// waiting brings nothing. It returns why the answer may be incomplete, or
// "" when it is not.
func (c *common) waitUploaded(ctx context.Context, src *pyrosource.Source, end time.Time) (string, error) {
	deadline := now().Add(c.pyro.wait)
	if last := end.Add(uploadsDone); last.Before(deadline) {
		deadline = last
	}
	told := false
	for {
		ok, err := src.Uploaded(ctx, end, now())
		if err != nil {
			return "", err
		}
		if ok {
			return "", nil
		}
		left := deadline.Sub(now())
		if left <= 0 {
			break
		}
		if !told {
			fmt.Fprintf(c.stderr, "k6labels: waiting up to %s (--wait) for Pyroscope to hold the run's last %s CPU window (pyroscope-go uploads each when it ends)…\n",
				left.Round(time.Second), report.PyroscopeWindow)
			told = true
		}
		if err := sleep(ctx, min(pollEvery, left)); err != nil {
			return "", err
		}
	}
	return fmt.Sprintf("Pyroscope may not hold all of the run's CPU yet: no profile of the service is stamped after %s (the run's end, %s, less pyroscope-go's %s window: it stamps a profile with the start of its window and uploads it when the window ends); waited up to %s (--wait), so the CPU may be too low",
		end.Add(-report.PyroscopeWindow).UTC().Format(time.RFC3339), end.UTC().Format(time.RFC3339), report.PyroscopeWindow, c.pyro.wait), nil
}
