package main

import (
	"context"
	"fmt"
	"io"
	"time"
)

// stopGrace is how long the command is given to end by itself once a
// signal cancelled its context: readers end at once, but a step that cannot
// be interrupted (parsing a large profile, opening a fifo without a writer)
// is cut short.
const stopGrace = 500 * time.Millisecond

// runStoppable calls run(ctx) and returns its exit code, or, when ctx is
// cancelled (SIGINT, SIGTERM) and run has not returned within stopGrace,
// says so on stderr and returns exitError. stop restores the signals'
// default action, so that a second signal ends the process at once.
func runStoppable(ctx context.Context, stop func(), stderr io.Writer, run func(context.Context) int) int {
	done := make(chan int, 1)
	go func() { done <- run(ctx) }()
	select {
	case code := <-done:
		return code
	case <-ctx.Done():
	}
	stop()
	select {
	case code := <-done:
		return code
	case <-time.After(stopGrace):
		fmt.Fprintf(stderr, "k6labels: stopped: %v\n", context.Cause(ctx))
		return exitError
	}
}

// stopped returns the cause of ctx's cancellation (a signal), or nil.
func stopped(ctx context.Context) error {
	if ctx.Err() == nil {
		return nil
	}
	return context.Cause(ctx)
}
