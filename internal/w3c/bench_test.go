package w3c

import (
	"strings"
	"testing"
)

// The plain version of each fast path: what it would be without its trick.
// The tests check the fast path against it; the benchmarks time both
// ("impl=fast", "impl=plain"), for benchstat.

func lastCommaPlain(s string) int { return strings.LastIndexByte(s, ',') }

// k6Line is a line k6's helper sends for a request named by its URL.
const k6Line = "k6.test_run_id=1733482911,k6.scenario=rides,k6.name=http://127.0.0.1:18080/car?vehicle_id=7&city=berlin"

// sink keeps results alive.
var sink int

func benchInts(b *testing.B, inputs []string, impls map[string]func(string) int) {
	for _, in := range inputs {
		for name, f := range impls {
			b.Run("in="+label(in)+"/impl="+name, func(b *testing.B) {
				for b.Loop() {
					sink += f(in)
				}
			})
		}
	}
}

// label names a benchmark input by its first bytes and its length.
func label(s string) string {
	r := strings.NewReplacer(",", "comma", "=", "eq", "/", "", "?", "", ":", "", " ", "sp", "%", "pct")
	return r.Replace(s[:min(len(s), 6)]) + "_" + itoa(len(s))
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// BenchmarkLastComma: the look back from a k6 line's '?' to the ',' before
// its k6.name (what every request's cache lookup does), from the end of a
// k6 line, and over 8 KB without a comma.
func BenchmarkLastComma(b *testing.B) {
	q := strings.IndexByte(k6Line, '?')
	benchInts(b, []string{k6Line[:q], k6Line, strings.Repeat("v", 8192)}, map[string]func(string) int{
		"fast": LastComma, "plain": lastCommaPlain,
	})
}

// valueInputs are raw values that need decoding: what k6 sends for tags
// and URLs with characters beyond ASCII (raw, as k6 sends them, or
// escaped), then values built to be expensive, longer than the cap.
var valueInputs = []struct{ name, raw string }{
	{"urlRawUTF8", "http://127.0.0.1:18080/café/7"},
	{"tagRawUTF8", "Zürich"},
	{"urlEscaped", "http://127.0.0.1:18080/car/%C3%A9t%C3%A9"},
	{"e9x170", strings.Repeat("%C3%A9", 170)},
	{"emojiAx84", strings.Repeat("%F0%9F%98%80a", 84)},
	{"c1Ax157", strings.Repeat("%C2%85a", 157)},
	{"euroFFx80", strings.Repeat("%E2%82%AC%FF", 80)},
}

// BenchmarkValue decodes and cleans a value under the default cap.
func BenchmarkValue(b *testing.B) {
	for _, in := range valueInputs {
		b.Run("in="+in.name, func(b *testing.B) {
			for b.Loop() {
				var a Arena
				sink += len(a.Value(in.raw, defaultValueBytes))
			}
		})
	}
}

func queryMarkPlain(s string) int { return strings.IndexAny(s, "?#") }

// BenchmarkQueryMark: a k6 line (the '?' in its last member), and a k6
// line without a query string (k6.name is a tag).
func BenchmarkQueryMark(b *testing.B) {
	plain := "k6.test_run_id=1733482911,k6.scenario=rides,k6.name=get-car"
	benchInts(b, []string{k6Line, plain}, map[string]func(string) int{
		"fast": queryMark, "plain": queryMarkPlain,
	})
}
