package w3c

import (
	"slices"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// IsPlain reports whether s needs no decoding or cleaning: printable ASCII
// without '%'.
func IsPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '%' {
			return false
		}
	}
	return true
}

// isHex reports whether c is a hex digit.
func isHex(c byte) bool { return grammar[c]&hexByte != 0 }

// decodeAt returns the byte that raw's escape or byte at i makes, and the
// index after it. An escape is '%' and two hex digits (grammar holds their
// values); any other '%' is kept as written: k6 sends raw URLs, where a
// bare '%' is more likely text than a broken escape. The one decoder.
func decodeAt(raw string, i int) (byte, int) {
	c := raw[i]
	if c == '%' && i < len(raw)-2 {
		if hi, lo := grammar[raw[i+1]], grammar[raw[i+2]]; hi&lo&hexByte != 0 {
			return hi&0xf0 | lo>>4, i + 3
		}
	}
	return c, i + 1
}

// unescape writes into out the first len(out) bytes that percent-decoding
// raw makes (all of them if fewer), and returns how many it wrote.
func unescape(out []byte, raw string) int {
	n := 0
	for i := 0; i < len(raw) && n < len(out); n++ {
		out[n], i = decodeAt(raw, i)
	}
	return n
}

// DecodeValue percent-decodes s (see unescape). Each byte of the result
// that is not valid UTF-8 becomes U+FFFD, as the specification asks (and
// as OpenTelemetry does); control characters are kept.
func DecodeValue(s string) string {
	if IsPlain(s) {
		return s
	}
	b := make([]byte, len(s))
	b = b[:unescape(b, s)]
	if utf8.Valid(b) {
		return string(b)
	}
	return string([]rune(string(b)))
}

// appendClean appends to dst the longest prefix of the characters that
// percent-decoding s makes that fits in dst's first limit bytes, each
// invalid byte and each control character (C0, DEL, C1) written as
// U+FFFD, and returns it with the length of s it used. It reads s once,
// and no further than the cut.
func appendClean(dst []byte, s string, limit int) ([]byte, int) {
	dst = slices.Grow(dst, limit-len(dst))
	w, used := clean(dst[len(dst):limit], s)
	return dst[:len(dst)+w], used
}

// cleanRaw returns what appendClean appends to nil, without the
// percent-decoding: a '%' is kept as it is. The pieces between '%'s
// decode to themselves, and no character spans a '%'.
func cleanRaw(s string, limit int) []byte {
	var dst []byte
	for {
		piece, rest, found := strings.Cut(s, "%")
		var used int
		dst, used = appendClean(dst, piece, limit)
		if !found || used < len(piece) || len(dst) == limit {
			return dst
		}
		dst, s = append(dst, '%'), rest
	}
}

// clean writes into out what appendClean appends, and returns its length
// and the length of s it used. One loop over UTF-8's cases: the character
// check as a function of its own cost 22% on crafted headers (maxLabels of
// BenchmarkCrafted, 107k → 131k instructions, Valgrind).
func clean(out []byte, s string) (w, i int) { //nolint:cyclop // one loop: see above
	for i < len(s) {
		c, end := decodeAt(s, i)
		if 0x20 <= c && c < 0x7f { // printable ASCII
			if w == len(out) {
				break
			}
			out[w], w, i = c, w+1, end
			continue
		}
		// A character of size bytes, c and c1 to c3, that ends at end (as
		// utf8.DecodeRune reads it), or a byte replaced (size 0).
		size := 0
		var c1, c2, c3 byte
		if 0xc2 <= c && c <= 0xf4 && end < len(s) {
			if c1, end = decodeAt(s, end); c1^0x80 < 0x40 { // a continuation byte
				switch {
				case c < 0xe0:
					if c != 0xc2 || c1 >= 0xa0 { // not a C1 control
						size = 2
					}
				case c == 0xe0 && c1 < 0xa0, c == 0xf0 && c1 < 0x90: // overlong
				case c == 0xed && c1 > 0x9f: // a surrogate
				case c == 0xf4 && c1 > 0x8f: // past U+10FFFF
				case end < len(s):
					if c2, end = decodeAt(s, end); c2^0x80 < 0x40 {
						if c < 0xf0 {
							size = 3
						} else if end < len(s) {
							if c3, end = decodeAt(s, end); c3^0x80 < 0x40 {
								size = 4
							}
						}
					}
				}
			}
		}
		switch {
		case size == 0: // U+FFFD
			if len(out)-w < 3 {
				return w, i
			}
			out[w], out[w+1], out[w+2] = 0xef, 0xbf, 0xbd
			w += 3
			if c == 0xc2 && c1^0x80 < 0x40 {
				i = end // a C1 control, replaced whole
			} else {
				_, i = decodeAt(s, i) // an invalid byte, replaced alone
			}
			continue
		case len(out)-w < size:
			return w, i
		case size == 2:
			out[w], out[w+1] = c, c1
		case size == 3:
			out[w], out[w+1], out[w+2] = c, c1, c2
		default:
			out[w], out[w+1], out[w+2], out[w+3] = c, c1, c2, c3
		}
		w, i = w+size, end
	}
	return w, i
}

// CleanValue makes s a valid label value: valid UTF-8 without control
// characters (each invalid byte and each control character becomes
// U+FFFD), at most maxBytes long and cut on a character boundary.
func CleanValue(s string, maxBytes int) string {
	if IsPlain(s) {
		return s[:min(len(s), maxBytes)]
	}
	// Every byte makes at least one: the first maxBytes+3 suffice.
	s = s[:min(len(s), maxBytes+utf8.UTFMax-1)]
	return string(cleanRaw(s, min(maxBytes, utf8.UTFMax*len(s))))
}

// Arena sizes: MaxValueBytes is the largest maxBytes an Arena decodes;
// ArenaBytes is what it holds before it allocates (8 values of 256 bytes
// and their names, the default limits of a request).
const (
	MaxValueBytes = 2048
	ArenaBytes    = 8 * (256 + 32)
)

// An Arena holds the strings decoded for one request's labels, on the
// stack of the request's goroutine unless they outgrow it. Strings it
// hands out must be copied before the Arena goes; their bytes are never
// written again. The zero Arena is ready to use.
type Arena struct {
	used  int // bytes of store handed out
	store [ArenaBytes]byte
	heap  []byte // once store is full: handed out, then room
}

// String returns a copy of b held by a: valid while a is, never written
// again.
func (a *Arena) String(b []byte) string {
	return a.commit(append(a.reserve(len(b)), b...))
}

// Value returns the label value raw makes, held by a: percent-decoded,
// cleaned as by [CleanValue], at most maxBytes (<= MaxValueBytes) long.
// Work is bounded by maxBytes, not by the length of raw: every decoded
// byte makes at least one byte of the result, so the first maxBytes+3
// suffice (3: the rest of a character that starts before the cut).
func (a *Arena) Value(raw string, maxBytes int) string {
	b, _ := appendClean(a.reserve(maxBytes), raw, maxBytes)
	return a.commit(b)
}

// reserve returns an empty slice with room for n bytes after the bytes
// handed out; commit hands out what was appended to it within that room.
func (a *Arena) reserve(n int) []byte {
	if a.heap == nil && a.used+n <= len(a.store) {
		return a.store[a.used:a.used:len(a.store)]
	}
	if cap(a.heap)-len(a.heap) < n {
		a.heap = make([]byte, 0, max(n, 2*cap(a.heap), len(a.store)))
	}
	return a.heap[len(a.heap):len(a.heap)]
}

// commit hands out b, which reserve returned and was appended to.
func (a *Arena) commit(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if a.heap == nil {
		a.used += len(b)
	} else {
		a.heap = a.heap[:len(a.heap)+len(b)]
	}
	return unsafe.String(&b[0], len(b))
}
