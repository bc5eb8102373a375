//go:build unix

package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/creack/pty"
)

// TestPyroscopeProgress: progress lines go to stderr only when it is a
// terminal: a pseudo-terminal gets one line per row fetched from the
// replay server; a file, /dev/null (a character device) and a buffer none.
func TestPyroscopeProgress(t *testing.T) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	defer ptmx.Close()
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	file, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	for name, w := range map[string]io.Writer{"file": file, os.DevNull: devnull, "buffer": &bytes.Buffer{}} {
		if p := newCommon("report", "", "", w).progress(); p != nil {
			t.Errorf("%s: progress goes to it, want only a terminal", name)
		}
	}
	if newCommon("report", "", "", tty).progress() == nil {
		t.Fatal("a terminal gets no progress")
	}

	srv, _, fx := pyrServer(t)
	got := make(chan string)
	go func() {
		b, _ := io.ReadAll(ptmx) // EIO once the terminal side is closed
		got <- string(b)
	}()
	var out bytes.Buffer
	code := run(context.Background(), pyrArgs("report", srv.URL, "--k6", pyrHead(t, filepath.Join(fx, "k6", "run-fx1.json.gz"), 2000), "--run-id", "fx1", "--by", "scenario,name"), &out, tty)
	tty.Close()
	text := <-got
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, text)
	}
	// One line per row profile: the 2 scenarios, whose functions are
	// listed; the name rows' CPU is one SelectSeries, with no line.
	for _, want := range []string{"k6labels: profile 1: k6_scenario=", "k6labels: profile 2: k6_scenario="} {
		if !strings.Contains(text, want) {
			t.Errorf("terminal lacks %q:\n%q", want, text)
		}
	}
	if strings.Contains(text, "k6_name=") {
		t.Errorf("a profile fetched for a name row, whose functions are not listed:\n%q", text)
	}
	if strings.Contains(out.String(), "k6labels: profile") {
		t.Errorf("progress on stdout:\n%s", out.String())
	}
}
