package k6labels

import (
	"bytes"
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// craftedHeaders are 8 KB baggage headers built to be expensive, next to the
// ordinary ones they are compared with (issue: no header costs more than 3×
// a plain 8 KB header, and allocates no more than the worst ordinary one).
func craftedHeaders() []struct {
	name     string
	ordinary bool
	lines    []string
} {
	fill := func(member string) string { // as many copies as fit in 8 KB
		n := (MaxBaggageBytes + 1) / (len(member) + 1)
		return strings.TrimSuffix(strings.Repeat(member+",", n), ",")
	}
	maxValue := strings.Repeat("%C3%A9", maxValueBytesLimit/2)
	var maxLabels []string
	for i := range DefaultMaxLabels {
		maxLabels = append(maxLabels, "k6."+string(rune('a'+i))+"="+strings.Repeat("%C3%A9", 170))
	}
	// eight returns 8 maximal k6 labels, each value v.
	eight := func(v string) []string {
		var ms []string
		for i := range DefaultMaxLabels {
			ms = append(ms, "k6."+string(rune('a'+i))+"="+v)
		}
		return []string{strings.Join(ms, ",")}
	}
	var lines64 []string
	for range 64 {
		lines64 = append(lines64, "k6.scenario=s")
	}
	return []struct {
		name     string
		ordinary bool
		lines    []string
	}{
		{"plain8k", true, []string{fill("other=" + strings.Repeat("v", 120))}},
		{"k6plain8k", true, []string{"k6.test_run_id=1,k6.scenario=s,k6.name=" + strings.Repeat("n", 200) + "," + fill("other="+strings.Repeat("v", 120))}},
		{"jslib", true, []string{"k6.test_run_id=123,k6.scenario=default,k6.name=http://h:1/car"}},
		// A script's own tags, sent raw (UTF-8 as is) as k6 does, and
		// other members after them.
		{"k6tags8k", true, []string{"k6.test_run_id=123,k6.scenario=default,k6.name=http://h:1/café,k6.group=::checkout,k6.city=Zürich," + fill("other="+strings.Repeat("v", 120))}},
		{"dupKeysFF", false, []string{fill("k6.a=" + strings.Repeat("%FF", 40))}},
		{"oneValueFF", false, []string{"k6.a=" + strings.Repeat("%FF", (MaxBaggageBytes-5)/3)}},
		{"commas", false, []string{strings.Repeat(",", MaxBaggageBytes)}},
		{"maxLabels", false, []string{strings.Join(maxLabels, ",")}},
		{"maxValueUTF8", false, []string{"k6.a=" + maxValue}},
		{"lines64", false, lines64},
		{"manyNames", false, []string{fill("k6.x" + strings.Repeat("y", 20) + "=v")}},
		// Keys as long as a name may be, eight names in turn: each member's
		// name is built and compared at full length.
		{"longKeys", false, []string{longKeys()}},
		// 8 maximal labels whose bytes defeat the fast paths: an escape
		// and a byte in turn, invalid escapes, bare '%', C1 and C0
		// controls, raw invalid bytes, three- and four-byte characters.
		{"mixC3A", false, eight(strings.Repeat("%C3A", 200))},
		{"bad4G", false, eight(strings.Repeat("%4G", 300))},
		{"pctOnly", false, eight(strings.Repeat("%", 900))},
		{"c1NEL", false, eight(strings.Repeat("%C2%85", 170))},
		{"ctlEsc", false, eight(strings.Repeat("%01", 300))},
		{"rawFF", false, eight(strings.Repeat("\xff", 900))},
		{"euro", false, eight(strings.Repeat("%E2%82%AC", 120))},
		{"emoji", false, eight(strings.Repeat("%F0%9F%98%80", 90))},
		// Short runs of escapes between other bytes, which no step of
		// four or eight bytes covers.
		{"e9e9A", false, eight(strings.Repeat("%C3%A9%C3%A9A", 84))},
		{"emojiA", false, eight(strings.Repeat("%F0%9F%98%80a", 84))},
		{"euroA", false, eight(strings.Repeat("%E2%82%ACa", 110))},
		{"pctPct41", false, eight(strings.Repeat("%%41", 275))},
		{"c1A", false, eight(strings.Repeat("%C2%85a", 157))},
		{"pctC3", false, eight(strings.Repeat("%C3%", 275))},
		// Characters that start as C1 controls do (0xc2) but are not
		// ones, three-byte ones whose lead (0xe0) needs a second check,
		// and characters of every length mixed, escaped and raw.
		{"copyC2", false, eight(strings.Repeat("%C2%A9", 170))},
		{"copyC2A", false, eight(strings.Repeat("%C2%A9a", 157))},
		{"e0A", false, eight(strings.Repeat("%E0%A0%80a", 110))},
		{"mix234", false, eight(strings.Repeat("a%C3%A9%E2%82%AC%F0%9F%98%80", 40))},
		{"rawMix", false, eight(strings.Repeat("aé€😀", 100))},
		// Rewritten: valid characters of three and four bytes between
		// bytes that are replaced, and a value clean for its first half
		// and replaced after it.
		{"euroFF", false, eight(strings.Repeat("%E2%82%AC%FF", 80))},
		{"emojiFF", false, eight(strings.Repeat("%F0%9F%98%80%FF", 65))},
		{"lateC1", false, eight(strings.Repeat("%F0%9F%98%80a", 27) + strings.Repeat("%C2%85a", 70))},
	}
}

// longKeys returns 8 KB of k6 members whose keys are maxNameBytes long,
// eight names in turn.
func longKeys() string {
	var ms []string
	for i, size := 0, 0; ; i++ {
		m := "k6." + strings.Repeat("x", maxNameBytes-4) + string(rune('a'+i%DefaultMaxLabels)) + "=v"
		if size += len(m) + 1; size > MaxBaggageBytes+1 {
			return strings.Join(ms, ",")
		}
		ms = append(ms, m)
	}
}

func BenchmarkCrafted(b *testing.B) {
	l := NewLabeler(WithRegistry(NewRegistry(DefaultWindow)))
	for _, h := range craftedHeaders() {
		b.Run("header="+h.name, func(b *testing.B) {
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				l.Context(ctx, h.lines)
			}
		})
	}
}

// TestCraftedAllocs: no crafted header allocates more than the worst
// ordinary one.
func TestCraftedAllocs(t *testing.T) {
	l := NewLabeler(WithRegistry(NewRegistry(DefaultWindow)))
	ctx := context.Background()
	worst := 0.0
	hs := craftedHeaders()
	allocs := make([]float64, len(hs))
	for i, h := range hs {
		allocs[i] = testing.AllocsPerRun(50, func() { l.Context(ctx, h.lines) })
		if h.ordinary {
			worst = max(worst, allocs[i])
		}
	}
	for i, h := range hs {
		t.Logf("%s: %.0f allocs", h.name, allocs[i])
		if allocs[i] > worst {
			t.Errorf("%s: %.0f allocs, the worst ordinary header makes %.0f", h.name, allocs[i], worst)
		}
	}
}

// cleanRunes is what cleanValue must give, written the plain way: every
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

// FuzzCleanBytes: the fast path gives what rewriting every rune gives, for
// bytes known whole (cleanBytes) and for the start of a longer value
// (cleanValue, which checks only the bytes the cap can keep).
func FuzzCleanBytes(f *testing.F) {
	for _, s := range []string{"café", "a\x01b", "\xc2\x85", "\xc2\xa0", "\xf0\x9f\x98\x80\xf0\x9f", "\xed\xa0\x80", "\x80\x80\x80\x80\x80", "é\xf5\x80\x80", "ééééé\xc2\x85éééé", "éééé\xc3", "€€€\xe2\x82", "\xed\xa0\x80€"} {
		f.Add([]byte(s), 3)
	}
	f.Fuzz(func(t *testing.T, b []byte, maxBytes int) {
		maxBytes = minValueBytes + abs(maxBytes)%64
		want := cleanRunes(b, maxBytes)
		if got := cleanValue(string(b), maxBytes); got != want {
			t.Fatalf("cleanValue(%q, %d) = %q, want %q", b, maxBytes, got, want)
		}
		var a arena
		if got := cleanBytes(b, 0, maxBytes, checkChars(b), false, &a); got != want {
			t.Fatalf("cleanBytes(%q, %d) = %q, want %q", b, maxBytes, got, want)
		}
	})
}

func abs(n int) int {
	if n < 0 {
		return -(n + 1)
	}
	return n
}

// FuzzDecodeClean: decoding only what the cap can use gives what decoding
// everything and rewriting every rune gives.
func FuzzDecodeClean(f *testing.F) {
	for _, s := range []string{"%C3%A9%C3%A9x", "%C2%85%C2%A0", "%E2%82%AC%C3", "%C3%C3%A9", "%A9%C3%A9", "a%zz%4", "%F0%9F%98%80%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9"} {
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, raw string, maxBytes int) {
		maxBytes = minValueBytes + abs(maxBytes)%64
		var a arena
		if got, want := decodeClean(raw, maxBytes, &a), cleanRunes(decodeAll(raw), maxBytes); got != want {
			t.Fatalf("decodeClean(%q, %d) = %q, want %q", raw, maxBytes, got, want)
		}
	})
}

// decodeAll decodes every escape of raw and cleans nothing.
func decodeAll(raw string) []byte {
	var all []byte
	for i := 0; i < len(raw); i++ {
		if raw[i] == '%' && i+2 < len(raw) && isHex(raw[i+1]) && isHex(raw[i+2]) {
			all = append(all, unhex(raw[i+1])<<4|unhex(raw[i+2]))
			i += 2
			continue
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

// decode, resumed anywhere and stopped by any size of buffer, gives the
// prefix of what decoding every escape in turn gives, and the character
// check's state after it.
func TestDecode(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 50000 {
		raw := randomValue(rng, rng.IntN(60))
		all := decodeAll(raw)
		buf := make([]byte, rng.IntN(len(all)+3))
		half := rng.IntN(len(buf) + 1)
		n, i, s := decode(buf[:half], 0, raw, 0, charsClean)
		n, _, s = decode(buf, n, raw, i, s)
		want := all[:min(len(all), len(buf))]
		if !bytes.Equal(buf[:n], want) {
			t.Fatalf("decode(%q) into %d bytes, resumed at %d = %q, want %q", raw, len(buf), half, buf[:n], want)
		}
		if w := checkChars(want); s != w {
			t.Fatalf("decode(%q) into %d bytes, resumed at %d: state %d, want %d", raw, len(buf), half, s, w)
		}
	}
}

// validClean is what the character check must accept: valid UTF-8 without
// C0 controls, DEL or C1 controls.
func validClean(b []byte) bool {
	return utf8.Valid(b) && !strings.ContainsFunc(string(b), func(r rune) bool { return r < 0x20 || 0x7f <= r && r < 0xa0 })
}

// The character check accepts exactly valid UTF-8 without control
// characters: every sequence of one to three bytes, four-byte ones with
// their last bytes at the edges of the ranges, and text of any mix of
// pieces. It rejects no prefix of such text. Without K6LABELS_SOAK the
// sequences are every 61st (three bytes) and every 7th (four bytes): odd
// strides, so every byte value still comes in every position.
func TestCharStep(t *testing.T) {
	step3, step4 := pick(61, 1), pick(7, 1)
	for x := 0; x < 1<<24; x += step3 {
		b := []byte{byte(x), byte(x >> 8), byte(x >> 16)}
		for size := 1; size <= 3; size++ {
			if got, want := checkChars(b[:size]) == charsClean, validClean(b[:size]); got != want {
				t.Fatalf("check(% x) accepts: %v, want %v", b[:size], got, want)
			}
		}
	}
	edges := []byte{0x00, 0x20, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc2, 0xe0, 0xf0, 0xff}
	for x := 0; x < 1<<16; x += step4 {
		for _, c2 := range edges {
			for _, c3 := range edges {
				b := []byte{byte(x), byte(x >> 8), c2, c3}
				if got, want := checkChars(b) == charsClean, validClean(b); got != want {
					t.Fatalf("check(% x) accepts: %v, want %v", b, got, want)
				}
			}
		}
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 50000 {
		text := decodeAll(randomValue(rng, rng.IntN(30)))
		if got, want := checkChars(text) == charsClean, validClean(text); got != want {
			t.Fatalf("check(% x) accepts: %v, want %v", text, got, want)
		}
		if validClean(text) {
			for k := range text {
				if checkChars(text[:k]) == charsRejected {
					t.Fatalf("check(% x) rejects a prefix of clean text % x", text[:k], text)
				}
			}
		}
	}
}

// decodeClean's two halves (the first half of the bytes it may need, then
// the rest only if the result is not full) give what decoding everything
// and rewriting every rune gives, for values long enough to need both:
// clean and replaced text on either side of the half, characters across it.
func TestDecodeCleanHalves(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		raw := randomValue(rng, 1+rng.IntN(200))
		for _, maxBytes := range []int{minValueBytes, 17, 40, DefaultMaxValueBytes} {
			var a arena
			if got, want := decodeClean(raw, maxBytes, &a), cleanRunes(decodeAll(raw), maxBytes); got != want {
				t.Fatalf("decodeClean(%q, %d) = %q, want %q", raw, maxBytes, got, want)
			}
		}
	}
}

// rewriteRunes gives what rewriting every rune gives for every lead and
// second byte, with the bytes after them at the edges of the continuation
// range, at every length from one to four bytes and before a character.
// Without K6LABELS_SOAK, every 23rd (lead, second byte) pair: every lead,
// and every second byte with some lead.
func TestRewriteRunes(t *testing.T) {
	edges := []byte{0x00, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xff}
	dst := make([]byte, 64)
	for i := 0; i < 0x80*256; i += pick(23, 1) {
		c0, c1 := 0x80+i>>8, i&0xff
		for _, c2 := range edges {
			for _, c3 := range edges {
				full := []byte{byte(c0), byte(c1), c2, c3, 'a'}
				for size := 1; size <= 5; size++ {
					b := full[:size]
					w, _ := rewriteRunes(dst, b, len(b))
					if want := cleanRunes(b, len(dst)); string(dst[:w]) != want {
						t.Fatalf("rewriteRunes(% x) = % x, want % x", b, dst[:w], want)
					}
				}
			}
		}
	}
}

// lastComma finds what strings.LastIndexByte finds, with commas in every
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
					if got, want := lastComma(string(b)), strings.LastIndexByte(string(b), ','); got != want {
						t.Fatalf("lastComma(%q) = %d, want %d", b, got, want)
					}
				}
			}
		}
	}
}

// wholeChars cuts a character that b ends inside of, and only that.
func TestWholeChars(t *testing.T) {
	for _, c := range []struct {
		b    string
		want int
	}{
		{"", 0}, {"a", 1}, {"aé"[:2], 1}, {"aé", 3}, {"a€"[:2], 1}, {"a€"[:3], 1}, {"a€", 4},
		{"😀"[:1], 0}, {"😀"[:3], 0}, {"😀", 4}, {"\x80\x80\x80\x80", 4}, {"a\xff", 2},
	} {
		if got := wholeChars([]byte(c.b)); got != c.want {
			t.Errorf("wholeChars(%q) = %d, want %d", c.b, got, c.want)
		}
	}
}
