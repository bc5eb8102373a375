package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/google/pprof/profile"
	"github.com/k6labels/k6labels/cmd/k6labels/internal/bounded"
	"github.com/k6labels/k6labels/cmd/k6labels/k6results"
	"github.com/k6labels/k6labels/cmd/k6labels/output"
	"github.com/k6labels/k6labels/cmd/k6labels/pprofread"
	"github.com/k6labels/k6labels/cmd/k6labels/report"
	"github.com/k6labels/k6labels/cmd/k6labels/trace"
)

// traceMargin is how much longer than its seconds a trace URL may take.
const traceMargin = 30 * time.Second

// traceFlags are the flags of the trace path of report.
type traceFlags struct {
	src   string
	scale bool
	top   int
}

func addTraceFlags(fs *flag.FlagSet) *traceFlags {
	t := &traceFlags{}
	fs.StringVar(&t.src, "trace", "", "report from a Go execution trace `file or URL` (/debug/pprof/trace?seconds=N) instead of CPU profiles: exact wall, CPU, run-queue and blocked time per request; a --profile of the same window gives the process CPU")
	fs.BoolVar(&t.scale, "scale-cpu", false, "with --trace and --profile: scale the trace's CPU by the process CPU over the trace's on-CPU time")
	fs.IntVar(&t.top, "trace-stacks", 3, "with --trace: blocking stacks listed per row (0: none)")
	return t
}

// traceReport runs report --trace: the trace (and the profile, read at the
// same time so that URLs cover the same seconds) and k6's results.
func (c *common) traceReport(ctx context.Context, tf *traceFlags, s side, by []report.Grouping, stdout io.Writer) error {
	if c.pyroscope != "" {
		return c.bad("--trace reads one instance's execution trace; it does not combine with --pyroscope")
	}
	if len(s.profiles) > 1 {
		return c.bad("--trace takes at most one --profile: the CPU profile of the same process over the same window")
	}
	if tf.scale && len(s.profiles) == 0 {
		return c.bad("--scale-cpu needs --profile: the process CPU of the trace's window comes from a CPU profile taken alongside")
	}
	var k *k6results.Results
	if s.k6 != "" {
		var err error
		if k, err = k6results.ReadFileWith(ctx, s.k6, k6results.Options{MaxBytes: int64(c.maxK6), Latency: true}); err != nil {
			return err
		}
	}
	var (
		wg   sync.WaitGroup
		prof *profile.Profile
		perr error
	)
	if len(s.profiles) == 1 {
		wg.Go(func() { prof, perr = pprofread.ReadProfileWith(ctx, c.hc, s.profiles[0], c.readOptions()) })
	}
	tr, terr := c.readTrace(ctx, tf.src)
	wg.Wait()
	if prof != nil && isURL(s.profiles[0]) {
		c.fromURL = append(c.fromURL, urlRead{url: s.profiles[0], p: prof})
	}
	if err := errors.Join(terr, perr); err != nil {
		return err
	}
	if s.runID != "" {
		n := tr.KeepRun(s.runID)
		if n == 0 {
			return fmt.Errorf("no request of run %q in the trace: leave out --run-id to see the runs it has", s.runID)
		}
	}
	r := &trace.Report{Source: tf.src, Trace: tr, Rows: tr.Rows(by, max(tf.top, 0)), K6: k, ScaleCPU: tf.scale}
	if prof != nil {
		cpu, err := profileCPU(prof)
		if err != nil {
			return fmt.Errorf("%s: %w", s.profiles[0], err)
		}
		r.ProcessCPU = cpu
		if d := time.Duration(prof.DurationNanos); d > 0 && (d < tr.Window*9/10 || d > tr.Window*11/10) {
			fmt.Fprintf(c.stderr, "k6labels: warning: the profile covers %s and the trace %s: the CPU ratio compares different windows; take both with the same seconds at once\n",
				d.Round(time.Millisecond), tr.Window.Round(time.Millisecond))
		}
	}
	if len(tr.Requests) == 0 {
		fmt.Fprintf(c.stderr, "k6labels: warning: no complete k6 request in the trace: is the service wrapped by the k6labels middleware (Go 1.22 or later), and did k6 send requests during the window?\n")
	}
	f, _ := output.ParseFormat(c.format)
	return output.WriteTrace(stdout, r, f)
}

// readTrace reads an execution trace from a file or, streaming, from a
// /debug/pprof/trace URL, waiting for its seconds and traceMargin more.
func (c *common) readTrace(ctx context.Context, where string) (*trace.Trace, error) {
	u, err := url.Parse(where)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		f, err := bounded.Open(ctx, where) // a signal stops a read from a fifo, as for profiles
		if err != nil {
			return nil, fmt.Errorf("reading trace: %w (give an execution trace file or a /debug/pprof/trace?seconds=N URL)", err)
		}
		defer f.Close()
		tr, err := trace.Read(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		return tr, nil
	}
	secs, err := pprofread.URLSeconds(u, pprofread.DefaultTraceDuration)
	if err != nil {
		return nil, fmt.Errorf("reading trace: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, secs+traceMargin)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, where, nil)
	if err != nil {
		return nil, err
	}
	if w := c.progress(); w != nil {
		fmt.Fprintf(w, "k6labels: tracing for %gs…\n", secs.Seconds())
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("reading trace: %w (is the service running and serving /debug/pprof/?)", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("reading trace %s: %s: %s (the execution trace of a Go service is at /debug/pprof/trace?seconds=N once it imports net/http/pprof)",
			where, resp.Status, strings.TrimSpace(string(body)))
	}
	tr, err := trace.Read(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	return tr, nil
}

// profileCPU returns the CPU time, in nanoseconds, of a CPU profile's samples.
func profileCPU(p *profile.Profile) (int64, error) {
	for i, st := range p.SampleType {
		if st.Type == "cpu" && st.Unit == "nanoseconds" {
			var n int64
			for _, s := range p.Sample {
				n += s.Value[i]
			}
			return n, nil
		}
	}
	return 0, errors.New("not a CPU profile (no cpu/nanoseconds sample type): give /debug/pprof/profile's profile of the trace's window")
}

// traceDiffFlags are the flags of diff on execution traces.
type traceDiffFlags struct {
	base, after string
	top         int
}

func addTraceDiffFlags(fs *flag.FlagSet) *traceDiffFlags {
	t := &traceDiffFlags{}
	fs.StringVar(&t.base, "base-trace", "", "execution trace `file or URL` of the base run: compare CPU and wall per request exactly, from two traces (with --trace)")
	fs.StringVar(&t.after, "trace", "", "execution trace `file or URL` of the new run (with --base-trace)")
	fs.IntVar(&t.top, "trace-stacks", 3, "with --trace: blocking stacks that grew, listed per row (0: none)")
	return t
}

// traceDiff runs diff --base-trace --trace.
func (c *common) traceDiff(ctx context.Context, td *traceDiffFlags, threshold float64, failAbove string, alpha float64, byPath bool, stdout io.Writer) error {
	if td.base == "" || td.after == "" {
		return c.bad("give the execution traces of both runs: --base-trace and --trace")
	}
	if c.pyroscope != "" {
		return c.bad("--trace and --base-trace read execution traces; they do not combine with --pyroscope")
	}
	by, err := c.groupings("")
	if err != nil {
		return err
	}
	var (
		wg     sync.WaitGroup
		b, a   *trace.Trace
		be, ae error
	)
	wg.Go(func() { b, be = c.readTrace(ctx, td.base) })
	a, ae = c.readTrace(ctx, td.after)
	wg.Wait()
	if be != nil {
		return fmt.Errorf("base run: %w", be)
	}
	if ae != nil {
		return fmt.Errorf("new run: %w", ae)
	}
	d := trace.Diff(b, a, by, byPath, threshold, alpha, max(td.top, 0))
	f, _ := output.ParseFormat(c.format)
	if err := output.WriteTraceDiff(stdout, d, f); err != nil {
		return err
	}
	if threshold < 0 {
		return nil
	}
	var inc []string
	for _, r := range d.Rows {
		if r.Verdict == trace.Inconclusive {
			inc = append(inc, r.Grouping.String()+"="+r.Key)
		}
	}
	if len(inc) > 0 {
		fmt.Fprintf(c.stderr, "k6labels: warning: inconclusive at --fail-above %s (the data cannot tell whether CPU per request grew by more than that; longer traces help): %s\n", failAbove, strings.Join(inc, "; "))
	}
	if regs := d.Regressions(); len(regs) > 0 {
		var keys []string
		for _, r := range regs {
			keys = append(keys, fmt.Sprintf("%s=%s %+.1f%% (%+.1f%% to %+.1f%%)", r.Grouping, r.Key, 100*r.CPU.Change, 100*r.CPU.Low, 100*r.CPU.High))
		}
		return fmt.Errorf("%w: CPU per request grew by more than %s beyond noise: %s", errRegression, failAbove, strings.Join(keys, "; "))
	}
	return nil
}
