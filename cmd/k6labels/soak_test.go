package main

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

var soakFlag = flag.Bool("soak", false, "run the full-size hostile inputs (2 GiB gzip bombs)")

// TestGzipBombSoak (make soak): a 2 MB profile that inflates to 2 GiB,
// with the default limit, is refused at 256 MiB with a peak heap under
// 384 MiB (260 MiB measured, in 1.3 s; it took 4.4 GiB for minutes before
// the bound was applied after decompression); k6 json that inflates to
// 2 GiB is streamed within the default limit with a peak heap under 64 MiB.
func TestGzipBombSoak(t *testing.T) {
	if soak, _ := strconv.ParseBool(os.Getenv("K6LABELS_SOAK")); !*soakFlag && !soak {
		t.Skip("make soak (-soak) runs the 2 GiB bombs; TestGzipBombs runs them small")
	}
	fx := filepath.Join("testdata", "fixtures", "local", "fx4.cpu.pb.gz")
	dir := t.TempDir()
	zeros := gzipBomb(t, dir, "bomb.pb.gz", "", make([]byte, 1<<20), 2<<30)
	lines := gzipBomb(t, dir, "run.json.gz", "", []byte(strings.Repeat(`{"type":"Point"}`+"\n", 1<<16)), 2<<30/(17<<16)*(17<<16))
	for _, c := range []struct {
		name     string
		args     []string
		want     string
		maxHeap  uint64
		wantCode int
	}{
		{"profile", []string{"report", zeros}, "is larger than 256MiB once decompressed", 384 << 20, exitError},
		{"k6 json", []string{"report", "--k6", lines, fx}, "no http_reqs points among", 64 << 20, exitError},
	} {
		t.Run(c.name, func(t *testing.T) {
			var stderr strings.Builder
			runtime.GC()
			stop := peakHeap()
			code := run(t.Context(), c.args, io.Discard, &stderr)
			peak := stop()
			t.Logf("peak heap %d MiB: %s", peak>>20, strings.TrimSpace(stderr.String()))
			if code != c.wantCode || !strings.Contains(stderr.String(), c.want) {
				t.Errorf("exit %d, %q; want %d and %q", code, stderr.String(), c.wantCode, c.want)
			}
			if peak > c.maxHeap {
				t.Errorf("peak heap %d MiB, want at most %d MiB", peak>>20, c.maxHeap>>20)
			}
		})
	}
}
