package texttab

import (
	"errors"
	"strings"
	"testing"
)

func sample() *Table {
	t := New("row", "ms", "change")
	t.Add("/car", "5.422", "+1.0%")
	t.Add("/a|b", "0.1")
	return t
}

// TestText: the first column left-aligned, the others right-aligned, two
// spaces apart and indented by two; a short row padded.
func TestText(t *testing.T) {
	var b strings.Builder
	if err := sample().Write(&b, false); err != nil {
		t.Fatal(err)
	}
	want := "  row      ms  change\n  /car  5.422   +1.0%\n  /a|b    0.1\n"
	if b.String() != want {
		t.Errorf("text:\n%q\nwant\n%q", b.String(), want)
	}
}

// TestMarkdown: right-aligned columns but the first, | escaped.
func TestMarkdown(t *testing.T) {
	var b strings.Builder
	if err := sample().Write(&b, true); err != nil {
		t.Fatal(err)
	}
	want := "| row | ms | change |\n| --- | ---: | ---: |\n| /car | 5.422 | +1.0% |\n| /a\\|b | 0.1 |  |\n"
	if b.String() != want {
		t.Errorf("markdown:\n%q\nwant\n%q", b.String(), want)
	}
}

type failing struct{ n int }

func (f *failing) Write(p []byte) (int, error) {
	if f.n++; f.n > 1 {
		return 0, errors.New("disk full")
	}
	return len(p), nil
}

// TestWriteError: a failed write is returned, and nothing is written after.
func TestWriteError(t *testing.T) {
	for _, md := range []bool{false, true} {
		f := &failing{}
		if err := sample().Write(f, md); err == nil || err.Error() != "disk full" {
			t.Errorf("markdown %v: %v, want disk full", md, err)
		}
		if f.n != 2 {
			t.Errorf("markdown %v: %d writes, want none after the failed one", md, f.n)
		}
	}
}
