// Package texttab writes tables of text cells as aligned columns for a
// terminal, or as GitHub-flavoured markdown: the first column
// left-aligned, the others right-aligned. Writes return their errors.
package texttab

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// A Table is a header and rows of cells.
type Table struct {
	Head []string
	Rows [][]string
}

// New returns an empty table with the given header.
func New(head ...string) *Table { return &Table{Head: head} }

// Add adds a row, padded with empty cells to the header's width.
func (t *Table) Add(cells ...string) {
	for len(cells) < len(t.Head) {
		cells = append(cells, "")
	}
	t.Rows = append(t.Rows, cells)
}

// Write writes t as markdown, or as text indented by two spaces with
// columns two spaces apart; it returns the first write error.
func (t *Table) Write(w io.Writer, markdown bool) error {
	s := &Sticky{W: w}
	if markdown {
		t.markdown(s)
	} else {
		t.text(s)
	}
	return s.Err
}

func (t *Table) markdown(w io.Writer) {
	line := func(cells []string) {
		out := make([]string, len(cells))
		for i, c := range cells {
			out[i] = strings.ReplaceAll(c, "|", `\|`)
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(out, " | "))
	}
	line(t.Head)
	seps := []string{"---"}
	for range t.Head[1:] {
		seps = append(seps, "---:")
	}
	fmt.Fprintf(w, "| %s |\n", strings.Join(seps, " | "))
	for _, r := range t.Rows {
		line(r)
	}
}

func (t *Table) text(w io.Writer) {
	all := append([][]string{t.Head}, t.Rows...)
	width := make([]int, len(t.Head))
	for _, r := range all {
		for i, c := range r {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	for _, r := range all {
		var b strings.Builder
		b.WriteString(" ")
		for i, c := range r {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			b.WriteString(" ")
			if i == 0 {
				b.WriteString(c + pad)
			} else {
				b.WriteString(" " + pad + c)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

// Sticky is a writer that keeps the first error of W: the writes after it
// write nothing and return it, so that a run of prints is checked once.
type Sticky struct {
	W   io.Writer
	Err error
}

// Write writes p to W unless an earlier write failed.
func (s *Sticky) Write(p []byte) (int, error) {
	if s.Err != nil {
		return 0, s.Err
	}
	n, err := s.W.Write(p)
	s.Err = err
	return n, err
}
