package w3c

import "strings"

// The W3C Baggage grammar (https://www.w3.org/TR/baggage/#definition), as
// byte classes, so that members can be checked one table lookup per byte:
//
//	list-member   = key OWS "=" OWS value *( OWS ";" OWS property )
//	property      = key OWS "=" OWS value / key OWS
//	key           = token ; RFC 7230, Section 3.2.6
//	value         = *baggage-octet
//	baggage-octet = %x21 / %x23-2B / %x2D-3A / %x3C-5B / %x5D-7E
//	OWS           = *( SP / HTAB )
//
// and "%" in a value starts a percent-encoded octet: it must be followed by
// two hex digits.
const (
	tokenChar    = 1 << iota // RFC 7230 tchar: "!#$%&'*+-.^_`|~", DIGIT, ALPHA
	baggageOctet             // baggage-octet
	nameByte                 // of a pprof label name Pyroscope accepts: [a-zA-Z0-9_]
	hexByte                  // a hex digit: [0-9a-fA-F], its value in the high four bits
)

// tchars are the RFC 7230 tchar bytes that are neither digits nor letters.
const tchars = "!#$%&'*+-.^_`|~"

var grammar = func() (t [256]uint8) {
	for c := range 256 {
		switch {
		case '0' <= c && c <= '9', 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
			t[c] |= tokenChar | nameByte
		case c == '_':
			t[c] |= nameByte
		}
		switch {
		case '0' <= c && c <= '9':
			t[c] |= hexByte | uint8(c-'0')<<4
		case 'a' <= c|0x20 && c|0x20 <= 'f': // c|0x20 is c in lower case
			t[c] |= hexByte | uint8(c|0x20-'a'+10)<<4
		}
		if strings.IndexByte(tchars, byte(c)) >= 0 {
			t[c] |= tokenChar
		}
		// %x21 / %x23-2B / %x2D-3A / %x3C-5B / %x5D-7E
		if c == 0x21 || 0x23 <= c && c <= 0x2B || 0x2D <= c && c <= 0x3A ||
			0x3C <= c && c <= 0x5B || 0x5D <= c && c <= 0x7E {
			t[c] |= baggageOctet
		}
	}
	return t
}()

// IsKey reports whether s is a key: a non-empty RFC 7230 token (the one
// key check of the module).
func IsKey(s string) bool {
	for i := 0; i < len(s); i++ {
		if grammar[s[i]]&tokenChar == 0 {
			return false
		}
	}
	return s != ""
}

// IsValue reports whether s is a value: baggage-octets only, every "%"
// followed by two hex digits.
func IsValue(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if grammar[c]&baggageOctet == 0 {
			return false
		}
		if c == '%' {
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return false
			}
			i += 2
		}
	}
	return true
}

// MemberKey returns the key of list-member m (OWS already trimmed around
// it) and whether m, properties included, follows the grammar above.
func MemberKey(m string) (key string, ok bool) {
	kv, props, hasProps := strings.Cut(m, ";")
	k, v, hasEq := strings.Cut(kv, "=")
	key = TrimOWS(k)
	if !hasEq || !IsKey(key) || !IsValue(TrimOWS(v)) {
		return "", false
	}
	for hasProps {
		var p string
		p, props, hasProps = strings.Cut(props, ";")
		pk, pv, hasValue := strings.Cut(p, "=")
		if !IsKey(TrimOWS(pk)) || hasValue && !IsValue(TrimOWS(pv)) {
			return "", false
		}
	}
	return key, true
}

// NameChar is the byte of a pprof label name that key byte c makes: c if
// it is in [a-zA-Z0-9_], else '_'.
func NameChar(c byte) byte {
	if grammar[c]&nameByte == 0 {
		return '_'
	}
	return c
}

// Name rewrites b in place into a label name: every byte outside
// [a-zA-Z0-9_] becomes '_'.
func Name(b []byte) {
	for i, c := range b {
		b[i] = NameChar(c)
	}
}

// NeedsEscape reports whether c must be percent-encoded in a baggage value:
// it is outside the baggage-octet set, or it is '%' itself.
func NeedsEscape(c byte) bool {
	return grammar[c]&baggageOctet == 0 || c == '%'
}

// AppendEncoded appends s to b percent-encoded as a baggage value: every
// byte NeedsEscape reports as "%XX", upper-case hex.
func AppendEncoded(b []byte, s string) []byte {
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		c := s[i]
		if NeedsEscape(c) {
			b = append(b, '%', hex[c>>4], hex[c&0xf])
			continue
		}
		b = append(b, c)
	}
	return b
}
