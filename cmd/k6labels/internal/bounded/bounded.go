// Package bounded reads the command's inputs through readers that stop at a
// stated size, counted after decompression, and at the cancellation of a
// context (SIGINT, SIGTERM), so that no input can fill the host's memory or
// keep the command from stopping.
package bounded

import (
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// ErrTooLarge is wrapped by every [LimitError].
var ErrTooLarge = errors.New("input larger than its limit")

// A LimitError is returned when an input is longer than its limit, counted
// after decompression. Its message names the input, the limit and the flag
// that raises it.
type LimitError struct {
	What  string // the input, e.g. "profile cpu.pb.gz"
	Limit int64  // bytes
	Flag  string // the flag that raises the limit, e.g. "--max-profile-bytes"
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("%s is larger than %s once decompressed (a gzip bomb, or not what it seems?); if it is right, raise the limit with %s",
		e.What, FormatSize(e.Limit), e.Flag)
}

// Unwrap returns [ErrTooLarge].
func (e *LimitError) Unwrap() error { return ErrTooLarge }

// reader reads r until limit bytes or ctx's cancellation.
type reader struct {
	ctx  context.Context
	r    io.Reader
	left int64
	err  *LimitError
}

// NewReader returns a reader of r that returns a [*LimitError] (what, flag)
// once more than limit bytes are read, and context.Cause(ctx) once ctx is
// done; ctx is checked before every read. A limit <= 0 is no limit.
func NewReader(ctx context.Context, r io.Reader, limit int64, what, flag string) io.Reader {
	if limit <= 0 {
		limit = 1<<63 - 1
	}
	return &reader{ctx: ctx, r: r, left: limit, err: &LimitError{What: what, Limit: limit, Flag: flag}}
}

func (b *reader) Read(p []byte) (int, error) {
	if err := b.ctx.Err(); err != nil {
		return 0, context.Cause(b.ctx)
	}
	if b.left < 0 {
		return 0, b.err
	}
	// Read one byte past the limit to tell "exactly the limit" from "more".
	if int64(len(p)) > b.left {
		p = p[:b.left+1]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return n - int(-b.left), b.err
	}
	if err != nil && b.ctx.Err() != nil {
		return n, context.Cause(b.ctx)
	}
	return n, err
}

// IsGzip tells whether head starts with gzip's magic bytes.
func IsGzip(head []byte) bool { return len(head) >= 2 && head[0] == 0x1f && head[1] == 0x8b }

// Decompressed returns a reader of r's content, gunzipped when it starts
// with gzip's magic bytes, bounded as [NewReader] bounds it (the limit counts
// the decompressed bytes). The returned close function releases the gzip
// reader; it does not close r.
func Decompressed(ctx context.Context, r io.Reader, limit int64, what, flag string) (io.Reader, func(), error) {
	br := bufio.NewReaderSize(NewReader(ctx, r, 0, what, flag), 64<<10)
	if head, _ := br.Peek(2); IsGzip(head) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			if ctx.Err() != nil {
				return nil, nil, context.Cause(ctx)
			}
			return nil, nil, fmt.Errorf("broken gzip header: %w", err)
		}
		return NewReader(ctx, zr, limit, what, flag), func() { zr.Close() }, nil
	}
	return NewReader(ctx, br, limit, what, flag), func() {}, nil
}

// ReadAll reads r's content, gunzipped when it is gzip (see [Decompressed]),
// into memory: in chunks, so that input past the limit is refused holding
// about limit bytes, and input within it is held at most twice while
// joined. Content that is gzip again inside is refused: it would be
// inflated without a bound later.
func ReadAll(ctx context.Context, r io.Reader, limit int64, what, flag string) ([]byte, error) {
	dr, done, err := Decompressed(ctx, r, limit, what, flag)
	if err != nil {
		return nil, err
	}
	defer done()
	var chunks [][]byte
	total, size := 0, 64<<10
	for {
		chunk := make([]byte, size)
		n, err := io.ReadFull(dr, chunk)
		chunks = append(chunks, chunk[:n])
		total += n
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		size = min(2*size, 4<<20)
	}
	data := chunks[0]
	if len(chunks) > 1 {
		data = make([]byte, 0, total)
		for _, c := range chunks {
			data = append(data, c...)
		}
	}
	if IsGzip(data) {
		return nil, fmt.Errorf("%s is gzip inside gzip: decompress it once (gunzip) and give the result", what)
	}
	return data, nil
}

// Open opens the file at path for reading; once ctx is done, reads that
// wait on it (a fifo, a pipe) end at once. Close the file when done.
func Open(ctx context.Context, path string) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { _ = f.SetReadDeadline(time.Now()) })
	return &file{File: f, stop: stop}, nil
}

type file struct {
	*os.File
	stop func() bool
}

func (f *file) Close() error {
	f.stop()
	return f.File.Close()
}

// A Size is a flag value in bytes, written as a whole number with an
// optional unit: KiB, MiB, GiB, TiB (powers of 1024), kB, MB, GB, TB
// (powers of 1000) or B; it implements flag.Value.
type Size int64

var units = []struct {
	suffix string
	n      int64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"kB", 1e3}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1},
}

// String implements flag.Value.
func (s *Size) String() string { return FormatSize(int64(*s)) }

// Set implements flag.Value.
func (s *Size) Set(v string) error {
	num, mul := strings.TrimSpace(v), int64(1)
	for _, u := range units {
		if strings.HasSuffix(num, u.suffix) {
			num, mul = strings.TrimSpace(strings.TrimSuffix(num, u.suffix)), u.n
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 || n > (1<<63-1)/mul {
		return fmt.Errorf("want a positive size in bytes such as 512MiB or 2GiB, got %q", v)
	}
	*s = Size(n * mul)
	return nil
}

// FormatSize writes n bytes as Size reads it: with the largest binary unit
// that divides it, else in bytes.
func FormatSize(n int64) string {
	for _, u := range []struct {
		suffix string
		n      int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.n && n%u.n == 0 {
			return strconv.FormatInt(n/u.n, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}
