package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/google/pprof/profile"
	"github.com/k6labels/k6labels/cmd/k6labels/k6results"
	"github.com/k6labels/k6labels/cmd/k6labels/pprofsource"
	"github.com/k6labels/k6labels/cmd/k6labels/pyrosource"
	"github.com/k6labels/k6labels/cmd/k6labels/report"
)

// parseInterspersed parses args with fs, taking flags wherever they stand
// among the positional arguments, which it returns in order; after "--"
// every argument is positional.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		left := fs.Args()
		if n := len(args) - len(left); n > 0 && args[n-1] == "--" {
			return append(pos, left...), nil
		}
		if len(left) == 0 {
			return pos, nil
		}
		pos = append(pos, left[0])
		args = left[1:]
	}
}

// writeFlags adds --write-profiles and --force.
func (c *common) writeFlags(usage string) {
	c.fs.StringVar(&c.save, "write-profiles", "", usage)
	c.fs.BoolVar(&c.force, "force", false, "with --write-profiles: overwrite files that exist")
}

// checkSave refuses, before anything is read, paths that exist (unless
// --force), so that a long profile read is not lost to that error at the end.
func (c *common) checkSave(paths ...string) error {
	if c.save == "" || c.force {
		return nil
	}
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil {
			return c.bad("--write-profiles: %s exists: choose another PREFIX, or pass --force to overwrite it", p)
		}
	}
	return nil
}

// reportPaths returns the files report --write-profiles writes n profiles to.
func reportPaths(prefix string, n int) []string {
	if n == 1 {
		return []string{prefix + ".pb.gz"}
	}
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s.%d.pb.gz", prefix, i+1)
	}
	return out
}

// k6Flush is how long k6 may take to write a request to its json or csv
// output: it writes them at least once a second.
const k6Flush = 2 * time.Second

// waitK6Flush waits, after a profile read during which the k6 results file
// was written, for k6 to flush the requests of the profile's last second;
// tests replace it.
var waitK6Flush = func(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(k6Flush):
		return nil
	}
}

// side is what one run is read from.
type side struct {
	k6    string
	runID string
	// runFlag is the flag that gives runID, named in errors; "": --run-id.
	runFlag  string
	profiles []string
	// save is where the profiles read are written as soon as they are read:
	// one path for them merged, or one per profile; nil: none (an error
	// after the read still keeps those read from URLs: keepOnError).
	save []string
}

// load reads the profiles of one run, then its k6 results (so that a
// profile URL read during a k6 run sees the whole of its results file,
// counted over the profiles' time span only), and makes its report.
func (c *common) load(ctx context.Context, s side, opts report.Options) (*report.Report, error) {
	switch {
	case c.pyroscope != "" && len(s.profiles) > 0:
		return nil, c.bad("give either --pyroscope or pprof profiles, not both")
	case c.pyroscope == "" && len(s.profiles) == 0:
		return nil, c.bad("no profiles: give pprof CPU profiles (files or /debug/pprof/profile URLs), or --pyroscope URL --service NAME")
	}
	opts.RunID = s.runID
	if c.pyroscope != "" {
		return c.loadPyroscope(ctx, s, opts)
	}

	readStart := time.Now()
	ps, err := c.readProfiles(ctx, s.profiles)
	fromURL := false
	for i, p := range ps {
		if p != nil && isURL(s.profiles[i]) {
			c.fromURL = append(c.fromURL, urlRead{url: s.profiles[i], p: p})
			fromURL = true
		}
	}
	if err != nil {
		return nil, c.saveSome(s.save, ps, err)
	}
	if err := c.saveRead(s.save, ps); err != nil {
		return nil, err
	}
	return c.build(ctx, s, ps, readStart, fromURL, opts)
}

// isURL tells whether a profile is given as an http(s) URL.
func isURL(where string) bool {
	u, err := url.Parse(where)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https")
}

// urlRead is a profile read from a URL.
type urlRead struct {
	url  string
	p    *profile.Profile
	kept bool // in a file: --write-profiles wrote it, or keepOnError did
}

// markKept records that the profiles ps, as read, are in files.
func (c *common) markKept(ps ...*profile.Profile) {
	for i := range c.fromURL {
		for _, p := range ps {
			if c.fromURL[i].p == p {
				c.fromURL[i].kept = true
			}
		}
	}
}

// keepOnError returns err, after saving, when it is not nil, each profile
// read from a URL that is in no file yet (--write-profiles was not given)
// to a new file of its own in the OS temp folder, said in the error: no
// profile read from a URL is thrown away, and the current folder is never
// written to unasked.
func (c *common) keepOnError(err error) error {
	if err == nil {
		return nil
	}
	for i := range c.fromURL {
		u := &c.fromURL[i]
		if u.kept {
			continue
		}
		where := u.url
		if pu, perr := url.Parse(u.url); perr == nil {
			where = pu.Redacted()
		}
		path, werr := keepTemp(u.p)
		if werr != nil {
			err = fmt.Errorf("%w\n(the profile read from %s could not be kept: %v; add --write-profiles PREFIX to keep what is read)", err, where, werr)
			continue
		}
		u.kept = true
		err = fmt.Errorf("%w\n(the profile read from %s is kept in %s: pass %s instead of the URL to try again)", err, where, path, path)
	}
	return err
}

// keepTemp writes p to a new file in the OS temp folder and returns its
// path.
func keepTemp(p *profile.Profile) (string, error) {
	f, err := os.CreateTemp("", "k6labels-profile-*.pb.gz")
	if err != nil {
		return "", err
	}
	err = p.Write(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("writing %s: %w", f.Name(), err)
	}
	return f.Name(), nil
}

// loadPyroscope reads the k6 results of s, then makes its report from
// Pyroscope, the k6 results checked against the time of the run's CPU;
// results k6 is still writing are refused.
func (c *common) loadPyroscope(ctx context.Context, s side, opts report.Options) (*report.Report, error) {
	var span report.Span
	if c.start != "" || c.end != "" {
		start, end, err := c.window(nil)
		if err != nil {
			return nil, err
		}
		span = report.Span{Start: start, End: end}
	}
	if err := c.readK6(ctx, s.k6, span, &opts); err != nil {
		return nil, err
	}
	if opts.K6 != nil && opts.K6.Truncated != nil {
		// The run is not over: Pyroscope's last window of its CPU may hold
		// requests the file does not have yet.
		return nil, fmt.Errorf("k6 results %s: %s: %s; with --pyroscope the run must be over: %s", s.k6, k6results.StillWriting, opts.K6.Truncated, k6results.StillWritingFix)
	}
	src, runID, notes, incomplete, err := c.pyroscopeSource(ctx, opts.K6, s.runID, s.runFlag)
	if err != nil {
		return nil, err
	}
	opts.RunID = runID
	if ps, ok := src.(*pyrosource.Source); ok && opts.K6 != nil {
		note, err := c.alignRun(ctx, ps, s.k6, span, incomplete, &opts)
		if err != nil {
			return nil, err
		}
		if note != "" {
			notes = append(notes, note)
		}
	}
	w, stop := c.status("making the report")
	defer stop()
	opts.Progress = w
	r, err := report.New(ctx, src, opts)
	if err != nil {
		return nil, err
	}
	r.Notes = append(r.Notes, notes...)
	if ps, ok := src.(*pyrosource.Source); ok {
		start, end := ps.Window()
		if err := c.linkGrafana(r, start, end); err != nil {
			return nil, err
		}
	}
	if len(s.save) > 0 && r.Profile() != nil {
		err = report.WriteProfile(s.save[0], r.Profile(), c.force)
	}
	return r, err
}

// build reads the k6 results of s after its profiles ps were read and makes
// the report.
func (c *common) build(ctx context.Context, s side, ps []*profile.Profile, readStart time.Time, fromURL bool, opts report.Options) (*report.Report, error) {
	span, _ := report.ProfileSpan(ps...)
	// (File times may be whole seconds: a file written in the second the
	// read began counts as written during it.)
	if fi, err := os.Stat(s.k6); err == nil && fromURL && !fi.ModTime().Before(readStart.Truncate(time.Second)) {
		// k6 wrote its results while the profile was read: it is running,
		// and the requests of the profile's last second may not be in the
		// file yet.
		if err := waitK6Flush(ctx); err != nil {
			return nil, err
		}
	}
	if err := c.readK6(ctx, s.k6, span, &opts); err != nil {
		return nil, err
	}
	name := s.profiles[0]
	if len(s.profiles) > 1 {
		name = fmt.Sprintf("%d profiles merged (%s, …)", len(s.profiles), s.profiles[0])
	}
	src, err := pprofsource.New(name, ps...)
	if err != nil {
		return nil, err
	}
	w, stop := c.status("making the report")
	defer stop()
	opts.Progress = w
	return report.New(ctx, src, opts)
}

// readK6 reads the k6 results file path ("" = none) into opts, counting only
// the requests inside span (zero: all), and checks that they overlap it.
func (c *common) readK6(ctx context.Context, path string, span report.Span, opts *report.Options) error {
	if path == "" {
		return nil
	}
	from, to := span.Start, span.End
	if !span.IsZero() {
		from, to = from.Add(-report.SpanSlack), to.Add(report.SpanSlack)
	}
	k, err := k6results.ReadFileWith(ctx, path, k6results.Options{MaxBytes: int64(c.maxK6), From: from, To: to})
	if err != nil {
		return err
	}
	// Cut, ending inside the profiles' span (else another run's: CheckOverlap).
	if k.Truncated != nil && !span.IsZero() && k.AllEnd.Add(k6Flush).Before(span.End) && !k.AllEnd.Before(span.Start.Add(-report.SpanSlack)) {
		return fmt.Errorf("k6 results %s: %s: %s, and its last request (%s) is before the profiles' end (%s): %s",
			path, k6results.StillWriting, k.Truncated, k.AllEnd.Format(time.RFC3339Nano), span.End.Format(time.RFC3339Nano), k6results.StillWritingFix)
	}
	if err := report.CheckOverlap(span, k); err != nil {
		return fmt.Errorf("k6 results %s: %w", path, err)
	}
	opts.K6 = k
	return nil
}

// alignRun checks the k6 results of path, read into opts over window
// (--start/--end; zero: none), against the time in which the CPU of the
// run of src lies in Pyroscope, as profiles' spans are checked: when some
// requests are outside it, they are read again counting only those inside
// ([report.CheckOverlap] refuses those of another run), and the run's CPU
// must lie mostly while they were made ([report.CheckWindows]). It returns
// a note, also warned on stderr, when some CPU lies outside them. When the
// server may not hold the run's last CPU yet (incomplete), the requests
// after its last profile are not checked.
func (c *common) alignRun(ctx context.Context, src *pyrosource.Source, path string, window report.Span, incomplete bool, opts *report.Options) (string, error) {
	ws, err := src.RunWindows(ctx)
	if err != nil {
		return "", err
	}
	span, ok := report.WindowsSpan(ws)
	if !ok {
		return "", nil // no CPU of one run: the report says what there is
	}
	k := opts.K6
	if incomplete {
		span.End = maxTime(span.End, k.AllEnd)
	}
	if !window.IsZero() {
		span.Start, span.End = maxTime(span.Start, window.Start), minTime(span.End, window.End)
	}
	if k.AllStart.Before(span.Start.Add(-report.SpanSlack)) || k.AllEnd.After(span.End.Add(report.SpanSlack)) {
		if err := c.readK6(ctx, path, span, opts); err != nil {
			return "", fmt.Errorf("%w (the profiles' time span is that of run %s's CPU in %s: %s)", err, opts.RunID, src, runSpanWhy)
		}
	}
	outside, err := report.CheckWindows(ws, opts.K6)
	if err != nil {
		return "", fmt.Errorf("k6 results %s: %w (%s)", path, err, runSpanWhy)
	}
	if outside == 0 {
		return "", nil
	}
	note := fmt.Sprintf("%.2fs of the run's CPU is in Pyroscope profiles whose time holds none of the k6 requests counted (%s); it is counted, so CPU per request may be high by up to that much: check that the k6 results are the whole run's",
		outside.Seconds(), report.Span{Start: opts.K6.Start, End: opts.K6.End})
	fmt.Fprintf(c.stderr, "k6labels: warning: %s\n", note)
	return note, nil
}

// runSpanWhy says how the time of a run's CPU in Pyroscope is known.
var runSpanWhy = fmt.Sprintf("a profile is stamped with the start of pyroscope-go's %s window, to the second", report.PyroscopeWindow)

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// saveRead writes the profiles ps as read to paths: one path for them all
// (merged), or one per profile.
func (c *common) saveRead(paths []string, ps []*profile.Profile) error {
	if len(paths) == 0 {
		return nil
	}
	read := ps
	if len(paths) == 1 && len(ps) > 1 {
		p, err := profile.Merge(ps)
		if err != nil {
			return fmt.Errorf("merging %d profiles to write them: %w", len(ps), err)
		}
		ps = []*profile.Profile{p}
	}
	for i, p := range ps {
		if err := report.WriteProfile(paths[i], p, c.force); err != nil {
			return err
		}
	}
	c.markKept(read...)
	if w := c.progress(); w != nil {
		fmt.Fprintf(w, "k6labels: profiles written to %s\n", strings.Join(paths, ", "))
	}
	return nil
}

// saveSome writes, when one of several profiles could not be read, those
// that were, each to its own path (report's PREFIX.N.pb.gz), and returns
// err saying so.
func (c *common) saveSome(paths []string, ps []*profile.Profile, err error) error {
	if len(paths) != len(ps) || len(ps) < 2 {
		return err
	}
	var kept []string
	for i, p := range ps {
		if p == nil {
			continue
		}
		if werr := report.WriteProfile(paths[i], p, c.force); werr != nil {
			return errors.Join(err, werr)
		}
		kept = append(kept, paths[i])
		c.markKept(p)
	}
	if len(kept) == 0 {
		return err
	}
	return fmt.Errorf("%w\n(the profiles that were read are kept: %s)", err, strings.Join(kept, ", "))
}
