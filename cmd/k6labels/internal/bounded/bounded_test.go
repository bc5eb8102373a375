package bounded_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/k6labels/k6labels/cmd/k6labels/internal/bounded"
)

// bomb returns n zero bytes (a multiple of 1 MiB) gzip-compressed: a
// member of 1 MiB repeated, which gzip readers read as one stream.
func bomb(t testing.TB, n int) []byte {
	t.Helper()
	var m bytes.Buffer
	zw := gzip.NewWriter(&m)
	zw.Write(make([]byte, 1<<20))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return bytes.Repeat(m.Bytes(), n>>20)
}

// TestLimitExact: exactly limit bytes read; one more is a *LimitError that
// names the input, the limit and the flag.
func TestLimitExact(t *testing.T) {
	for _, c := range []struct {
		n      int
		refuse bool
	}{{1000, false}, {1001, true}, {0, false}} {
		got, err := io.ReadAll(bounded.NewReader(context.Background(), strings.NewReader(strings.Repeat("x", c.n)), 1000, "profile p", "--max-x"))
		var le *bounded.LimitError
		switch {
		case c.refuse && (!errors.As(err, &le) || !errors.Is(err, bounded.ErrTooLarge) ||
			!strings.Contains(err.Error(), "profile p is larger than 1000B once decompressed") || !strings.Contains(err.Error(), "--max-x")):
			t.Errorf("%d bytes, limit 1000: %v", c.n, err)
		case c.refuse && len(got) != 1000:
			t.Errorf("%d bytes, limit 1000: %d bytes passed, want 1000", c.n, len(got))
		case !c.refuse && (err != nil || len(got) != c.n):
			t.Errorf("%d bytes, limit 1000: %d bytes, %v", c.n, len(got), err)
		}
	}
}

// TestBombBounded: a 32 MiB gzip bomb against a 1 MiB limit is refused
// after about 1 MiB is inflated: the allocations stay far below the bomb.
func TestBombBounded(t *testing.T) {
	b := bomb(t, 32<<20)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := bounded.ReadAll(context.Background(), bytes.NewReader(b), 1<<20, "profile bomb.pb.gz", "--max-profile-bytes")
	runtime.ReadMemStats(&after)
	if !errors.Is(err, bounded.ErrTooLarge) || !strings.Contains(err.Error(), "larger than 1MiB once decompressed") {
		t.Fatalf("a 32 MiB bomb, 1 MiB limit: %v", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 6<<20 {
		t.Errorf("reading the bomb allocated %d MiB, want at most 6", alloc>>20)
	}
	// Within its limit a bomb is read whole.
	data, err := bounded.ReadAll(context.Background(), bytes.NewReader(bomb(t, 4<<20)), 4<<20, "profile", "--max-profile-bytes")
	if err != nil || len(data) != 4<<20 {
		t.Errorf("within the limit: %d bytes, %v", len(data), err)
	}
}

// TestGzipInGzip: content gzipped twice is refused: the second layer would
// be inflated later without a bound.
func TestGzipInGzip(t *testing.T) {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(bomb(t, 1<<20))
	zw.Close()
	_, err := bounded.ReadAll(context.Background(), &b, 1<<30, "profile twice.gz", "--max-profile-bytes")
	if err == nil || !strings.Contains(err.Error(), "gzip inside gzip") {
		t.Errorf("gzip in gzip: %v", err)
	}
}

// TestCancelled: once ctx is cancelled, reads end with its cause, also in
// the middle of inflating.
func TestCancelled(t *testing.T) {
	cause := errors.New("terminated signal received")
	ctx, cancel := context.WithCancelCause(context.Background())
	dr, done, err := bounded.Decompressed(ctx, bytes.NewReader(bomb(t, 8<<20)), 0, "profile", "--max-profile-bytes")
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	buf := make([]byte, 4096)
	if _, err := io.ReadFull(dr, buf); err != nil {
		t.Fatal(err)
	}
	cancel(cause)
	if _, err := dr.Read(buf); !errors.Is(err, cause) {
		t.Errorf("read after cancel: %v, want %v", err, cause)
	}
}

// TestSize: sizes are read with binary and decimal units and written back
// with the largest binary unit that divides them.
func TestSize(t *testing.T) {
	for in, want := range map[string]int64{"512MiB": 512 << 20, "2GiB": 2 << 30, "1000": 1000, "3 kB": 3000, "1TB": 1e12, "7B": 7} {
		var s bounded.Size
		if err := s.Set(in); err != nil || int64(s) != want {
			t.Errorf("Set(%q) = %d, %v; want %d", in, s, err, want)
		}
	}
	for _, in := range []string{"", "-1", "0", "1.5GiB", "lots", "9999999TiB"} {
		var s bounded.Size
		if err := s.Set(in); err == nil || !strings.Contains(err.Error(), "such as 512MiB") {
			t.Errorf("Set(%q): %v, want an error", in, err)
		}
	}
	if s := bounded.Size(256 << 20); s.String() != "256MiB" {
		t.Errorf("256 MiB is written %s", s.String())
	}
}
