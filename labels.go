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
	for i := 3; i < len(key); i++ {
		c := key[i]
		if !isNameByte(c) {
			c = '_'
		}
		buf = append(buf, c)
	}
	return buf, true
}

func isNameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
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
// are replaced (each U+FFFD is 3 bytes) the result is often full by then.
func decodeClean(raw string, maxBytes int, a *arena) string {
	buf := a.scratch[:min(maxBytes+utf8.UTFMax-1, len(a.scratch))]
	half := min(len(buf), maxBytes/2+utf8.UTFMax-1)
	n, i := decode(buf[:half], 0, raw, 0)
	clean := 0 // buf[:clean] is whole characters that are kept as they are
	if i < len(raw) && n == half {
		classes := classesOf(buf[:n])
		clean = wholeChars(buf[:n])
		if classes&controlByte != 0 || classes&nonASCII != 0 && !validNoC1(buf[:clean]) {
			clean = -1
		}
		if clean < 0 {
			// Rewritten: the characters that start in the first n-3
			// bytes are whole, whatever follows.
			out := a.reserve(maxBytes)[:maxBytes]
			w, p := rewriteRunes(out, buf[:n], n-(utf8.UTFMax-1))
			if p < n-(utf8.UTFMax-1) || w == len(out) { // the result is full
				return a.commit(out[:w])
			}
			// Each byte makes at least one byte of the result: the
			// characters that start in the next len(out)-w bytes fill it.
			n, _ = decode(buf[:min(len(buf), p+len(out)-w+utf8.UTFMax-1)], n, raw, i)
			w2, _ := rewriteRunes(out[w:], buf[p:n], n-p)
			return a.commit(out[:w+w2])
		}
		n, _ = decode(buf, n, raw, i)
	}
	return cleanBytes(buf[:n], clean, maxBytes, classesOf(buf[clean:n]), a)
}

// decode percent-decodes raw from i on into buf from n on, as far as buf
// goes, and returns the new n and i. An escape is '%' and two hex digits;
// any other '%' is kept as written.
func decode(buf []byte, n int, raw string, i int) (int, int) {
	for n < len(buf) && i < len(raw) {
		c := raw[i]
		if c != '%' {
			buf[n] = c
			n, i = n+1, i+1
			continue
		}
		if i+2 >= len(raw) || unhexTable[raw[i+1]]|unhexTable[raw[i+2]] > 0xf {
			// A '%' kept as written, and each one after it that a '%'
			// follows.
			buf[n] = c
			n, i = n+1, i+1
			for n < len(buf) && i+1 < len(raw) && raw[i] == '%' && raw[i+1] == '%' {
				buf[n] = c
				n, i = n+1, i+1
			}
			continue
		}
		buf[n] = unhexTable[raw[i+1]]<<4 | unhexTable[raw[i+2]]
		n, i = n+1, i+3
		if i == len(raw) {
			break
		}
		if c = raw[i]; c != '%' {
			if n < len(buf) { // a byte after an escape, as in "%C3A"
				buf[n] = c
				n, i = n+1, i+1
			}
			continue
		}
		// A run of escapes after it, four (twelve bytes) a step, where the
		// next twelve bytes look like four.
		if i+12 > len(raw) || raw[i+3] != '%' || raw[i+6] != '%' || raw[i+9] != '%' {
			continue
		}
		d, e := buf[n:], raw[i:]
		for len(d) >= 4 && len(e) >= 12 {
			h1, l1, h2, l2 := unhexTable[e[1]], unhexTable[e[2]], unhexTable[e[4]], unhexTable[e[5]]
			h3, l3, h4, l4 := unhexTable[e[7]], unhexTable[e[8]], unhexTable[e[10]], unhexTable[e[11]]
			if e[0] != '%' || e[3] != '%' || e[6] != '%' || e[9] != '%' || h1|l1|h2|l2|h3|l3|h4|l4 > 0xf {
				break
			}
			d[0], d[1], d[2], d[3] = h1<<4|l1, h2<<4|l2, h3<<4|l3, h4<<4|l4
			d, e = d[4:], e[12:]
		}
		k := len(buf) - n - len(d)
		n, i = n+k, i+3*k
	}
	return n, i
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

// classesOf returns the byteClass of every byte of b, ORed, eight bytes a
// step: a byte >= 0x80 is nonASCII; one < 0x20, or 0x7f, a controlByte.
func classesOf(b []byte) byte {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	var high, ctl uint64
	for ; len(b) >= 8; b = b[8:] {
		w := binary.LittleEndian.Uint64(b)
		del := w ^ 0x7f*ones
		high |= w
		// A borrow makes false hits only above a true one (or a byte
		// >= 0x80, which ^w masks): the OR is exact.
		ctl |= (w-0x20*ones)&^w | (del-ones)&^del
	}
	var classes byte
	if high&highs != 0 {
		classes |= nonASCII
	}
	if ctl&highs != 0 {
		classes |= controlByte
	}
	for _, c := range b {
		classes |= byteClass[c]
	}
	return classes
}

// byteClass tells cleanBytes which checks a byte calls for: none for
// printable ASCII.
var byteClass = func() (t [256]byte) {
	for c := range t {
		switch {
		case c < 0x20 || c == 0x7f:
			t[c] = controlByte
		case c >= 0x80:
			t[c] = nonASCII
		}
	}
	return t
}()

// validNoC1 reports whether b is valid UTF-8 without the C1 controls
// (U+0080-U+009F, 0xc2 0x80-0x9f).
func validNoC1(b []byte) bool {
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			i++
			continue
		}
		// Runs of characters of one length, eight bytes a step.
		j := i
		switch {
		case 0xc3 <= c && c <= 0xdf: // accented Latin, Greek, Cyrillic
			for j+8 <= len(b) && fourLatin(binary.LittleEndian.Uint64(b[j:])) {
				j += 8
			}
			if j == i && i+1 < len(b) && b[i+1]&0xc0 == 0x80 {
				j += 2 // one, inline
			}
		case 0xe0 <= c && c <= 0xef: // CJK, the euro sign
			for j+8 <= len(b) && twoThreeByte(binary.LittleEndian.Uint64(b[j:])) {
				j += 6
			}
			if j == i && c != 0xe0 && c != 0xed && i+2 < len(b) && b[i+1]&0xc0 == 0x80 && b[i+2]&0xc0 == 0x80 {
				j += 3 // one, inline
			}
		case 0xf0 <= c && c <= 0xf4: // emoji
			for j+8 <= len(b) && twoFourByte(binary.LittleEndian.Uint64(b[j:])) {
				j += 8
			}
		}
		if j > i {
			i = j
			continue
		}
		n, ok := utf8Char(b[i:])
		if !ok {
			return false
		}
		i += n
	}
	return true
}

// utf8Char returns the length of the character that b (b[0] >= 0x80)
// starts with and whether it is kept: valid UTF-8, not a C1 control. An
// invalid sequence is one byte long, as for utf8.DecodeRune; a C1 control
// two. Inline, it is several times cheaper than utf8.DecodeRune.
func utf8Char(b []byte) (int, bool) {
	c := b[0]
	switch {
	case c < 0xc2 || c > 0xf4: // a stray continuation byte, an overlong lead, past U+10FFFF
		return 1, false
	case c <= 0xdf:
		if len(b) < 2 || b[1]&0xc0 != 0x80 {
			return 1, false
		}
		return 2, c != 0xc2 || b[1] >= 0xa0
	case c <= 0xef:
		if len(b) < 3 || b[1]&0xc0 != 0x80 || b[2]&0xc0 != 0x80 ||
			c == 0xe0 && b[1] < 0xa0 || c == 0xed && b[1] > 0x9f { // overlong; a surrogate
			return 1, false
		}
		return 3, true
	default:
		if len(b) < 4 || b[1]&0xc0 != 0x80 || b[2]&0xc0 != 0x80 || b[3]&0xc0 != 0x80 ||
			c == 0xf0 && b[1] < 0x90 || c == 0xf4 && b[1] > 0x8f { // overlong; past U+10FFFF
			return 1, false
		}
		return 4, true
	}
}

// fourLatin reports whether the 8 bytes of x (little-endian) are four
// two-byte characters U+00C0-U+07FF: each lead byte 0xc3-0xdf, each second
// byte 0x80-0xbf. That is valid UTF-8 without C1 controls (0xc2 0x80-0x9f),
// checked eight bytes a step for the accented text escapes make.
func fourLatin(x uint64) bool {
	const (
		form  = 0xc0e0c0e0c0e0c0e0 // the bits that make 110xxxxx 10xxxxxx
		pairs = 0x80c080c080c080c0
		low5  = 0x001f001f001f001f // a lead byte's payload: at least 3 (0xc3)
		plus  = 0x001d001d001d001d
		carry = 0x0020002000200020
	)
	return x&form == pairs && (x&low5+plus)&carry == carry
}

// twoThreeByte reports whether the first 6 bytes of x (little-endian) are
// two valid three-byte characters: U+0800-U+FFFF without the surrogates
// U+D800-U+DFFF.
func twoThreeByte(x uint64) bool {
	const form, want = 0xc0c0f0c0c0f0, 0x8080e08080e0 // 1110xxxx 10xxxxxx 10xxxxxx, twice
	if x&form != want {
		return false
	}
	// A character's code point over 64: at least 0x20, not 0x360-0x37f.
	v0 := x&0x0f<<6 | x>>8&0x3f
	v1 := x>>24&0x0f<<6 | x>>32&0x3f
	return v0 >= 0x20 && v1 >= 0x20 && v0-0x360 >= 0x20 && v1-0x360 >= 0x20
}

// twoFourByte reports whether the 8 bytes of x (little-endian) are two
// valid four-byte characters: U+10000-U+10FFFF.
func twoFourByte(x uint64) bool {
	const form, want = 0xc0c0c0f8c0c0c0f8, 0x808080f0808080f0 // 11110xxx 10xxxxxx 10xxxxxx 10xxxxxx, twice
	if x&form != want {
		return false
	}
	// A character's code point over 4096: 0x10-0x10f.
	v0 := x&0x07<<6 | x>>8&0x3f
	v1 := x>>32&0x07<<6 | x>>40&0x3f
	return v0-0x10 <= 0xff && v1-0x10 <= 0xff
}

const (
	controlByte = 1 << iota // C0 or DEL: rewritten
	nonASCII                // UTF-8 to validate, C1 controls included
)

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
	return strings.Clone(cleanBytes(b, 0, maxBytes, classesOf(b), &a))
}

// cleanBytes is cleanValue for bytes b that may be reused, with the result
// in a. b[:clean] (clean <= maxBytes) is known to be whole characters kept
// as they are; classes is the byteClass of every byte after it, ORed. Valid
// UTF-8 without control characters, the common case, is only cut; anything
// else is rewritten rune by rune.
func cleanBytes(b []byte, clean, maxBytes int, classes byte, a *arena) string {
	if classes == 0 { // printable ASCII after the clean characters: only cut
		return a.string(b[:min(len(b), maxBytes)])
	}
	if n, ok := cleanPrefix(b[clean:], maxBytes-clean, classes); ok {
		return a.string(b[:clean+n])
	}
	out := a.reserve(maxBytes)[:maxBytes]
	copy(out, b[:clean])
	w, _ := rewriteRunes(out[clean:], b[clean:], len(b)-clean)
	return a.commit(out[:clean+w])
}

// rewriteRunes writes b to dst rune by rune, each invalid byte and control
// character (C0, DEL, C1) as U+FFFD, as far as whole characters fit in dst,
// for the characters that start before stop. It returns how many bytes it
// wrote and where in b it stopped.
func rewriteRunes(dst, b []byte, stop int) (w, i int) {
	for i < stop {
		c := b[i]
		if 0x20 <= c && c < 0x7f { // printable ASCII
			if w == len(dst) {
				break
			}
			dst[w] = c
			w, i = w+1, i+1
			continue
		}
		n := 1 // C0, DEL and bytes no character starts with are replaced
		if 0xc2 <= c && c <= 0xdf && i+1 < len(b) && b[i+1]&0xc0 == 0x80 {
			// Two bytes, inline: kept unless a C1 control (0xc2 0x80-0x9f).
			if c != 0xc2 || b[i+1] >= 0xa0 {
				if w+2 > len(dst) {
					break
				}
				dst[w], dst[w+1] = c, b[i+1]
				w, i = w+2, i+2
				continue
			}
			n = 2
		} else if 0xe0 <= c && c <= 0xf4 {
			var ok bool
			if n, ok = utf8Char(b[i:]); ok {
				if w+n > len(dst) {
					break
				}
				copy(dst[w:w+n], b[i:i+n]) // a valid character is its own encoding
				w, i = w+n, i+n
				continue
			}
		}
		if w+3 > len(dst) {
			break
		}
		dst[w], dst[w+1], dst[w+2] = 0xef, 0xbf, 0xbd // U+FFFD
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

// cleanPrefix returns the length of the longest prefix of b of at most
// maxBytes that ends on a character boundary, and whether b up to that cut
// is valid UTF-8 without control characters (C0, DEL, C1): then b[:n] is
// what rewriting b rune by rune would make. classes is as for cleanBytes.
func cleanPrefix(b []byte, maxBytes int, classes byte) (int, bool) {
	if classes&controlByte != 0 {
		return 0, false
	}
	n := len(b)
	if n > maxBytes {
		// Cut at maxBytes, or before a character that starts before it
		// and ends after it.
		n = maxBytes
		start := n
		for start > 0 && n-start < utf8.UTFMax-1 && b[start]&0xc0 == 0x80 {
			start--
		}
		if r, size := utf8.DecodeRune(b[start:]); (r != utf8.RuneError || size > 1) && start+size > maxBytes {
			n = start
		}
	}
	if classes&nonASCII != 0 && !validNoC1(b[:n]) {
		return 0, false
	}
	return n, true
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

	ctx context.Context // context.Background() with the labels
	set pprof.LabelSet

	adm     atomic.Pointer[admission] // what the registry made of it, while current
	renamed atomic.Pointer[renaming]  // the last set a naming hook turned it into
	baggage atomic.Pointer[string]    // the labels encoded for a baggage header, once asked for
}

// renaming records that a naming hook turned a set's k6_name into name.
type renaming struct {
	name string
	set  *labelSet
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

func (s *labelSet) equal(cfg uint64, labels []label) bool {
	if s.cfg != cfg || len(s.labels) != len(labels) {
		return false
	}
	for i := range labels {
		if s.labels[i] != labels[i] {
			return false
		}
	}
	return true
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
