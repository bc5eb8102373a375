package k6results

import (
	"fmt"
	"io"
	"time"
)

// DefaultMaxBytes bounds k6 results once decompressed. The file is
// streamed, so the bound is on time, not memory: k6's json output of a
// one-hour run at 1,000 requests a second is about 15 GB.
const DefaultMaxBytes = 32 << 30

// Options bound what [ReadWith] reads.
type Options struct {
	MaxBytes int64  // once decompressed; 0: DefaultMaxBytes
	MaxFlag  string // the flag that raises MaxBytes, named in the error; "": --max-k6-bytes
	// From and To, when not zero, bound the times of the http_reqs counted;
	// the others are in [Results.Outside].
	From, To time.Time
	// Latency keeps k6's http_req_duration and http_req_waiting of each
	// request in [Results.Latency]: 16 bytes a request.
	Latency bool
}

// recordReader bounds a csv record as maxLine bounds a json line: the
// bytes read since mark (the end of the last record), less what the csv
// reader may buffer, stay within maxLine.
type recordReader struct {
	r          io.Reader
	read, mark int64
}

// csvBuffer is more than encoding/csv's bufio buffer (4096 bytes).
const csvBuffer = 64 << 10

func (rr *recordReader) Read(p []byte) (int, error) {
	if rr.read-rr.mark > maxLine+csvBuffer {
		return 0, fmt.Errorf("%w: a csv record longer than %d bytes", ErrFormat, maxLine)
	}
	n, err := rr.r.Read(p)
	rr.read += int64(n)
	return n, err
}
