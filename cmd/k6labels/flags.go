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
	"github.com/k6labels/k6labels/cmd/k6labels/k6results"
	"github.com/k6labels/k6labels/cmd/k6labels/output"
	"github.com/k6labels/k6labels/cmd/k6labels/pprofread"
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
	// fromURL are the profiles read from URLs, kept until the command
	// ends so that an error can save them (see keepOnError).
	fromURL []urlRead
	pyro    pyroFlags
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
	if _, err := output.ParseFormat(c.format); err != nil {
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
		wg.Go(func() { ps[i], errs[i] = pprofread.ReadProfileWith(ctx, c.hc, p, c.readOptions()) })
	}
	wg.Wait()
	return ps, errors.Join(errs...)
}
