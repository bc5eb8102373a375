package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// Status lines for a stderr that is no terminal (a CI log): nothing for
// work shorter than statusAfter, then one line every statusEvery.
var (
	statusAfter = 5 * time.Second
	statusEvery = 5 * time.Second
)

// statusLines keeps the latest progress message written to it (the
// report's "\r"-rewritten lines) and prints it with the elapsed time on
// each tick, one whole line at a time.
type statusLines struct {
	mu    sync.Mutex
	w     io.Writer
	what  string
	last  string
	start time.Time
	now   func() time.Time
}

// Write records the latest message of p; it never fails.
func (s *statusLines) Write(p []byte) (int, error) {
	msg := string(p)
	if i := strings.LastIndexByte(strings.TrimRight(msg, "\r\n "), '\r'); i >= 0 {
		msg = msg[i+1:]
	}
	msg = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(msg), "k6labels: "))
	if msg != "" {
		s.mu.Lock()
		s.last = msg
		s.mu.Unlock()
	}
	return len(p), nil
}

// tick prints one status line.
func (s *statusLines) tick() {
	s.mu.Lock()
	defer s.mu.Unlock()
	line := "k6labels: " + s.what
	if s.last != "" {
		line += ": " + s.last
	}
	fmt.Fprintf(s.w, "%s (%s)\n", line, s.now().Sub(s.start).Round(time.Second))
}

// startStatus prints status lines of the work what to w from after on,
// every every, until stop is called; stop waits for a line being printed.
func startStatus(w io.Writer, what string, after, every time.Duration, now func() time.Time) (*statusLines, func()) {
	s := &statusLines{w: w, what: what, start: now(), now: now}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTimer(after)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				s.tick()
				t.Reset(every)
			}
		}
	})
	var once sync.Once
	return s, func() { once.Do(func() { close(done); wg.Wait() }) }
}

// status returns where the progress of the work what goes: stderr as it is
// on a terminal (the report rewrites its line there), else status lines
// every few seconds once the work has taken statusAfter; call stop when the
// work ends.
func (c *common) status(what string) (w io.Writer, stop func()) {
	if p := c.progress(); p != nil {
		return p, func() {}
	}
	s, stop := startStatus(c.stderr, what, statusAfter, statusEvery, time.Now)
	return s, stop
}
