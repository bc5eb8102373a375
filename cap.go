package k6labels

import (
	"strings"

	"github.com/k6labels/k6labels/internal/w3c"
)

// The per-request label cap ([WithMaxLabels]) is one rule, applied here for
// every adapter: the net/http handler, the gRPC interceptors, fasthttp and
// k6otel.Context all reach it through [Labeler.Labels]. It keeps
//
//   - k6's own members first: k6.test_run_id, then k6.scenario, then
//     k6.name, whatever a script sent before them (k6's helper appends its
//     three members after the script's own baggage);
//   - then the other k6 members in label-name order.
//
// The result depends only on the set of members, not on their order, so a
// header gives the same labels whether it is read as sent or rebuilt from
// OpenTelemetry's baggage, which is a map. A member whose value is empty or
// "undefined" holds no place: it only removes an earlier value of its name.

// capped is the k6 members of one request that the cap keeps so far,
// sorted by label name in keys[:n] and raws[:n]. The keys and raw values
// point into the header lines; nothing is copied until the cap is decided.
type capped struct {
	n    int
	keys [maxLabelsLimit]string
	raws [maxLabelsLimit]string
}

// add offers the member key=raw (key a label key, see isLabelKey) under a
// cap of limit labels and returns how many members it skipped: 1 if this
// one, or one it displaced, does not fit; 0 otherwise. A key that makes
// the name of a kept member replaces that member's value (the last wins).
func (c *capped) add(key, raw string, limit int) (skipped int) {
	dead := raw == "" || raw == undefinedValue
	i := 0
find:
	for ; i < c.n; i++ {
		switch cmpNames(c.keys[i], key) {
		case 0:
			if dead {
				c.remove(i)
			} else {
				c.keys[i], c.raws[i] = key, raw
			}
			return 0
		case 1:
			break find
		}
	}
	if dead {
		return 0
	}
	if c.n >= limit {
		w := c.last()
		if !outranks(key, c.keys[w]) {
			return 1
		}
		c.remove(w)
		skipped = 1
		if w < i {
			i--
		}
	}
	copy(c.keys[i+1:c.n+1], c.keys[i:c.n])
	copy(c.raws[i+1:c.n+1], c.raws[i:c.n])
	c.keys[i], c.raws[i] = key, raw
	c.n++
	return skipped
}

// remove takes out member i.
func (c *capped) remove(i int) {
	copy(c.keys[i:c.n], c.keys[i+1:c.n])
	copy(c.raws[i:c.n], c.raws[i+1:c.n])
	c.n--
	c.keys[c.n], c.raws[c.n] = "", ""
}

// last returns the index of the kept member that the cap gives up first.
func (c *capped) last() int {
	w := 0
	for i := 1; i < c.n; i++ {
		if outranks(c.keys[w], c.keys[i]) {
			w = i
		}
	}
	return w
}

// outranks reports whether k6 key a keeps its place under the cap before
// key b: k6's own three first, in the order of k6Names, then by name.
func outranks(a, b string) bool {
	ra, rb := coreRank(a), coreRank(b)
	if ra != rb {
		return ra < rb
	}
	return cmpNames(a, b) < 0
}

// k6Keys are the keys of k6Names.
var k6Keys = [...]string{"k6.test_run_id", "k6.scenario", "k6.name"}

// coreRank returns the index in k6Names of the name key makes, or
// len(k6Names) for any other name.
func coreRank(key string) int {
	for i, k := range k6Keys {
		if len(key) == len(k) && cmpNames(key, k) == 0 {
			return i
		}
	}
	return len(k6Names)
}

// isLabelKey reports whether key makes a label name (see labelName).
func isLabelKey(key string) bool {
	return len(key) > len("k6.") && len(key) <= maxNameBytes && strings.HasPrefix(key, "k6.")
}

// cmpNames compares the label names that label keys a and b make, as
// strings compare, without building them: -1, 0 or +1.
func cmpNames(a, b string) int {
	if a == b {
		return 0
	}
	a, b = a[len("k6."):], b[len("k6."):]
	for i := commonPrefix(a, b); i < len(a) && i < len(b); i++ {
		if x, y := w3c.NameChar(a[i]), w3c.NameChar(b[i]); x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	switch {
	case len(a) < len(b):
		return -1
	case len(a) > len(b):
		return 1
	}
	return 0
}

// commonPrefix returns the length of the longest common prefix of a and b,
// halving with string equality, which compares many bytes a step: keys of
// 128 bytes that differ late cost a few compares, not 128 byte steps
// (BenchmarkCrafted's longKeys: 192k instructions, 525k with a byte loop,
// Valgrind; the rows of ordinary keys do not change).
func commonPrefix(a, b string) int {
	lo, hi := 0, min(len(a), len(b))
	for lo < hi {
		m := (lo + hi + 1) / 2
		if a[lo:m] == b[lo:m] {
			lo = m
		} else {
			hi = m - 1
		}
	}
	return lo
}

// sameName reports whether baggage keys a and b are the same key: equal,
// or two k6 keys that make the same label name ("k6.my-tag", "k6.my_tag").
func sameName(a, b string) bool {
	return a == b || isLabelKey(a) && isLabelKey(b) && len(a) == len(b) && cmpNames(a, b) == 0
}
