package k6labels

import (
	"context"
	"encoding/binary"
	"hash/maphash"
	"runtime/pprof"
	"strings"
	"sync/atomic"
	"unicode/utf8"
	"unsafe"
)

// OverflowValue replaces a label value once its label name has reached the
// cap set by [WithMaxValuesPerLabel]. A client that sends it as a value gets
// it as the label, without taking a value's place under the cap.
const OverflowValue = "_overflow"

// undefinedValue is what k6's helper sends for the test run id on a local
// `k6 run`, where no id exists. It carries nothing, so it is not a label.
const undefinedValue = "undefined"

// maxNameBytes bounds a label name; longer keys are skipped, not cut: a cut
// could merge two names.
const maxNameBytes = 128

// The label names k6's helper sends. They always have a place under the
// name cap and come first in what is sent downstream.
var k6Names = [...]string{"k6_test_run_id", "k6_scenario", "k6_name"}

// label is one k6 label: its pprof name and value. The baggage key it came
// from is not kept: keys that make the same name are the same label, and
// the key sent downstream is the one the name stands for (see keyOf).
type label struct {
	name, value string
}

// labelName appends to buf the pprof label name for a baggage key and
// reports whether the key is a k6 key that makes a valid name. Names are the
// key with every byte outside [a-zA-Z0-9_] turned into '_', so
// "k6.test_run_id" becomes "k6_test_run_id" and every name matches
// ^[a-zA-Z_][a-zA-Z0-9_]*$, the names Pyroscope accepts in every mode.
func labelName(key string, buf []byte) ([]byte, bool) {
	if len(key) <= len("k6.") || len(key) > maxNameBytes || !strings.HasPrefix(key, "k6.") {
		return buf, false
	}
	buf = append(buf, "k6_"...)
	start := len(buf)
	buf = append(buf, key[len("k6."):]...)
	i := start
	for ; i+8 <= len(buf) && nameBytes8(binary.LittleEndian.Uint64(buf[i:])); i += 8 {
	}
	for ; i < len(buf); i++ {
		if grammar[buf[i]]&nameByte == 0 {
			buf[i] = '_'
		}
	}
	return buf, true
}

// nameBytes8 reports whether the 8 bytes of x are all name bytes
// [a-zA-Z0-9_], eight at a time: keys as long as a name may be are checked
// at the cost of a short one.
func nameBytes8(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	if x&highs != 0 {
		return false // a byte >= 0x80
	}
	// With every byte below 0x80, (b|0x80) - c keeps its high bit iff b >= c,
	// and borrows from no other byte; b is in [lo, hi] iff b >= lo and not
	// b >= hi+1.
	y := x | highs
	in := (y-'0'*ones)&^(y-('9'+1)*ones) | (y-'A'*ones)&^(y-('Z'+1)*ones) |
		(y-'a'*ones)&^(y-('z'+1)*ones) | (y-'_'*ones)&^(y-('_'+1)*ones)
	return in&highs == highs
}

// keyOf returns the baggage key a label name stands for: "k6_my_tag" is
// sent as "k6.my_tag", which is always a valid key and makes the same name.
func keyOf(name string) string {
	return "k6." + name[len("k6_"):]
}

// looksLikeURL reports whether a k6.name value is a URL (or a path), whose
// query string and fragment are dropped: k6 names untagged requests by URL.
func looksLikeURL(s string) bool {
	if strings.HasPrefix(s, "/") {
		return true
	}
	// A URL's first ':' is its scheme's: look there before scanning.
	i := strings.IndexByte(s, ':')
	return i >= 0 && (strings.HasPrefix(s[i+1:], "//") || strings.Contains(s[i+1:], "://"))
}

// cutQuery returns s without its query string and fragment.
func cutQuery(s string) string {
	if i := queryMark(s); i >= 0 {
		return s[:i]
	}
	return s
}

// queryMark returns the index of the first '?' or '#' in s, or -1.
// (Two IndexByte calls are several times faster than IndexAny.)
func queryMark(s string) int {
	i := strings.IndexByte(s, '?')
	end := len(s)
	if i >= 0 {
		end = i
	}
	if j := strings.IndexByte(s[:end], '#'); j >= 0 {
		return j
	}
	return i
}

// labelValue turns a raw member value into a label value: percent-decoded,
// valid UTF-8 without control characters, at most maxBytes long. For k6.name
// it drops a URL's query string and fragment unless keepQuery is set: before
// decoding when the value is a URL as sent (so an escaped "%3F" stays part of
// the path), after decoding when only the decoded value is one (a URL sent
// whole through encodeURIComponent). Work is bounded by maxBytes, not by the
// length of raw.
func labelValue(name, raw string, maxBytes int, keepQuery bool, a *arena) string {
	isName := name == "k6_name" && !keepQuery
	if isName && looksLikeURL(raw) {
		raw, isName = cutQuery(raw), false
	}
	if isPlain(raw) {
		return raw[:min(len(raw), maxBytes)]
	}
	v := decodeClean(raw, maxBytes, a)
	if isName && looksLikeURL(v) {
		v = cutQuery(v)
	}
	return v
}

// decodeClean percent-decodes at most the prefix of raw that the first
// maxBytes bytes of the result can come from, and cleans it as cleanValue
// does. Every decoded byte makes at least one byte of the result, so
// maxBytes+3 decoded bytes always suffice (3: the rest of a character that
// starts before the cut). Only half of them are decoded first: where bytes
// are replaced (each U+FFFD is 3 bytes) the result is often full by then,
// and then no more is decoded than the result can take.
func decodeClean(raw string, maxBytes int, a *arena) string {
	buf := a.scratch[:min(maxBytes+utf8.UTFMax-1, len(a.scratch))]
	half := min(len(buf), maxBytes/2+utf8.UTFMax-1)
	n, i, s := decode(buf[:half], 0, raw, 0, charsClean)
	clean := 0 // buf[:clean] is whole characters that are kept as they are
	if i < len(raw) {
		if s == charsRejected {
			// Rewritten, a part at a time: the characters that start in
			// the first n-3 bytes are whole, whatever follows, and what
			// is decoded next is what the rest of the result takes at
			// the rate so far (each byte makes at least one).
			out := a.reserve(maxBytes)[:maxBytes]
			w, p := 0, 0
			for {
				stop := n - (utf8.UTFMax - 1)
				if i == len(raw) {
					stop = n
				}
				dw, dp := rewriteRunes(out[w:], buf[p:n], stop-p)
				w, p = w+dw, p+dp
				if p < stop || w == len(out) || i == len(raw) || n == len(buf) { // the result is full
					return a.commit(out[:w])
				}
				n, i, _ = decode(buf[:min(len(buf), n+(len(out)-w)*p/max(w, 1)+utf8.UTFMax)], n, raw, i, s)
			}
		}
		clean = wholeChars(buf[:n])
		n, i, s = decode(buf, n, raw, i, s)
	}
	return cleanBytes(buf[:n], clean, maxBytes, s, i < len(raw), a)
}

// cutChars returns the longest prefix of b of at most maxBytes bytes that
// ends on a character boundary. b is whole characters, but for a character
// that begins past maxBytes, where b is longer.
func cutChars(b []byte, maxBytes int) []byte {
	if len(b) <= maxBytes {
		return b
	}
	n := maxBytes
	for n > 0 && b[n]&0xc0 == 0x80 {
		n--
	}
	return b[:n]
}

// decode percent-decodes raw from i on into buf from n on, as far as buf
// goes, and returns the new n and i. An escape is '%' and two hex digits;
// any other '%' is kept as written. It runs the character check (charStep)
// on each decoded byte from state s and returns the state after the last:
// one loop of the same few steps for every byte, whatever mix of escapes,
// bytes and characters raw holds.
func decode(buf []byte, n int, raw string, i int, s uint64) (int, int, uint64) {
	for {
		// A step reads 3 bytes and moves by 3 at most: m steps stay in raw.
		m := min(len(buf)-n, (len(raw)-i)/3)
		if m <= 0 {
			break
		}
		if s&63 == charsRejected { // for good: only decoded
			i = decodeOnly(buf[n:n+m], raw, i)
		} else {
			i, s = decodeSteps(buf[n:n+m], raw, i, s)
		}
		n += m
	}
	for n < len(buf) && i < len(raw) { // the last two bytes start no escape
		c := raw[i]
		buf[n] = c
		s = charStep[c] >> (s & 63)
		n, i = n+1, i+1
	}
	return n, i, s & 63
}

// decodeSteps is decode's loop: it fills d, reading raw from i on, where
// len(raw)-i >= 3*len(d), and returns the new i and state (not masked).
// The loads are unchecked, as the compiler cannot prove them in bounds;
// the loop is a function of its own, so that what it keeps stays in
// registers, and makes four bytes a step.
//
//go:noinline
func decodeSteps(d []byte, raw string, i int, s uint64) (int, uint64) {
	if len(raw)-i < 3*len(d) || i < 0 {
		panic("k6labels: decodeSteps out of bounds")
	}
	p := unsafe.Pointer(unsafe.StringData(raw))
	var c0, c1, c2, c3 byte
	for ; len(d) >= 4; d = d[4:] {
		c0, i = decodedByte(p, i)
		c1, i = decodedByte(p, i)
		c2, i = decodedByte(p, i)
		c3, i = decodedByte(p, i)
		d[0], d[1], d[2], d[3] = c0, c1, c2, c3
		s = charStep[c0] >> (s & 63)
		s = charStep[c1] >> (s & 63)
		s = charStep[c2] >> (s & 63)
		s = charStep[c3] >> (s & 63)
	}
	for k := range d {
		c0, i = decodedByte(p, i)
		d[k] = c0
		s = charStep[c0] >> (s & 63)
	}
	return i, s
}

// decodeOnly is decodeSteps without the character check.
func decodeOnly(d []byte, raw string, i int) int {
	if len(raw)-i < 3*len(d) || i < 0 {
		panic("k6labels: decodeOnly out of bounds")
	}
	p := unsafe.Pointer(unsafe.StringData(raw))
	for k := range d {
		d[k], i = decodedByte(p, i)
	}
	return i
}

// decodedByte returns the byte that the escape or byte at p+i makes, and
// where the next one starts. The three bytes from p+i must be readable.
func decodedByte(p unsafe.Pointer, i int) (byte, int) {
	c := *(*byte)(unsafe.Add(p, i))
	hi, lo := unhexTable[*(*byte)(unsafe.Add(p, i+1))], unhexTable[*(*byte)(unsafe.Add(p, i+2))]
	if c == '%' && hi|lo <= 0xf {
		return hi<<4 | lo, i + 3
	}
	return c, i + 1
}

// The states of the character check, each the shift of its six bits in a
// row of charStep: between characters that are all kept, rejected (for
// good), or inside a character, with what its next byte must be.
const (
	charsClean    = 6 * iota
	charsRejected // a byte that no kept character has there
	charC2        // after 0xc2: 0xa0-0xbf (0x80-0x9f make the C1 controls)
	charLast      // the last byte of a character: 0x80-0xbf
	charTwo       // two more: 0x80-0xbf, then charLast
	charE0        // after 0xe0: 0xa0-0xbf (no overlong form), then charLast
	charED        // after 0xed: 0x80-0x9f (no surrogate), then charLast
	charThree     // three more: 0x80-0xbf, then charTwo
	charF0        // after 0xf0: 0x90-0xbf (no overlong form), then charTwo
	charF4        // after 0xf4: 0x80-0x8f (not past U+10FFFF), then charTwo
)

// charStep is a DFA that accepts valid UTF-8 without control characters
// (C0, DEL, C1), a byte a step: s = charStep[c] >> (s & 63). Bits s to s+5
// of charStep[c] are the state that c leads to from state s, so a step is
// one load, independent of s, and one shift; the bits above are garbage
// until masked.
var charStep = func() (t [256]uint64) {
	for c := range t {
		for s := uint64(charsClean); s <= charF4; s += 6 {
			t[c] |= charsRejected << s
		}
	}
	rule := func(lo, hi int, from, to uint64) {
		for c := lo; c <= hi; c++ {
			t[c] = t[c]&^(63<<from) | to<<from
		}
	}
	// UTF-8 (RFC 3629, section 4) without U+0000-U+001F, U+007F-U+009F:
	//   UTF8-1 = %x20-7E
	//   UTF8-2 = %xC2 %xA0-BF / %xC3-DF UTF8-tail
	//   UTF8-3 = %xE0 %xA0-BF UTF8-tail / %xE1-EC 2( UTF8-tail ) /
	//            %xED %x80-9F UTF8-tail / %xEE-EF 2( UTF8-tail )
	//   UTF8-4 = %xF0 %x90-BF 2( UTF8-tail ) / %xF1-F3 3( UTF8-tail ) /
	//            %xF4 %x80-8F 2( UTF8-tail )
	rule(0x20, 0x7e, charsClean, charsClean)
	rule(0xc2, 0xc2, charsClean, charC2)
	rule(0xc3, 0xdf, charsClean, charLast)
	rule(0xe0, 0xe0, charsClean, charE0)
	rule(0xe1, 0xec, charsClean, charTwo)
	rule(0xed, 0xed, charsClean, charED)
	rule(0xee, 0xef, charsClean, charTwo)
	rule(0xf0, 0xf0, charsClean, charF0)
	rule(0xf1, 0xf3, charsClean, charThree)
	rule(0xf4, 0xf4, charsClean, charF4)
	rule(0xa0, 0xbf, charC2, charsClean)
	rule(0x80, 0xbf, charLast, charsClean)
	rule(0x80, 0xbf, charTwo, charLast)
	rule(0xa0, 0xbf, charE0, charLast)
	rule(0x80, 0x9f, charED, charLast)
	rule(0x80, 0xbf, charThree, charTwo)
	rule(0x90, 0xbf, charF0, charTwo)
	rule(0x80, 0x8f, charF4, charTwo)
	return t
}()

// after2 is the character check's state after a lead byte c and the byte
// after it: where the ranges of second bytes (no overlong form, surrogate,
// C1 control, or code point past U+10FFFF) are decided.
func after2(c, c1 byte) uint64 {
	return charStep[c1] >> (charStep[c] & 63) & 63
}

// checkChars runs the character check on b and returns the state after it.
func checkChars(b []byte) uint64 {
	var s uint64 = charsClean
	for _, c := range b {
		s = charStep[c] >> (s & 63)
	}
	return s & 63
}

// wholeChars returns the length of b without the character its last bytes
// begin, if b ends before that character does.
func wholeChars(b []byte) int {
	for j := len(b) - 1; j >= 0 && j >= len(b)-utf8.UTFMax; j-- {
		c := b[j]
		switch {
		case 0x80 <= c && c < 0xc0: // a continuation byte: look further back
			continue
		case c < 0xc2 || c > 0xf4: // ASCII, or a byte that starts no character
			return len(b)
		}
		size := 2
		if c >= 0xe0 {
			size = 3
		}
		if c >= 0xf0 {
			size = 4
		}
		if j+size > len(b) {
			return j
		}
		return len(b)
	}
	return len(b)
}

// charLen is the length of the character a byte starts: 1 for printable
// ASCII, 2 to 4 for lead bytes, 0 for the bytes that are replaced alone
// (C0, DEL, continuation bytes, 0xc0, 0xc1, 0xf5-0xff).
var charLen = func() (t [256]byte) {
	for c := range t {
		switch {
		case 0x20 <= c && c < 0x7f:
			t[c] = 1
		case 0xc2 <= c && c <= 0xdf:
			t[c] = 2
		case 0xe0 <= c && c <= 0xef:
			t[c] = 3
		case 0xf0 <= c && c <= 0xf4:
			t[c] = 4
		}
	}
	return t
}()

// unhexTable maps a hex digit to its value and every other byte to 0xff.
var unhexTable = func() (t [256]byte) {
	for c := range t {
		t[c] = 0xff
		if isHex(byte(c)) {
			t[c] = unhex(byte(c))
		}
	}
	return t
}()

// cleanValue makes s a valid label value: valid UTF-8 without control
// characters (each invalid byte and each control character becomes U+FFFD),
// at most maxBytes long and cut on a character boundary.
func cleanValue(s string, maxBytes int) string {
	if isPlain(s) {
		return s[:min(len(s), maxBytes)]
	}
	var a arena
	b := []byte(s[:min(len(s), maxBytes+utf8.UTFMax-1)])
	return strings.Clone(cleanBytes(b, 0, maxBytes, checkChars(b), len(b) < len(s), &a))
}

// cleanBytes is cleanValue for bytes b that may be reused, with the result
// in a. b[:clean] (clean <= maxBytes) is known to be whole characters kept
// as they are; s is the character check's state after b; more tells that b
// is the first maxBytes+3 bytes of a longer value. Valid UTF-8 without
// control characters, the common case, is only cut; anything else is
// rewritten rune by rune.
func cleanBytes(b []byte, clean, maxBytes int, s uint64, more bool, a *arena) string {
	if s == charsClean || more && s != charsRejected {
		return a.string(cutChars(b, maxBytes))
	}
	out := a.reserve(maxBytes)[:maxBytes]
	copy(out, b[:clean])
	w, _ := rewriteRunes(out[clean:], b[clean:], len(b)-clean)
	return a.commit(out[:clean+w])
}

// rewriteRunes writes b to dst rune by rune, each invalid byte and control
// character (C0, DEL, C1) as U+FFFD, as far as whole characters fit in dst,
// for the characters that start before stop. It returns how many bytes it
// wrote and where in b it stopped. An invalid sequence is one byte long, as
// for utf8.DecodeRune; a C1 control two. The checks are inline, the second
// byte's ranges after 0xe0-0xf4 taken from charStep: this loop is what
// replaced bytes cost.
func rewriteRunes(dst, b []byte, stop int) (w, i int) {
	for i < stop && i < len(b) {
		c := b[i]
		n := 1 // C0, DEL, and a byte that starts no valid character here
		switch charLen[c] {
		case 1: // printable ASCII
			if w >= len(dst) {
				return w, i
			}
			dst[w] = c
			w, i = w+1, i+1
			continue
		case 2:
			if i+1 >= len(b) || b[i+1]&0xc0 != 0x80 {
				break
			}
			if c == 0xc2 && b[i+1] < 0xa0 { // C1
				n = 2
				break
			}
			if w+2 > len(dst) {
				return w, i
			}
			d := dst[w : w+2]
			d[0], d[1] = c, b[i+1]
			w, i = w+2, i+2
			continue
		case 3:
			if i+2 >= len(b) {
				break
			}
			e := b[i : i+3]
			if after2(c, e[1]) != charLast || e[2]&0xc0 != 0x80 {
				break
			}
			if w+3 > len(dst) {
				return w, i
			}
			d := dst[w : w+3]
			d[0], d[1], d[2] = c, e[1], e[2]
			w, i = w+3, i+3
			continue
		case 4:
			if i+3 >= len(b) {
				break
			}
			e := b[i : i+4]
			if after2(c, e[1]) != charTwo || e[2]&0xc0 != 0x80 || e[3]&0xc0 != 0x80 {
				break
			}
			if w+4 > len(dst) {
				return w, i
			}
			d := dst[w : w+4]
			d[0], d[1], d[2], d[3] = c, e[1], e[2], e[3]
			w, i = w+4, i+4
			continue
		}
		if w+3 > len(dst) {
			break
		}
		d := dst[w : w+3]
		d[0], d[1], d[2] = 0xef, 0xbf, 0xbd // U+FFFD
		w, i = w+3, i+n
	}
	return w, i
}

// arenaBytes is what an arena holds before it allocates: the values and
// names of a request at the default limits.
const arenaBytes = DefaultMaxLabels * (DefaultMaxValueBytes + 32)

// An arena holds the strings decoded for one request's labels, on the
// stack of the request's goroutine unless they outgrow it. Label sets copy
// what they keep, so nothing made here outlives the request. Bytes handed
// out are never written again.
type arena struct {
	used    int // bytes of store handed out
	store   [arenaBytes]byte
	heap    []byte                                 // once store is full: handed out, then room
	scratch [maxValueBytesLimit + utf8.UTFMax]byte // a value being decoded
}

// string returns a copy of b.
func (a *arena) string(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return a.commit(append(a.reserve(len(b)), b...))
}

// reserve returns an empty slice with room for n bytes after the bytes
// handed out; commit hands out what was appended to it within that room.
func (a *arena) reserve(n int) []byte {
	if a.heap == nil && a.used+n <= len(a.store) {
		return a.store[a.used:a.used:len(a.store)]
	}
	if cap(a.heap)-len(a.heap) < n {
		a.heap = make([]byte, 0, max(n, 2*cap(a.heap), len(a.store)))
	}
	return a.heap[len(a.heap):len(a.heap)]
}

// commit hands out b, which reserve returned and was appended to.
func (a *arena) commit(b []byte) string {
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

// A labelSet is one distinct set of k6 labels, built once and shared by every
// request that carries it. Its labels never change; what it caches about
// them (admission, renaming, the encoded baggage) is replaced atomically.
type labelSet struct {
	labels  []label // sorted by name
	cfg     uint64  // the Labeler options it was built under (config.key)
	hash    uint64
	size    int // bytes it holds, for the cache budget
	dropped int // labels left out to fit a baggage header

	ctx  context.Context // context.Background() with the labels
	set  pprof.LabelSet
	prof unsafe.Pointer // what pprof.SetGoroutineLabels(ctx) puts on a goroutine

	adm     atomic.Pointer[admission] // what the registry made of it, while current
	renamed atomic.Pointer[renaming]  // the last set a naming hook turned it into
	baggage atomic.Pointer[string]    // the labels encoded for a baggage header, once asked for
}

// renaming records that a naming hook turned a set's k6_name into name.
type renaming struct {
	name    string
	set     *labelSet
	dropped int // labels left out of set to fit a baggage header
}

// newLabelSet builds the set of labels (sorted by name) under config key
// cfg. It copies every string, so labels may point into buffers that the
// caller reuses. Labels that would make the encoded baggage exceed the W3C
// limit are left out, the least important first, so that [Baggage] always
// fits; it returns how many.
func newLabelSet(labels []label, cfg, hash uint64) (_ *labelSet, dropped int) {
	keep, dropped := fitBaggage(labels)
	if len(labels) == dropped {
		return nil, dropped
	}
	n := 0
	for i, l := range labels {
		if keep[i] {
			n += len(l.name) + len(l.value)
		}
	}
	var sb strings.Builder
	sb.Grow(n)
	for i, l := range labels {
		if keep[i] {
			sb.WriteString(l.name)
			sb.WriteString(l.value)
		}
	}
	all := sb.String() // one copy for every string of the set
	s := &labelSet{labels: make([]label, 0, len(labels)-dropped), cfg: cfg, hash: hash}
	kv := make([]string, 0, 2*cap(s.labels))
	off := 0
	for i, l := range labels {
		if !keep[i] {
			continue
		}
		name := all[off : off+len(l.name)]
		off += len(l.name)
		value := all[off : off+len(l.value)]
		off += len(l.value)
		s.labels = append(s.labels, label{name, value})
		kv = append(kv, name, value)
	}
	s.set = pprof.Labels(kv...)
	s.ctx = pprof.WithLabels(context.Background(), s.set)
	s.prof = profLabelOf(s.ctx)
	s.size = 256 + 3*n + 64*len(s.labels) // strings, the pprof copies, headers
	return s, dropped
}

// fitBaggage reports which of labels to keep, and how many not to, so that
// their encoded baggage is at most MaxBaggageBytes: the three k6 names are
// kept first, then the others in name order.
func fitBaggage(labels []label) (keep [maxLabelsLimit]bool, dropped int) {
	size := -1 // no ',' before the first member
	for i, l := range labels {
		size += 1 + memberLen(l)
		keep[i] = true
	}
	if size <= MaxBaggageBytes {
		return keep, 0
	}
	keep = [maxLabelsLimit]bool{}
	size = -1
	for pass := range 2 {
		for i, l := range labels {
			if isK6Name(l.name) != (pass == 0) {
				continue
			}
			if n := 1 + memberLen(l); size+n <= MaxBaggageBytes {
				keep[i] = true
				size += n
			}
		}
	}
	dropped = 0
	for i := range labels {
		if !keep[i] {
			dropped++
		}
	}
	return keep, dropped
}

func isK6Name(name string) bool {
	return name == k6Names[0] || name == k6Names[1] || name == k6Names[2]
}

// memberLen is the length of l as an encoded baggage member.
func memberLen(l label) int {
	n := len(l.name) + 1 // the key is as long as the name
	for i := 0; i < len(l.value); i++ {
		if needsEscape(l.value[i]) {
			n += 3
		} else {
			n++
		}
	}
	return n
}

// encodedBaggage returns the labels of s as a baggage header value, building
// it on first use: most services never send it on.
func (s *labelSet) encodedBaggage() string {
	if p := s.baggage.Load(); p != nil {
		return *p
	}
	var b []byte
	for i, l := range s.labels {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, "k6."...)
		b = append(b, l.name[len("k6_"):]...)
		b = append(b, '=')
		b = appendEncoded(b, l.value)
	}
	str := string(b)
	s.baggage.Store(&str)
	return str
}

// equal reports whether labels, under config key cfg, make the set s.
func (s *labelSet) equal(cfg uint64, labels []label) bool {
	if s.cfg != cfg || len(s.labels)+s.dropped != len(labels) {
		return false
	}
	if s.dropped == 0 {
		for i := range labels {
			if s.labels[i] != labels[i] {
				return false
			}
		}
		return true
	}
	// s holds what fitBaggage kept of its labels: labels make s if they are
	// as long, and what it keeps of them is s.
	keep, _ := fitBaggage(labels)
	j := 0
	for i := range labels {
		if keep[i] {
			if j == len(s.labels) || s.labels[j] != labels[i] {
				return false
			}
			j++
		}
	}
	return j == len(s.labels)
}

// value returns the value of the label named name, if s has it.
func (s *labelSet) value(name string) (string, bool) {
	for _, l := range s.labels {
		if l.name == name {
			return l.value, true
		}
	}
	return "", false
}

// hashLabels hashes labels (sorted by name) under config key cfg.
func hashLabels(seed maphash.Seed, cfg uint64, labels []label) uint64 {
	var h maphash.Hash
	h.SetSeed(seed)
	var b [8]byte
	for i := range b {
		b[i] = byte(cfg >> (8 * i))
	}
	h.Write(b[:])
	for _, l := range labels {
		h.WriteString(l.name)
		h.WriteByte(0)
		h.WriteString(l.value)
		h.WriteByte(0)
	}
	return h.Sum64()
}
