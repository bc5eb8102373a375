// Command k6labels tells how much CPU each k6 request cost, from CPU
// profiles labelled by the k6labels middleware and k6's own results, and
// whether a build made any request costlier.
//
//	k6labels report --k6 run.json cpu.pprof
//	k6labels report --pyroscope http://pyroscope:4040 --service checkout --k6 run.json
//	k6labels diff   --pyroscope http://pyroscope:4040 --service checkout --base-k6 base.json --k6 run.json --fail-above 10%
//	k6labels runs   --pyroscope http://pyroscope:4040 --service checkout
//
// Exit status: 0 done, 1 error (unreachable server, no data, bad input),
// 2 usage error, 3 diff --fail-above found a regression, 4 diff --fail-above
// could not tell (a row inconclusive; --allow-inconclusive accepts).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// Exit codes.
const (
	exitOK         = 0
	exitError      = 1
	exitUsage      = 2
	exitRegression = 3
	// exitInconclusive: diff --fail-above could not have seen a change of
	// its threshold in some row, or every row moved together.
	exitInconclusive = 4
)

// errUsage marks a usage error; the message has been printed.
var errUsage = errors.New("usage")

// errRegression is returned by diff when --fail-above trips.
var errRegression = errors.New("regression")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := runStoppable(ctx, stop, os.Stderr, func(ctx context.Context) int { return run(ctx, os.Args[1:], os.Stdout, os.Stderr) })
	stop()
	os.Exit(code)
}

// run is the command: it returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	var err error
	switch args[0] {
	case "report":
		err = runReport(ctx, args[1:], stdout, stderr)
	case "diff":
		err = runDiff(ctx, args[1:], stdout, stderr)
	case "runs":
		err = runRuns(ctx, args[1:], stdout, stderr)
	case "version", "-version", "--version":
		err = runVersion(args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		usage(stdout)
		return exitOK
	default:
		fmt.Fprintf(stderr, "k6labels: unknown command %q\n\n", args[0])
		usage(stderr)
		return exitUsage
	}
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.Is(err, errUsage):
		return exitUsage
	case errors.Is(err, errRegression):
		fmt.Fprintf(stderr, "k6labels: %v\n", err)
		return exitRegression
	case errors.Is(err, errInconclusive):
		fmt.Fprintf(stderr, "k6labels: %v\n", err)
		return exitInconclusive
	}
	if cause := stopped(ctx); cause != nil {
		err = fmt.Errorf("stopped: %w", cause)
	}
	fmt.Fprintf(stderr, "k6labels %s: %v\n", args[0], err)
	return exitError
}

func usage(w io.Writer) {
	fmt.Fprint(w, `k6labels tells how much CPU each k6 request cost, from CPU profiles that the
k6labels middleware labelled with k6's test run, scenario and request name.

Usage:
  k6labels report [flags] [profile ...]   CPU and CPU per request by run, scenario and name
  k6labels diff   [flags]                 compare two runs row by row; a CI gate with --fail-above
  k6labels runs   [flags]                 list the test runs a Pyroscope server has for a service
  k6labels version                        print the version (also --version)

Profiles are pprof CPU profiles (files, or /debug/pprof/profile URLs read for
as long as they ask), or the merged profiles of a Pyroscope server
(--pyroscope URL --service NAME). k6 results are the files of
k6 run --out json=FILE or --out csv=FILE, gzip or not.

Examples:
  k6 run --out json=run.json -e K6_CLOUDRUN_TEST_RUN_ID=build-124 load.js
  k6labels report --k6 run.json 'http://127.0.0.1:8080/debug/pprof/profile?seconds=30'
  k6labels report --pyroscope http://pyroscope:4040 --service checkout --k6 run.json
  k6labels diff --pyroscope http://pyroscope:4040 --service checkout \
      --base-k6 base.json --k6 run.json --fail-above 10%

Exit status: 0 done, 1 error, 2 usage error, 3 diff found a regression
above --fail-above, 4 diff could not tell (--allow-inconclusive accepts). 'k6labels <command> -h' shows a command's flags.
`)
}
