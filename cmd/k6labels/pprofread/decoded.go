package pprofread

import (
	"encoding/binary"
	"fmt"

	"github.com/k6labels/k6labels/cmd/k6labels/internal/bounded"
)

// decodedFactor bounds the memory a profile takes once decoded, as a
// multiple of its byte limit: the recorded real profiles are estimated at
// about 10 times their size, a crafted one of tiny samples at 36 times.
const decodedFactor = 8

// decodedSize estimates the memory that profile.ParseData takes for data,
// a pprof protobuf: each element of the top-level message (sample,
// location, function, string) costs a Go object of about 128 bytes plus 4
// times its encoded length. It returns 0 for data that is no protobuf
// (legacy text formats, left to the parser).
func decodedSize(data []byte) int64 {
	var est int64
	for len(data) > 0 {
		key, n := binary.Uvarint(data)
		if n <= 0 || key>>3 == 0 { // field 0 is no protobuf
			return 0
		}
		data = data[n:]
		var size int
		switch key & 7 {
		case 0:
			if _, n = binary.Uvarint(data); n <= 0 {
				return 0
			}
			size = n
		case 1:
			size = 8
		case 2:
			l, n := binary.Uvarint(data)
			if n <= 0 || l > uint64(len(data)-n) {
				return 0
			}
			size = n + int(l)
		case 5:
			size = 4
		default:
			return 0
		}
		if size > len(data) {
			return 0
		}
		data = data[size:]
		est += 128 + 4*int64(size)
	}
	return est
}

// decodedError is the error of checkDecoded; it wraps [bounded.ErrTooLarge].
type decodedError struct{ msg string }

func (e *decodedError) Error() string { return e.msg }
func (e *decodedError) Unwrap() error { return bounded.ErrTooLarge }

// checkDecoded returns an error wrapping [bounded.ErrTooLarge] when data
// would take more than decodedFactor × limit bytes once decoded.
func checkDecoded(where string, data []byte, limit int64, flag string) error {
	if est := decodedSize(data); est > decodedFactor*limit {
		return &decodedError{fmt.Sprintf("profile %s would take about %.0f MiB of memory once decoded, more than %d times %s %s (a crafted profile of tiny samples?); if it is right, raise %s",
			where, float64(est)/(1<<20), decodedFactor, flag, bounded.FormatSize(limit), flag)}
	}
	return nil
}
