package k6labels

import (
	"context"
	"strings"
	"testing"
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
