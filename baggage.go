package k6labels

import (
	"math/bits"
	"strings"
	"unicode/utf8"
)

// The W3C Baggage limits: a receiver must handle at least this much, and may
// drop whole members beyond it. The parser examines no more, so its work per
// request is bounded whatever a client sends.
const (
	// MaxBaggageBytes is how many bytes of baggage, over all header lines
	// together, are examined. A member cut by this limit is dropped whole.
	MaxBaggageBytes = 8192
	// MaxBaggageMembers is how many list members are examined, and how many
	// header lines: 64 members never need more lines, and without a cap on
	// lines thousands of empty ones would each cost a step.
	MaxBaggageMembers = 64
)

// A Member is one baggage list member: its key as sent and its value,
// percent-decoded.
type Member struct {
	Key   string
	Value string
}

// scanner walks the members of one or more baggage header lines without
// allocating. Keys and raw values are substrings of the lines.
//
// It is lenient where the meaning is still clear, because k6 sends values
// unencoded: a value may hold spaces, '=' and any other byte except ',' (which
// ends the member) and ';' (which starts properties, ignored). A member with
// no '=' or with an empty key is malformed; it is skipped and the scan goes on.
type scanner struct {
	lines     []string
	line      string // the rest of the current line, within budget
	budget    int    // bytes still allowed after line
	members   int    // members returned or skipped so far
	lineCount int    // lines taken from lines so far
	truncated bool   // a limit cut the list
	member    string // the last member returned, as sent (properties kept), for MergeBaggage
}

func newScanner(lines []string) scanner {
	return scanner{lines: lines, budget: MaxBaggageBytes}
}

// next returns the next member. ok is false for a malformed member; more is
// false when the list (or the budget) is exhausted.
func (s *scanner) next() (key, rawValue string, ok, more bool) {
	for {
		for s.line == "" {
			if len(s.lines) == 0 || s.budget == 0 || s.lineCount == MaxBaggageMembers {
				if len(s.lines) > 0 {
					s.truncated = true
				}
				return "", "", false, false
			}
			l := s.lines[0]
			s.lines = s.lines[1:]
			s.lineCount++
			if len(l) > s.budget {
				// Keep only whole members that end inside the budget: cut after
				// the last ',' in budget (the byte at budget itself may be one).
				s.truncated = true
				cut := lastComma(l[:s.budget+1])
				if cut < 0 {
					cut = 0
				}
				l = l[:cut]
				s.lines = nil
			}
			s.budget -= min(max(len(l), 1), s.budget) // an empty line costs a byte too: the "," joining it
			s.line = l
		}
		// Skip empty list elements and the spaces around them in one tight
		// loop: a line of commas must not cost a step per element.
		s.line = s.line[separators(s.line):]
		if s.line == "" {
			continue
		}
		var m string
		if i := strings.IndexByte(s.line, ','); i >= 0 {
			m, s.line = s.line[:i], s.line[i+1:]
		} else {
			m, s.line = s.line, ""
		}
		m = trimOWS(m)
		if m == "" {
			continue // empty list element, as in "a=1,,b=2": not a member
		}
		if s.members == MaxBaggageMembers {
			s.truncated = true
			s.lines, s.line = nil, ""
			return "", "", false, false
		}
		s.members++
		s.member = m
		if i := strings.IndexByte(m, ';'); i >= 0 {
			m = m[:i] // properties carry nothing we use
		}
		eq := strings.IndexByte(m, '=')
		if eq < 0 {
			return "", "", false, true
		}
		key = trimOWS(m[:eq])
		if key == "" {
			return "", "", false, true
		}
		return key, trimOWS(m[eq+1:]), true, true
	}
}

// separators returns the length of the run of ',', ' ' and '\t' that s
// starts with, eight bytes a step: a header of commas must cost no more
// than one of members.
func separators(s string) int {
	const ones, lows, highs = 0x0101010101010101, 0x7f7f7f7f7f7f7f7f, 0x8080808080808080
	// nonZero has the high bit of each byte of x that is not zero: the low
	// seven bits plus 0x7f carry into the high bit unless all are zero.
	nonZero := func(x uint64) uint64 { return ((x & lows) + lows | x) & highs }
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := s[i : i+8] // constant indexes below: one 8-byte load
		v := uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
			uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
		if v != ones*',' && nonZero(v^(ones*','))&nonZero(v^(ones*' '))&nonZero(v^(ones*'\t')) != 0 {
			break
		}
	}
	for i < len(s) && (s[i] == ',' || s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

// trimOWS removes the spaces and tabs the grammar allows around tokens.
func trimOWS(s string) string {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	for len(s) > 0 && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return s
}

// ParseBaggage returns the members of the baggage header lines in the order
// they were sent, with values percent-decoded. It applies the same rules as
// the middleware: malformed members are skipped, an invalid percent escape is
// kept as it was written, bytes that are not UTF-8 become U+FFFD, properties
// are dropped, and at most [MaxBaggageBytes] and [MaxBaggageMembers] are
// examined. Duplicate keys are all returned; the middleware keeps the last.
func ParseBaggage(lines ...string) []Member {
	var out []Member
	s := newScanner(lines)
	for {
		key, raw, ok, more := s.next()
		if !more {
			return out
		}
		if ok {
			out = append(out, Member{Key: key, Value: decodeValue(raw)})
		}
	}
}

// isPlain reports whether s needs no decoding: printable ASCII without '%'.
func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '%' {
			return false
		}
	}
	return true
}

// decodeValue percent-decodes s. An escape that is not '%' and two hex digits
// is kept as written: k6 sends raw URLs, where a bare '%' is more likely text
// than a broken escape. Invalid UTF-8 in the result becomes U+FFFD, as the
// specification asks.
func decodeValue(s string) string {
	if isPlain(s) {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
			continue
		}
		b = append(b, c)
	}
	if utf8.Valid(b) {
		return string(b)
	}
	return string([]rune(string(b))) // one U+FFFD per invalid byte, as documented (and as OpenTelemetry does)
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

// isToken reports whether s is an RFC 7230 token, as a baggage key must be.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// needsEscape reports whether c must be percent-encoded in a baggage value:
// it is outside the baggage-octet set, or it is '%' itself.
func needsEscape(c byte) bool {
	return c <= 0x20 || c >= 0x7f || c == '"' || c == ',' || c == ';' || c == '\\' || c == '%'
}

// appendEncoded appends s to b percent-encoded as a baggage value.
func appendEncoded(b []byte, s string) []byte {
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		c := s[i]
		if needsEscape(c) {
			b = append(b, '%', hex[c>>4], hex[c&0xf])
			continue
		}
		b = append(b, c)
	}
	return b
}

// lastComma is strings.LastIndexByte(s, ','), eight bytes a step: the
// standard library's is a byte loop, and the cut of an over-long line
// may look back through most of 8 KB.
func lastComma(s string) int {
	const low7, highs = 0x7f7f7f7f7f7f7f7f, 0x8080808080808080
	i := len(s)
	for ; i >= 8; i -= 8 {
		w := s[i-8 : i]
		x := (uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
			uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56) ^ ','*0x0101010101010101
		// The top bit of each byte that is zero: exact, no carry leaves
		// a byte (0x7f + 0x7f < 0x100).
		if m := ^((x&low7 + low7) | x) & highs; m != 0 {
			return i - 8 + (63-bits.LeadingZeros64(m))/8
		}
	}
	return strings.LastIndexByte(s[:i], ',')
}
