package w3c

import (
	"bytes"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// pick returns full under K6LABELS_SOAK=1 (as `make soak` sets), small
// otherwise: a spread sample of the same inputs, same assertions.
func pick(small, full int) int {
	if v, _ := strconv.ParseBool(os.Getenv("K6LABELS_SOAK")); v {
		return full
	}
	return small
}

// The smallest and the default value cap of the root package.
const minValueBytes, defaultValueBytes = 16, 256

// cleanRunes is what cleaning must give, written the plain way: every
// rune decoded, replaced if it is invalid or a control, and encoded again.
func cleanRunes(b []byte, maxBytes int) string {
	var out []byte
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r < 0x20 || 0x7f <= r && r < 0xa0 {
			r = utf8.RuneError
		}
		if len(out)+utf8.RuneLen(r) > maxBytes {
			break
		}
		out, b = utf8.AppendRune(out, r), b[size:]
	}
	return string(out)
}

// FuzzCleanValue: cleaning gives what rewriting every rune gives, for
// bytes known whole (cleanRaw) and for the start of a longer value
// (CleanValue, which checks only the bytes the cap can keep).
func FuzzCleanValue(f *testing.F) {
	for _, s := range []string{"café", "a\x01b", "\xc2\x85", "\xc2\xa0", "\xf0\x9f\x98\x80\xf0\x9f", "\xed\xa0\x80", "\x80\x80\x80\x80\x80", "é\xf5\x80\x80", "ééééé\xc2\x85éééé", "éééé\xc3", "€€€\xe2\x82", "\xed\xa0\x80€"} {
		f.Add([]byte(s), 3)
	}
	f.Fuzz(func(t *testing.T, b []byte, maxBytes int) {
		maxBytes = minValueBytes + abs(maxBytes)%64
		want := cleanRunes(b, maxBytes)
		if got := CleanValue(string(b), maxBytes); got != want {
			t.Fatalf("CleanValue(%q, %d) = %q, want %q", b, maxBytes, got, want)
		}
		if got := string(cleanRaw(string(b), maxBytes)); got != want {
			t.Fatalf("cleanRaw(%q, %d) = %q, want %q", b, maxBytes, got, want)
		}
	})
}

func abs(n int) int {
	if n < 0 {
		return -(n + 1)
	}
	return n
}

// FuzzValue: decoding only what the cap can use gives what decoding
// everything and rewriting every rune gives.
func FuzzValue(f *testing.F) {
	for _, s := range []string{"%C3%A9%C3%A9x", "%C2%85%C2%A0", "%E2%82%AC%C3", "%C3%C3%A9", "%A9%C3%A9", "a%zz%4", "%F0%9F%98%80%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9"} {
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, raw string, maxBytes int) {
		maxBytes = minValueBytes + abs(maxBytes)%64
		var a Arena
		if got, want := a.Value(raw, maxBytes), cleanRunes(decodeAll(raw), maxBytes); got != want {
			t.Fatalf("Value(%q, %d) = %q, want %q", raw, maxBytes, got, want)
		}
	})
}

// decodeAll decodes every escape of raw and cleans nothing, written
// without unescape's helpers.
func decodeAll(raw string) []byte {
	var all []byte
	for i := 0; i < len(raw); i++ {
		if raw[i] == '%' && i+2 < len(raw) {
			if v, err := strconv.ParseUint(raw[i+1:i+3], 16, 8); err == nil {
				all = append(all, byte(v))
				i += 2
				continue
			}
		}
		all = append(all, raw[i])
	}
	return all
}

// pieces are what the randomized tests build values of: clean and replaced
// characters, whole and cut, escaped and raw, bare '%' alone and in runs.
var pieces = []string{"%C3%A9", "é", "%C3", "A", "%C2%85", "%01", "\xff", "%E2%82%AC", "€", "%F0%9F%98%80", "%", "x", "%4G", "%E2%82", "%%", "%4", "%%41", "😀", "%ED%A0%80", "\xc2\x85"}

// randomValue joins n pieces picked by rng.
func randomValue(rng *rand.Rand, n int) string {
	var b strings.Builder
	for range n {
		b.WriteString(pieces[rng.IntN(len(pieces))])
	}
	return b.String()
}

// unescape, stopped at any number of bytes, gives the prefix of what
// decoding every escape in turn gives, and writes nothing past it.
func TestUnescape(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 50000 {
		raw := randomValue(rng, rng.IntN(60))
		all := decodeAll(raw)
		n := rng.IntN(len(all) + 3)
		out := append(make([]byte, n), "x"...)
		got := append(out[:unescape(out[:n], raw)], out[n:]...)
		want := append(all[:min(len(all), n):min(len(all), n)], "x"...)
		if !bytes.Equal(got, want) {
			t.Fatalf("unescape(%q, %d) = %q, want %q", raw, n, got, want)
		}
	}
}

// validClean is what cleaning must keep as it is: valid UTF-8 without C0
// controls, DEL or C1 controls.
func validClean(b []byte) bool {
	return utf8.Valid(b) && !strings.ContainsFunc(string(b), func(r rune) bool { return r < 0x20 || 0x7f <= r && r < 0xa0 })
}

// keeps reports whether cleaning leaves b as it is.
func keeps(b []byte) bool {
	return bytes.Equal(cleanRaw(string(b), 4*len(b)), b)
}

// Cleaning keeps exactly valid UTF-8 without control characters: every
// sequence of one to three bytes, four-byte ones with their last bytes at
// the edges of the ranges, and text of any mix of pieces; clean text cut
// by the cap is cut, never rewritten. Without K6LABELS_SOAK the sequences
// are every 61st (three bytes) and every 7th (four bytes): odd strides, so
// every byte value still comes in every position.
func TestCleanKeeps(t *testing.T) {
	step3, step4 := pick(61, 1), pick(7, 1)
	for x := 0; x < 1<<24; x += step3 {
		b := []byte{byte(x), byte(x >> 8), byte(x >> 16)}
		for size := 1; size <= 3; size++ {
			if got, want := keeps(b[:size]), validClean(b[:size]); got != want {
				t.Fatalf("clean(% x) keeps it: %v, want %v", b[:size], got, want)
			}
		}
	}
	edges := []byte{0x00, 0x20, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc2, 0xe0, 0xf0, 0xff}
	for x := 0; x < 1<<16; x += step4 {
		for _, c2 := range edges {
			for _, c3 := range edges {
				b := []byte{byte(x), byte(x >> 8), c2, c3}
				if got, want := keeps(b), validClean(b); got != want {
					t.Fatalf("clean(% x) keeps it: %v, want %v", b, got, want)
				}
			}
		}
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 50000 {
		text := decodeAll(randomValue(rng, rng.IntN(30)))
		if got, want := keeps(text), validClean(text); got != want {
			t.Fatalf("clean(% x) keeps it: %v, want %v", text, got, want)
		}
		if validClean(text) {
			for k := range text {
				if got := cleanRaw(string(text), k); !bytes.HasPrefix(text, got) || len(got) < k-3 {
					t.Fatalf("clean text % x cut at %d: % x", text, k, got)
				}
			}
		}
	}
}

// Decoding the bytes the cap can use gives what decoding everything and
// rewriting every rune gives, for values longer than the cap: clean and
// replaced text on either side of the cut, characters across it.
func TestValueCut(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		raw := randomValue(rng, 1+rng.IntN(200))
		for _, maxBytes := range []int{minValueBytes, 17, 40, defaultValueBytes} {
			var a Arena
			if got, want := a.Value(raw, maxBytes), cleanRunes(decodeAll(raw), maxBytes); got != want {
				t.Fatalf("Value(%q, %d) = %q, want %q", raw, maxBytes, got, want)
			}
		}
	}
}

// Cleaning gives what rewriting every rune gives for every lead and second
// byte, with the bytes after them at the edges of the continuation range,
// at every length from one to four bytes and before a character. Without
// K6LABELS_SOAK, every 23rd (lead, second byte) pair: every lead, and
// every second byte with some lead.
func TestCleanRunes(t *testing.T) {
	edges := []byte{0x00, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xff}
	for i := 0; i < 0x80*256; i += pick(23, 1) {
		c0, c1 := 0x80+i>>8, i&0xff
		for _, c2 := range edges {
			for _, c3 := range edges {
				full := []byte{byte(c0), byte(c1), c2, c3, 'a'}
				for size := 1; size <= 5; size++ {
					b := full[:size]
					if got, want := string(cleanRaw(string(b), 64)), cleanRunes(b, 64); got != want {
						t.Fatalf("cleanRaw(% x) = % x, want % x", b, got, want)
					}
				}
			}
		}
	}
}

// A value is cut before a character that the cap would cut, and only there.
func TestCleanCutsWholeChars(t *testing.T) {
	for _, c := range []struct {
		s    string
		max  int
		want string
	}{
		{"", 1, ""}, {"ab", 1, "a"}, {"aé", 2, "a"}, {"aé", 3, "aé"}, {"a€", 2, "a"}, {"a€", 3, "a"}, {"a€", 4, "a€"},
		{"😀", 1, ""}, {"😀", 3, ""}, {"😀", 4, "😀"}, {"\x80\x80", 5, "\uFFFD"}, {"a\xff", 4, "a\uFFFD"},
	} {
		if got := CleanValue(c.s, c.max); got != c.want {
			t.Errorf("CleanValue(%q, %d) = %q, want %q", c.s, c.max, got, c.want)
		}
	}
}

// The Arena hands out strings that stay as they were while it hands out
// more, in its store and once it has to allocate.
func TestArena(t *testing.T) {
	var a Arena
	var got, want []string
	for i := range 40 {
		v := strings.Repeat(string(rune('a'+i%26)), 100+i)
		got, want = append(got, a.String([]byte(v))), append(want, v)
		got, want = append(got, a.Value("%C3%A9"+v, 64)), append(want, ("é" + v)[:64])
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("string %d = %q, want %q", i, got[i], want[i])
		}
	}
}

// An Arena decodes a value at the largest cap, from a longer raw value,
// without allocating: it decodes into its own store.
func TestValueAllocs(t *testing.T) {
	raw := strings.Repeat("%C3%A9", MaxValueBytes)
	var a Arena
	if n := testing.AllocsPerRun(10, func() {
		a = Arena{}
		if v := a.Value(raw, MaxValueBytes); len(v) != MaxValueBytes {
			t.Fatalf("Value gave %d bytes, want %d", len(v), MaxValueBytes)
		}
	}); n != 0 {
		t.Errorf("Value allocates %v times", n)
	}
}
