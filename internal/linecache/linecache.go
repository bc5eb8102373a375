// Package linecache caches what header lines come to, by line and config
// key, in a fixed number of slots: lookups take no lock and no allocation.
package linecache

import (
	"hash/maphash"
	"sync/atomic"
)

// Bounds of a Cache.
const (
	Slots   = 2048 // cached lines
	Ways    = 8    // slots of a set; a line may take either of two sets
	MaxLine = 512  // longest line cached
)

// Slots and Ways are powers of two (sets are aligned, hash bits are taken
// modulo them), a slot index fits in the 32 bits of the hash that pick the
// second set, and the 6 top bits that pick a way cover Ways evenly.
var (
	_ [0]struct{} = [Slots & (Slots - 1)]struct{}{}
	_ [0]struct{} = [Ways & (Ways - 1)]struct{}{}
	_ [0]struct{} = [Slots % Ways]struct{}{}
)

const (
	_ uint32 = Slots - 1
	_ uint   = 64 - Ways
)

// An Entry is what line comes to under config key Cfg (never 0).
type Entry[V any] struct {
	Cfg  uint64
	Line string
	Val  V
}

// A slot holds a cached line's entry and the hash of its line, so that a
// lookup reads only the entries that may match.
type slot[V any] struct {
	hash  atomic.Uint64
	entry atomic.Pointer[Entry[V]]
}

// A Cache maps lines to entries. Lines that crowd a set replace each other.
// It must not be copied once used.
type Cache[V any] struct {
	seed  maphash.Seed
	slots [Slots]slot[V]
	once  Entry[V] // the mark of a line seen once (see SeenOnce): Cfg 0 matches no lookup
}

// Init gives c its hash seed; it must be called before any other method.
func (c *Cache[V]) Init() {
	c.seed = maphash.MakeSeed()
}

// sets returns the hash of line under config key cfg and the first slots
// of the two sets it may take: with two to choose from, lines rarely crowd
// one set out.
// 0 vs 0.2–1.1 % of 1,000 names cycling missed with one set, 1,020 vs 987 instructions per request (BenchmarkLabelsNames/names=1000, Valgrind)
func (c *Cache[V]) sets(cfg uint64, line string) (h, a, b uint64) {
	h = maphash.String(c.seed, line) ^ cfg*0x9e3779b97f4a7c15
	return h, h % Slots &^ (Ways - 1), h >> 32 % Slots &^ (Ways - 1)
}

// Get returns the entry of line under config key cfg, or nil.
func (c *Cache[V]) Get(cfg uint64, line string) *Entry[V] {
	h, a, b := c.sets(cfg, line)
	if e := c.in(a, h, cfg, line); e != nil {
		return e
	}
	return c.in(b, h, cfg, line)
}

// in looks for line in the set from slot i, reading only the entries whose
// slot holds hash h.
func (c *Cache[V]) in(i, h, cfg uint64, line string) *Entry[V] {
	set := c.set(i)
	for k := range set {
		sl := &set[k]
		if sl.hash.Load() != h { // 1,020 vs 1,186 instructions per request, comparing lines only (BenchmarkLabelsNames/names=1000, Valgrind)
			continue
		}
		if e := sl.entry.Load(); e != nil && e.Cfg == cfg && e.Line == line {
			return e
		}
	}
	return nil
}

func (c *Cache[V]) set(i uint64) *[Ways]slot[V] {
	return (*[Ways]slot[V])(c.slots[i : i+Ways])
}

// Put caches e, which no one changes afterwards, in the emptier of its two
// sets or, when both are full, in place of the entry in the slot that the
// top bits of its hash pick, so that lines that share the sets replace
// each other evenly.
func (c *Cache[V]) Put(e *Entry[V]) {
	h, a, b := c.sets(e.Cfg, e.Line)
	j, n := c.free(a)
	if k, m := c.free(b); m > n {
		j, n = k, m
	}
	if n == 0 {
		j = a
		if h>>63 == 1 {
			j = b
		}
		j += h >> 58 % Ways
	}
	// The entry before the hash: a lookup that sees the new hash reads this
	// entry or a newer one, and checks it.
	c.slots[j].entry.Store(e)
	c.slots[j].hash.Store(h)
}

// free returns the first free slot of the set from slot i and how many
// free slots it has.
func (c *Cache[V]) free(i uint64) (first uint64, free int) {
	set := c.set(i)
	for k := range set {
		if set[k].entry.Load() == nil {
			if free == 0 {
				first = i + uint64(k)
			}
			free++
		}
	}
	return first, free
}

// A line that makes no labels (baggage without k6 members) is remembered as
// "no labels" once it comes a second time, so that a service whose clients
// send the same non-k6 baggage on every request does not scan it on every
// request. BenchmarkNonK6Line, instructions per request (Valgrind,
// (I(3N) - I(N)) / 2N, N = 20000, GOGC=off, one P), before the cache
// remembered "no labels" and after:
//
//	line=cached  "userId=alice,serverNode=DF%2028,isProduction=false"  2,964 → 511 (0.17×)
//	line=scan    a new non-k6 line on every request                    3,274 → 3,778 (1.15×: the mark)
//	line=k6      k6's line, from the cache                             1,047 → 1,056
//
// The first sighting only marks the line's hash in a free slot: baggage
// with a new value on every request (a request id) is never cached, costs
// no allocation, and never evicts a cached line.

// SeenOnce reports whether line, under config key cfg, was marked by an
// earlier call, and takes the mark off; if not, it marks the line in a free
// slot of its sets, if one is free. A mark never evicts an entry, and a
// hash that another line shares only makes that line cached sooner.
func (c *Cache[V]) SeenOnce(cfg uint64, line string) bool {
	h, a, b := c.sets(cfg, line)
	free := -1
	for _, i := range [2]uint64{a, b} {
		set := c.set(i)
		for k := range set {
			switch e := set[k].entry.Load(); {
			case e == nil:
				if free < 0 {
					free = int(i) + k
				}
			case e == &c.once && set[k].hash.Load() == h:
				set[k].entry.Store(nil) // free for the entry
				return true
			}
		}
	}
	if free >= 0 {
		c.slots[free].entry.Store(&c.once)
		c.slots[free].hash.Store(h)
	}
	return false
}
