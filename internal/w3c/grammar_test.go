package w3c

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The byte tables agree with the grammar as its texts state it, for every
// byte: RFC 7230's tchar (a VCHAR that is no delimiter), W3C's
// baggage-octet ranges, and the label names Pyroscope accepts.
func TestGrammarTable(t *testing.T) {
	name := regexp.MustCompile(`^[a-zA-Z0-9_]$`)
	for c := range 256 {
		b := byte(c)
		vchar := 0x21 <= c && c <= 0x7e
		token := vchar && !strings.ContainsRune(`"(),/:;<=>?@[\]{}`, rune(c))
		octet := c == 0x21 || 0x23 <= c && c <= 0x2b || 0x2d <= c && c <= 0x3a || 0x3c <= c && c <= 0x5b || 0x5d <= c && c <= 0x7e
		if got := IsKey(string(b)); got != token {
			t.Errorf("IsKey(%q) = %v, want %v", b, got, token)
		}
		if got := IsValue(string(b)); got != (octet && b != '%') {
			t.Errorf("IsValue(%q) = %v, want %v", b, got, octet && b != '%')
		}
		if got := NeedsEscape(b); got != (!octet || b == '%') {
			t.Errorf("NeedsEscape(%q) = %v, want %v", b, got, !octet || b == '%')
		}
		want := byte('_')
		if name.Match([]byte{b}) {
			want = b
		}
		if got := NameChar(b); got != want {
			t.Errorf("NameChar(%q) = %q, want %q", b, got, want)
		}
		if got, want := IsPlain(string(b)), (vchar || b == ' ') && b != '%'; got != want {
			t.Errorf("IsPlain(%q) = %v, want %v", b, got, want)
		}
		_, err := strconv.ParseUint(string(b), 16, 8)
		if isHex(b) != (err == nil) {
			t.Errorf("isHex(%q) = %v", b, isHex(b))
		}
		if v, err := strconv.ParseUint(string(b), 16, 8); err == nil {
			if d, _ := decodeAt("%0"+string(b), 0); d != byte(v) {
				t.Errorf("decodeAt(%%0%c) = %#x, want %#x", b, d, v)
			}
			if d, _ := decodeAt("%"+string(b)+"0", 0); d != byte(v)<<4 {
				t.Errorf("decodeAt(%%%c0) = %#x, want %#x", b, d, byte(v)<<4)
			}
		}
	}
}

// Every byte that needs no escape is a baggage-octet, so what AppendEncoded
// makes of any bytes is a value, and decodes back to them.
func TestAppendEncoded(t *testing.T) {
	var all []byte
	for c := range 256 {
		all = append(all, byte(c))
	}
	enc := string(AppendEncoded(nil, string(all)))
	if !IsValue(enc) {
		t.Fatalf("AppendEncoded gave %q: not a value", enc)
	}
	got := make([]byte, len(enc))
	if got = got[:unescape(got, enc)]; string(got) != string(all) {
		t.Fatalf("AppendEncoded, decoded: % x", got)
	}
}

// The member grammar: keys, values with their escapes, properties.
func TestMemberKey(t *testing.T) {
	for _, c := range []struct {
		m, key string
		ok     bool
	}{
		{"k6.a=1", "k6.a", true}, {"k = v ;p;q=%41", "k", true}, {"k=", "k", true},
		{"k", "", false}, {"=v", "", false}, {"k=a b", "", false}, {"k=%4", "", false},
		{"k=%4G", "", false}, {"k=v;", "", false}, {"k=v;p=\"", "", false}, {"k\x80=v", "", false},
	} {
		if key, ok := MemberKey(c.m); key != c.key || ok != c.ok {
			t.Errorf("MemberKey(%q) = %q, %v, want %q, %v", c.m, key, ok, c.key, c.ok)
		}
	}
}

// LastComma's SWAR step gives what the plain version gives for every byte
// in every position of the eight-byte words it reads, before and after a
// comma.
func TestLastCommaEveryByte(t *testing.T) {
	for c := range 256 {
		for n := range 17 {
			for _, prefix := range []string{"", ",", ",xxxxxxxx"} {
				b := append([]byte(prefix), bytes.Repeat([]byte{'x'}, 17)...)
				b[len(prefix)+n] = byte(c)
				if got, want := LastComma(string(b)), lastCommaPlain(string(b)); got != want {
					t.Fatalf("LastComma(%q) = %d, want %d", b, got, want)
				}
			}
		}
	}
}

// LastComma finds what strings.LastIndexByte finds, with commas in every
// position among bytes that differ from ',' in one bit or that borrow.
func TestLastComma(t *testing.T) {
	for _, bg := range []byte{'a', '-', '+', 0x00, 0xac, 0xff, 0x2c ^ 0x80} {
		for n := range 26 {
			for first := -1; first < n; first++ {
				for second := first; second < n; second++ {
					b := bytes.Repeat([]byte{bg}, n)
					if first >= 0 {
						b[first], b[second] = ',', ','
					}
					if got, want := LastComma(string(b)), lastCommaPlain(string(b)); got != want {
						t.Fatalf("LastComma(%q) = %d, want %d", b, got, want)
					}
				}
			}
		}
	}
}

// queryMark finds what strings.IndexAny(s, "?#") finds, with either mark
// or both in every order and position.
func TestQueryMark(t *testing.T) {
	for n := range 12 {
		for i := -1; i < n; i++ {
			for j := -1; j < n; j++ {
				b := bytes.Repeat([]byte{'x'}, n)
				if i >= 0 {
					b[i] = '?'
				}
				if j >= 0 {
					b[j] = '#'
				}
				if got, want := queryMark(string(b)), queryMarkPlain(string(b)); got != want {
					t.Fatalf("queryMark(%q) = %d, want %d", b, got, want)
				}
			}
		}
	}
}
