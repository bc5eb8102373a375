// Command rideshare is the k6labels demo: a small service with the routes of
// Pyroscope's rideshare example, instrumented with
// k6labels.LabelsFromBaggageHandler, driven by a built-in load generator that
// sends the baggage header of k6's http-instrumentation-pyroscope helper,
// while the process profiles its own CPU. At the end it prints the CPU time
// per k6 scenario and per request name, and writes the profile for go tool
// pprof.
//
//	go run ./examples/rideshare                    # the whole demo, nothing else needed
//	go run ./examples/rideshare -pyroscope URL     # also push profiles to Pyroscope
//	go run ./examples/rideshare -serve ADDR        # only the service, for a real k6 run
//	go run ./examples/rideshare -target URL        # only the load, against a running service
//	go run ./examples/rideshare -diff              # two runs, the second with /car costlier, and the verdict
//
// docs/guide.md walks the flow with a real k6 in mind: -serve ADDR
// -cpuprofile FILE (-car-extra N for a costlier /car), then -target URL
// -requests N -k6-out FILE for the load and its k6 --out json results.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/google/pprof/profile"
	pyroscopepprof "github.com/grafana/pyroscope-go/http/pprof"
	"github.com/k6labels/k6labels"
	"github.com/k6labels/k6labels/cmd/k6labels/output"
	"github.com/k6labels/k6labels/cmd/k6labels/report"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop() // a second Ctrl-C ends the process at once
	}()
	err := run(ctx, os.Args[1:], os.Stdout)
	switch {
	case errors.Is(err, flag.ErrHelp):
		os.Exit(0)
	case errors.Is(err, errUsage):
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "rideshare:", err)
		os.Exit(1)
	}
}

var errUsage = errors.New("usage")

// options are the command-line flags.
type options struct {
	duration  time.Duration
	out       string
	pyroscope string
	app       string
	serve     string
	target    string
	testRunID string
	listen    string
	diff      bool
	html      string
	k6out     string
	carExtra  int
	requests  int64
	cpuprof   string
}

func parseFlags(args []string, w io.Writer) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("rideshare", flag.ContinueOnError)
	fs.SetOutput(w)
	fs.DurationVar(&o.duration, "duration", 15*time.Second, "how long to send load")
	fs.StringVar(&o.out, "o", "rideshare.cpu.pprof", "file to write the CPU profile to")
	fs.StringVar(&o.pyroscope, "pyroscope", "", "also push profiles to the Pyroscope server at this `URL` (e.g. http://localhost:4040)")
	fs.StringVar(&o.app, "app", "rideshare.k6labels", "application (service) `name` to push profiles under")
	fs.StringVar(&o.serve, "serve", "", "only run the instrumented service on `ADDR` (e.g. 127.0.0.1:8080), for a real k6 run")
	fs.StringVar(&o.target, "target", "", "only send load to the service at this base `URL` (e.g. http://127.0.0.1:8080)")
	fs.StringVar(&o.testRunID, "test-run-id", strconv.FormatInt(time.Now().Unix(), 10), "the k6.test_run_id the load sends")
	fs.StringVar(&o.listen, "listen", "127.0.0.1:0", "address of the service in the full demo")
	fs.StringVar(&o.html, "html", "", "write the report as an html page with flame graphs to `FILE` (default: -o's name with .html)")
	fs.StringVar(&o.k6out, "k6-out", "", "with -target: also write every request to `FILE` as k6 run --out json=FILE does, for k6labels report --k6")
	fs.Int64Var(&o.requests, "requests", 0, "with -target: stop after `N` requests (or -duration, whichever comes first); 0: no limit")
	fs.StringVar(&o.cpuprof, "cpuprofile", "", "with -serve: profile the service's CPU from start to stop (Ctrl-C or SIGTERM) into `FILE`")
	fs.IntVar(&o.carExtra, "car-extra", 0, "with -serve: `units` of work added to every /car request (3 units), a change that makes /car costlier")
	fs.BoolVar(&o.diff, "diff", false, "run the load twice, the second time with /car made costlier (4 units instead of 3), and print k6labels diff's verdict")
	fs.Usage = func() {
		fmt.Fprintln(w, "Usage: go run ./examples/rideshare [flags]")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "Runs a service instrumented with k6labels and k6-style load against it, profiles")
		fmt.Fprintln(w, "the CPU and prints the CPU time per k6 scenario and request name.")
		fmt.Fprintln(w)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, errUsage
	}
	bad := func(format string, a ...any) (*options, error) {
		fmt.Fprintf(w, "rideshare: "+format+"\n", a...)
		fs.Usage()
		return nil, errUsage
	}
	if fs.NArg() > 0 {
		return bad("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	if msg := o.conflict(); msg != "" {
		return bad("%s", msg)
	}
	if msg := o.invalid(); msg != "" {
		return bad("%s", msg)
	}
	o.target = strings.TrimSuffix(o.target, "/")
	return o, nil
}

// conflict returns what is wrong with the combination of flags o has, or "".
func (o *options) conflict() string {
	switch {
	case o.serve != "" && o.target != "":
		return "-serve and -target exclude each other: run one process of each"
	case o.diff && (o.serve != "" || o.target != "" || o.pyroscope != ""):
		return "-diff runs both runs in this process: it does not combine with -serve, -target or -pyroscope"
	case o.target != "" && o.pyroscope != "":
		return "-target sends load only; -pyroscope belongs to the process that serves"
	case o.k6out != "" && o.target == "":
		return "-k6-out goes with -target: the k6-format results of the load this process sends"
	case o.requests != 0 && o.target == "":
		return "-requests goes with -target"
	case o.cpuprof != "" && (o.serve == "" || o.pyroscope != ""):
		return "-cpuprofile goes with -serve, without -pyroscope (Go has one CPU profiler per process)"
	case o.carExtra != 0 && o.serve == "":
		return "-car-extra goes with -serve"
	}
	return ""
}

// invalid returns what is wrong with a value of o's flags, or "".
func (o *options) invalid() string {
	switch {
	case o.requests < 0:
		return "-requests must not be negative"
	case o.carExtra < 0:
		return "-car-extra must not be negative"
	case o.duration <= 0:
		return "-duration must be positive"
	case o.target != "" && !strings.HasPrefix(o.target, "http://") && !strings.HasPrefix(o.target, "https://"):
		return "-target wants a base URL such as http://127.0.0.1:8080"
	case o.testRunID == "" || strings.ContainsAny(o.testRunID, ", ;"):
		return "-test-run-id must be non-empty, without spaces, commas or semicolons"
	}
	return ""
}

// run is the command: it parses args and runs the mode they ask for, writing
// everything to w. It returns when the work is done or ctx ends.
func run(ctx context.Context, args []string, w io.Writer) error {
	o, err := parseFlags(args, w)
	if err != nil {
		return err
	}
	switch {
	case o.serve != "":
		return runServe(ctx, o, w)
	case o.target != "":
		return runTarget(ctx, o, w)
	case o.diff:
		return runDiffDemo(ctx, o, w)
	}
	return runDemo(ctx, o, w)
}

// runDemo runs service and load in this process under a CPU profile.
func runDemo(ctx context.Context, o *options, w io.Writer) error {
	srv, err := startServer(o.listen, newService())
	if err != nil {
		return err
	}
	defer srv.Close()
	d := newDriver(srv.URL, o.testRunID, defaultScenarios)
	// Uploads are reported from pyroscope-go's goroutine while the load's
	// progress is printed.
	w = &lockedWriter{w: w}

	fmt.Fprintln(w, "k6labels demo: CPU time per k6 scenario and request")
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  service  %s (/, /bike, /scooter, /car) wrapped with k6labels.LabelsFromBaggageHandler\n", srv.URL)
	fmt.Fprintf(w, "  load     %s\n", describeScenarios(defaultScenarios))
	fmt.Fprintf(w, "  header   baggage: %s\n", baggageHeader(o.testRunID, defaultScenarios[0].name, srv.URL+"/car?vehicle_id=7&city=berlin"))
	fmt.Fprintln(w, "           (what k6's http-instrumentation-pyroscope helper sends)")
	fmt.Fprintf(w, "  profile  CPU of this whole process for %s", o.duration)

	// Go has one CPU profiler per process: either pyroscope-go holds it and
	// the report is built from the profiles it uploads, or we hold it here.
	var (
		push  *pusher
		local bytes.Buffer
	)
	if o.pyroscope != "" {
		fmt.Fprintf(w, ", pushed to %s as %s\n", o.pyroscope, o.app)
		progress := w
		if isTerminal(w) {
			// The upload's line replaces the progress line being rewritten.
			progress = &prefixWriter{prefix: "\r\033[K", w: w}
		}
		if push, err = startPush(o.pyroscope, o.app, progress, true); err != nil {
			return fmt.Errorf("pyroscope: %w", err)
		}
	} else {
		fmt.Fprintln(w)
		if err := pprof.StartCPUProfile(&local); err != nil {
			return err
		}
	}
	fmt.Fprintln(w)

	start := time.Now()
	drive(ctx, d, o.duration, w)
	end := time.Now()
	st := k6labels.Stats()
	fmt.Fprintf(w, "  k6labels.Stats(): %s requests labelled, %d members skipped, %d values overflowed\n",
		thousands(int64(st.Labelled)), st.Skipped, st.Overflowed)

	var p *profile.Profile
	if push != nil {
		p, err = push.stop()
	} else {
		pprof.StopCPUProfile()
		p, err = profile.ParseData(local.Bytes())
	}
	if err != nil {
		return fmt.Errorf("reading the CPU profile: %w", err)
	}
	sent := d.counts()
	if sent.total == 0 {
		return fmt.Errorf("%w: %v", errNoResponses, d.err())
	}
	r, err := newDemoReport(ctx, p, sent, srv.URL, o.testRunID, start, end)
	if err != nil {
		return fmt.Errorf("the report: %w", err)
	}

	if err := writeProfile(o.out, p, local.Bytes()); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nProfile written to %s. Explore it with go tool pprof:\n", o.out)
	fmt.Fprint(w, pprofCommands(o.out, defaultScenarios[0].name))
	fmt.Fprintln(w, "k6_name values have no query string: k6labels drops it by default, so that")
	fmt.Fprintln(w, "?vehicle_id=... does not make one label value per request.")
	if push != nil {
		fmt.Fprintln(w)
		printPushStatus(w, push, o)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "The k6labels report (what `k6labels report --k6 run.json PROFILE` prints for a real k6 run):")
	fmt.Fprintln(w)
	if err := output.WriteReport(w, r, output.Text); err != nil {
		return err
	}
	fmt.Fprintln(w)
	writeGroundTruth(w, r)
	if err := writeHTML(w, r, o); err != nil {
		return err
	}
	fmt.Fprintln(w)
	return runTraceDemo(ctx, srv.URL, o.testRunID, w)
}

// writeProfile writes the profile to path: the bytes runtime/pprof wrote when
// there are any, else p encoded.
func writeProfile(path string, p *profile.Profile, raw []byte) error {
	if len(raw) > 0 {
		return os.WriteFile(path, raw, 0o644)
	}
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

func printPushStatus(w io.Writer, push *pusher, o *options) {
	ok, failed, err := push.tee.status()
	fmt.Fprintf(w, "Pyroscope: %s accepted %d uploads, %d failed", o.pyroscope, ok, failed)
	if err != nil {
		fmt.Fprintf(w, " (first error: %v)", err)
	}
	fmt.Fprintln(w)
	if ok > 0 {
		fmt.Fprintf(w, "  Open service %s, profile type process_cpu, and group or filter by\n", o.app)
		fmt.Fprintln(w, "  k6_scenario, k6_name or k6_test_run_id (in Grafana: Explore → Profiles).")
	}
}

// runServe runs only the instrumented service, until ctx ends.
func runServe(ctx context.Context, o *options, w io.Writer) (err error) {
	mux := http.NewServeMux()
	if o.carExtra > 0 {
		mux.Handle("/", newCostlierService(o.carExtra))
	} else {
		mux.Handle("/", newService())
	}
	// pyroscope-go's handler rather than net/http/pprof's: it also works while
	// pyroscope-go holds the CPU profiler, handing the data to both.
	mux.HandleFunc("/debug/pprof/profile", pyroscopepprof.Profile)
	srv, err := startServer(o.serve, mux)
	if err != nil {
		return err
	}
	// Uploads are reported from pyroscope-go's goroutine as they happen.
	w = &lockedWriter{w: w}
	if o.cpuprof != "" {
		stopProfile, err := startCPUProfile(o.cpuprof)
		if err != nil {
			srv.Close()
			return err
		}
		defer func() {
			if perr := stopProfile(); perr != nil && err == nil {
				err = perr
			}
			if err == nil {
				fmt.Fprintf(w, "CPU profile of the service written to %s\n", o.cpuprof)
			}
		}()
	}
	var push *pusher
	if o.pyroscope != "" {
		if push, err = startPush(o.pyroscope, o.app, w, false); err != nil {
			srv.Close()
			return fmt.Errorf("pyroscope: %w", err)
		}
	}
	profileURL := srv.URL + "/debug/pprof/profile?seconds=10"
	if o.cpuprof != "" {
		profileURL = "" // this process holds the CPU profiler
	}
	fmt.Fprintf(w, "rideshare service listening on %s (routes / /bike /scooter /car, labelled by k6labels)\n", srv.URL)
	if o.carExtra > 0 {
		fmt.Fprintf(w, "  /car does %d units of work instead of %d\n", routeUnits(costlierRoute)+o.carExtra, routeUnits(costlierRoute))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Drive it with k6, from the repository root (a test run id per run, so that runs are told apart, and k6's results for the report):")
	fmt.Fprintf(w, "  k6 run --no-usage-report -e BASE_URL=%s -e DURATION=60s -e K6_CLOUDRUN_TEST_RUN_ID=build-1 --out json=run.json examples/rideshare/load.js\n", srv.URL)
	if o.pyroscope != "" {
		fmt.Fprintln(w, "then, once k6 is done (it waits for the run's last 30 s CPU window to be uploaded):")
		fmt.Fprintf(w, "  k6labels report --pyroscope %s --service %s --k6 run.json --run-id build-1\n", report.ShellQuote(o.pyroscope), report.ShellQuote(o.app))
	}
	fmt.Fprintln(w, "or with the built-in load driver:")
	fmt.Fprintf(w, "  go run ./examples/rideshare -target %s\n", srv.URL)
	if profileURL != "" {
		fmt.Fprintln(w, "While the load runs, take a 10 s CPU profile and list CPU per label value:")
		fmt.Fprintf(w, "  go tool pprof -tags %s\n", report.ShellQuote(profileURL))
	} else {
		fmt.Fprintf(w, "The CPU profile goes to %s when the service stops.\n", o.cpuprof)
	}
	if push != nil {
		fmt.Fprintf(w, "Profiles are pushed to %s as %s; each upload is reported below.\n", o.pyroscope, o.app)
	}
	fmt.Fprintln(w, "\nCtrl-C stops.")
	<-ctx.Done()
	err = srv.Close()
	if push != nil {
		if _, perr := push.stop(); perr != nil && err == nil {
			err = perr
		}
		printPushStatus(w, push, o)
	}
	return err
}

// lockedWriter serializes writes from several goroutines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// prefixWriter writes prefix before each Write, in the same Write.
type prefixWriter struct {
	prefix string
	w      io.Writer
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	if _, err := p.w.Write(append([]byte(p.prefix), b...)); err != nil {
		return 0, err
	}
	return len(b), nil
}

// runTarget sends load to a service running elsewhere.
func runTarget(ctx context.Context, o *options, w io.Writer) (err error) {
	d := newDriver(o.target, o.testRunID, defaultScenarios)
	d.maxRequests = o.requests
	if o.k6out != "" {
		if d.k6out, err = createK6JSON(o.k6out); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "Sending k6-style load to %s for %s\n\n", o.target, o.duration)
	fmt.Fprintf(w, "  load     %s\n", describeScenarios(defaultScenarios))
	fmt.Fprintf(w, "  header   baggage: %s\n\n", baggageHeader(o.testRunID, defaultScenarios[0].name, o.target+"/car?vehicle_id=7&city=berlin"))
	drive(ctx, d, o.duration, w)
	if d.k6out != nil {
		if err := d.k6out.close(); err != nil {
			return err
		}
	}
	c := d.counts()
	if c.total == 0 {
		return fmt.Errorf("%w: %v", errNoResponses, d.err())
	}
	if o.k6out != "" {
		fmt.Fprintf(w, "\nk6 results (k6 run --out json format) written to %s\n", o.k6out)
	}
	fmt.Fprintln(w)
	for _, r := range routes {
		fmt.Fprintf(w, "  %-8s %8s responses\n", r.path, thousands(c.byPath[r.path]))
	}
	if n := d.errs.Load(); n > 0 {
		fmt.Fprintf(w, "  %s requests failed, the first with: %v\n", thousands(n), d.err())
	}
	if o.k6out != "" {
		fmt.Fprintf(w, "  k6 results (as k6 run --out json writes them) in %s\n", o.k6out)
	}
	fmt.Fprintln(w, "\nThe CPU profile is in the service's process: see Pyroscope if it pushes there,")
	fmt.Fprintln(w, "or take one during the load with")
	fmt.Fprintf(w, "  go tool pprof -tags %s\n", report.ShellQuote(o.target+"/debug/pprof/profile?seconds=10"))
	return nil
}

// drive runs d for duration (or until ctx ends), printing progress to w:
// rewritten in place on a terminal, a line every 5 s otherwise.
func drive(ctx context.Context, d *driver, duration time.Duration, w io.Writer) {
	ctx, cancel := context.WithTimeout(ctx, duration)
	defer cancel()
	done := make(chan struct{})
	start := time.Now()
	go func() {
		d.run(ctx)
		close(done)
	}()
	tty := isTerminal(w)
	every := 5 * time.Second
	if tty {
		every = 250 * time.Millisecond
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	line := func() string {
		c := d.counts()
		s := fmt.Sprintf("  %4.1fs / %s   requests sent: %s", min(time.Since(start), duration).Seconds(), duration, thousands(c.total))
		var parts []string
		for _, sc := range d.scenarios {
			parts = append(parts, fmt.Sprintf("%s %s", sc.name, thousands(c.byScenario[sc.name])))
		}
		s += "  (" + strings.Join(parts, ", ") + ")"
		if n := d.errs.Load(); n > 0 {
			s += fmt.Sprintf("   errors: %s", thousands(n))
		}
		return s
	}
	for {
		select {
		case <-tick.C:
			switch {
			case tty:
				fmt.Fprintf(w, "\r%s", line())
			case time.Since(start)+every/2 < duration:
				// In a log, a line every few seconds; the last one comes
				// when the load has stopped.
				fmt.Fprintln(w, line())
			}
		case <-done:
			if tty {
				fmt.Fprintf(w, "\r%s\n", line())
			} else {
				fmt.Fprintln(w, line())
			}
			return
		}
	}
}

func isTerminal(w io.Writer) bool {
	if l, ok := w.(*lockedWriter); ok {
		w = l.w
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

func describeScenarios(ss []scenario) string {
	var parts []string
	for _, s := range ss {
		vus := "VUs"
		if s.vus == 1 {
			vus = "VU"
		}
		parts = append(parts, fmt.Sprintf("%s: %d %s ordering %s", s.name, s.vus, vus, strings.Join(uniq(s.paths), ", ")))
	}
	return strings.Join(parts, "   ")
}

func uniq(ss []string) []string {
	var out []string
	for _, s := range ss {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// thousands formats n with comma separators.
func thousands(n int64) string {
	if n < 0 {
		return "-" + thousands(-n)
	}
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
