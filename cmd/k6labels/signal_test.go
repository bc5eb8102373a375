package main

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/k6labels/k6labels/cmd/k6labels/internal/fixture"
)

// buildCommand builds the k6labels command into a temporary directory.
func buildCommand(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build k6labels with")
	}
	exe := filepath.Join(t.TempDir(), "k6labels")
	out, err := exec.Command(goTool, "build", "-o", exe, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return exe
}

// TestSignalStops runs the built command on inputs that never end (a fifo
// as the profile and as the k6 results, a profile URL that trickles a gzip
// stream), sends SIGTERM once it reads, and checks that it exits with
// status 1 and says it stopped, from the reader itself, well within 10 s.
func TestSignalStops(t *testing.T) {
	exe := buildCommand(t)
	cpu := filepath.Join(fixture.Dir(t), "local", "fx4.cpu.pb.gz")
	dir := t.TempDir()
	gzipHead := []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}

	reading := make(chan struct{}, 1)
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	trickle := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write(gzipHead)
		w.(http.Flusher).Flush()
		reading <- struct{}{}
		for {
			select {
			case <-r.Context().Done():
				return
			case <-done:
				return
			case <-time.After(100 * time.Millisecond):
			}
			w.Write([]byte{0})
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(trickle.Close)

	// fifo returns a fifo in dir and starts a writer that opens it once the
	// command does, signals reading, writes head (the start of a gzip
	// stream or of an execution trace) and holds it open.
	fifo := func(name string, head []byte) string {
		path := filepath.Join(dir, name)
		if err := syscall.Mkfifo(path, 0o600); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
		go func() {
			f, err := os.OpenFile(path, os.O_WRONLY, 0) // blocks until the command opens it
			if err != nil {
				return
			}
			defer f.Close()
			f.Write(head)
			reading <- struct{}{}
			<-done
		}()
		return path
	}

	for _, c := range []struct {
		name string
		args func() []string
	}{
		{"profile fifo", func() []string { return []string{"report", fifo("cpu.fifo", gzipHead)} }},
		{"k6 fifo", func() []string { return []string{"report", "--k6", fifo("run.fifo", gzipHead), cpu} }},
		{"trace fifo", func() []string { return []string{"report", "--trace", fifo("trace.fifo", []byte("go 1."))} }},
		{"profile URL", func() []string { return []string{"report", trickle.URL + "/debug/pprof/profile?seconds=600"} }},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(exe, c.args()...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			select {
			case <-reading:
			case <-time.After(time.Minute):
				cmd.Process.Kill()
				t.Fatal("the command did not start reading")
			}
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			select {
			case err := <-exited:
				var ee *exec.ExitError
				if !errors.As(err, &ee) || ee.ExitCode() != exitError {
					t.Errorf("exit: %v, want status 1", err)
				}
			case <-time.After(10 * time.Second):
				cmd.Process.Kill()
				<-exited
				t.Fatalf("still running 10 s after SIGTERM; stderr %q", stderr.String())
			}
			if got := stderr.String(); !strings.HasPrefix(got, "k6labels report: stopped: terminated signal received") {
				t.Errorf("stderr %q, want k6labels report: stopped: terminated signal received", got)
			}
		})
	}
}
