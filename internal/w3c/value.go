package w3c

import (
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

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}

// unescape appends to dst the first n bytes that percent-decoding raw
// makes (all of them if fewer). An escape is '%' and two hex digits; any
// other '%' is kept as written: k6 sends raw URLs, where a bare '%' is more
// likely text than a broken escape. This is the one percent-decoder.
func unescape(dst []byte, raw string, n int) []byte {
	for i := 0; i < len(raw) && n > 0; i, n = i+1, n-1 {
		c := raw[i]
		if c == '%' && i+2 < len(raw) && isHex(raw[i+1]) && isHex(raw[i+2]) {
			c = unhex(raw[i+1])<<4 | unhex(raw[i+2])
			i += 2
		}
		dst = append(dst, c)
	}
	return dst
}

// DecodeValue percent-decodes s (see unescape). Each byte of the result
// that is not valid UTF-8 becomes U+FFFD, as the specification asks (and
// as OpenTelemetry does); control characters are kept.
func DecodeValue(s string) string {
	if IsPlain(s) {
		return s
	}
	b := unescape(make([]byte, 0, len(s)), s, len(s))
	if utf8.Valid(b) {
		return string(b)
	}
	return string([]rune(string(b)))
}

// appendClean appends to dst the longest prefix of b's characters that
// fits in dst's first limit bytes, each invalid byte and each control
// character (C0, DEL, C1) written as U+FFFD.
func appendClean(dst, b []byte, limit int) []byte {
	for i := 0; i < len(b); {
		c := b[i]
		if 0x20 <= c && c < 0x7f { // printable ASCII
			if len(dst) == limit {
				break
			}
			dst, i = append(dst, c), i+1
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		char := b[i : i+size]
		if r < 0x20 || 0x7f <= r && r < 0xa0 || r == utf8.RuneError {
			char = []byte("\uFFFD")
		}
		if len(dst)+len(char) > limit {
			break
		}
		dst, i = append(dst, char...), i+size
	}
	return dst
}

// CleanValue makes s a valid label value: valid UTF-8 without control
// characters (each invalid byte and each control character becomes
// U+FFFD), at most maxBytes long and cut on a character boundary.
func CleanValue(s string, maxBytes int) string {
	if IsPlain(s) {
		return s[:min(len(s), maxBytes)]
	}
	return string(appendClean(nil, []byte(s[:min(len(s), maxBytes+utf8.UTFMax-1)]), maxBytes))
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
	used    int // bytes of store handed out
	store   [ArenaBytes]byte
	heap    []byte                                // once store is full: handed out, then room
	scratch [MaxValueBytes + utf8.UTFMax - 1]byte // a value being decoded
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
	b := unescape(a.scratch[:0], raw, maxBytes+utf8.UTFMax-1)
	return a.commit(appendClean(a.reserve(maxBytes), b, maxBytes))
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
