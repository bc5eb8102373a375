package linecache

import (
	"strconv"
	"testing"
)

func newCache() *Cache[int] {
	c := new(Cache[int])
	c.Init()
	return c
}

// A slot whose hash and entry come from two different stores (two requests
// caching lines at once) never answers for the wrong line.
func TestSlotChecksItsEntry(t *testing.T) {
	t.Parallel()
	c := newCache()
	a := &Entry[int]{Cfg: 1, Line: "k6.name=a"}
	c.Put(a)
	if c.Get(1, a.Line) != a {
		t.Fatal("the stored line is not found")
	}
	if c.Get(2, a.Line) != nil {
		t.Fatal("the line is found under another config key")
	}
	for i := range c.slots {
		if c.slots[i].entry.Load() == a {
			c.slots[i].entry.Store(&Entry[int]{Cfg: 1, Line: "k6.name=b"}) // a's hash, b's entry
		}
	}
	if e := c.Get(1, a.Line); e != nil {
		t.Errorf("Get(%q) = the entry of %q", a.Line, e.Line)
	}
}

// A line is seen once, then again; the mark is never returned by Get and
// never takes the place of an entry.
func TestSeenOnce(t *testing.T) {
	t.Parallel()
	c := newCache()
	if c.SeenOnce(1, "x=1") {
		t.Fatal("a new line was seen before")
	}
	if c.Get(1, "x=1") != nil || c.Get(0, "x=1") != nil {
		t.Fatal("the mark of a line is returned as its entry")
	}
	if c.SeenOnce(2, "x=1") {
		t.Fatal("a line seen under another config key was seen before")
	}
	if !c.SeenOnce(1, "x=1") {
		t.Fatal("a line seen once was not seen before")
	}
	// Marks of other lines in the sets do not count.
	marked := newCache()
	for i := range Slots / 2 {
		if marked.SeenOnce(1, "y="+strconv.Itoa(i)) {
			t.Fatalf("line %d, new, was seen before", i)
		}
	}
	// Full sets: marks go nowhere, and entries stay.
	for i := range 4 * Slots {
		c.Put(&Entry[int]{Cfg: 1, Line: strconv.Itoa(i), Val: i})
	}
	var held int
	for i := range 4 * Slots {
		if e := c.Get(1, strconv.Itoa(i)); e != nil {
			if e.Val != i {
				t.Fatalf("line %d: entry of %d", i, e.Val)
			}
			held++
		}
	}
	for i := range Slots {
		c.SeenOnce(3, strconv.Itoa(i))
	}
	for i := range c.slots {
		if c.slots[i].entry.Load() == &c.once {
			t.Fatal("a mark took the place of an entry")
		}
	}
	if held != Slots {
		t.Errorf("a full cache holds %d lines, want %d", held, Slots)
	}
}
