package w3c

import (
	"strings"
	"testing"
)

// separators skips what strings.TrimLeft(s, ", \t") trims, for every
// string of up to six bytes of ',', ' ', '\t' and 'a': runs of commas of
// odd and even lengths, and the other separators before, inside and after
// them.
func TestSeparators(t *testing.T) {
	const alphabet = ", \ta"
	var walk func(s string)
	walk = func(s string) {
		if got, want := separators(s), len(s)-len(strings.TrimLeft(s, ", \t")); got != want {
			t.Errorf("separators(%q) = %d, want %d", s, got, want)
		}
		if len(s) < 6 {
			for i := range len(alphabet) {
				walk(s + alphabet[i:i+1])
			}
		}
	}
	walk("")
}
