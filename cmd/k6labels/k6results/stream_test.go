package k6results_test

import (
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strconv"
	"testing"

	"github.com/k6labels/k6labels/cmd/k6labels/internal/fixture"
	"github.com/k6labels/k6labels/cmd/k6labels/k6results"
)

// liveHeapReader passes r through and, every 4 MB read, collects garbage
// and records the live heap: what the reader holds at that moment.
type liveHeapReader struct {
	r          io.Reader
	sinceGC    int64
	peak, read int64
}

func (l *liveHeapReader) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	l.sinceGC += int64(n)
	l.read += int64(n)
	if l.sinceGC >= 4<<20 {
		l.sinceGC = 0
		runtime.GC()
		s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		metrics.Read(s)
		l.peak = max(l.peak, int64(s[0].Value.Uint64()))
	}
	return n, err
}

// TestStreamed reads the real local/ json (38 MB uncompressed, 136,000
// points) and csv, each as one stream (twice over under K6LABELS_SOAK=1),
// and checks that the live heap does not grow with the points read: the
// files are streamed, no point is kept.
func TestStreamed(t *testing.T) {
	for _, name := range []string{"run-fx4.json.gz", "run-fx4.csv.gz"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(fixture.Dir(t), "local", name)
			copies := 1
			if soak, _ := strconv.ParseBool(os.Getenv("K6LABELS_SOAK")); soak {
				copies = 2
			}
			var parts []io.Reader
			for range copies {
				parts = append(parts, fixture.Gunzip(t, path))
			}
			runtime.GC()
			s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
			metrics.Read(s)
			before := int64(s[0].Value.Uint64())
			lr := &liveHeapReader{r: io.MultiReader(parts...)}
			res, err := k6results.Read(lr)
			if err != nil {
				t.Fatal(err)
			}
			if res.Total != int64(copies)*9764 {
				t.Errorf("%d http_reqs, want %d", res.Total, int64(copies)*9764)
			}
			// Holding the points would take more than the bytes read;
			// streaming holds the buffers (2 × 64 KB, gzip's window) and
			// 5 counters.
			const bound = 4 << 20
			if grew := lr.peak - before; grew > bound {
				t.Errorf("the live heap grew by %d bytes while reading %d bytes: more than %d, points are held", grew, lr.read, bound)
			}
			t.Logf("read %d MB; live heap peak %d KB above the %d KB before", lr.read>>20, (lr.peak-before)>>10, before>>10)
		})
	}
}
