package k6labels

import (
	"hash/maphash"
	"sync/atomic"
)

// Bounds of a Registry's set cache.
const (
	setSlots  = 4096    // cached label sets
	setWays   = 2       // slots of a set, which share a cache line
	setBudget = 4 << 20 // bytes of cached label sets before the cache starts over
)

// setSlots and setWays are powers of two (sets are aligned, and hash bits
// are taken modulo them), and a set's slots fit in one 64-byte cache line.
var (
	_ [0]struct{} = [setSlots & (setSlots - 1)]struct{}{}
	_ [0]struct{} = [setWays & (setWays - 1)]struct{}{}
	_ [0]struct{} = [setSlots % setWays]struct{}{}
	_ [0]struct{} = [64 % (setWays * 8)]struct{}{}
)

// A setCache holds the one labelSet that each list of labels makes under a
// config key, so that every request that carries it shares its pprof
// labels, its context and what the caps made of it. Its memory is bounded
// by setBudget.
type setCache struct {
	seed  maphash.Seed
	slots [setSlots]atomic.Pointer[labelSet]
	bytes atomic.Int64 // held by the sets in slots
}

func (c *setCache) init() {
	c.seed = maphash.MakeSeed()
}

// get returns the set that labels (sorted by name) make under config key
// cfg, building it if there is none, and how many labels it leaves out to
// fit a baggage header; nil if it leaves out all. It reads without locking;
// two requests building the same new set at once each build one, and one
// of them stays cached.
func (c *setCache) get(cfg uint64, labels []label) (*labelSet, int) {
	// 16,224 vs 19,332 instructions and 13 vs 19 allocations per new k6 line, built each time (BenchmarkHandler/NewPath, Valgrind)
	h := hashLabels(c.seed, cfg, labels)
	i := h % setSlots &^ (setWays - 1) // the ways of a set share a cache line
	for j := i; j < i+setWays; j++ {
		if s := c.slots[j].Load(); s != nil && s.hash == h && s.equal(cfg, labels) {
			return s, s.dropped
		}
	}
	s, dropped := newLabelSet(labels, cfg, h)
	if s == nil {
		return nil, dropped
	}
	s.dropped = dropped
	if old := c.slots[way(c.slots[i:i+setWays], h)+i].Swap(s); old != nil {
		c.bytes.Add(-int64(old.size))
	}
	if c.bytes.Add(int64(s.size)) > setBudget {
		// Over budget: start over. Sets still in use stay reachable from
		// the line cache and their admissions; they are found or rebuilt.
		for k := range c.slots {
			if old := c.slots[k].Swap(nil); old != nil {
				c.bytes.Add(-int64(old.size))
			}
		}
	}
	return s, dropped
}

// way picks the slot of a set (its ways, a power of two of them) that an
// entry with hash h takes: a free one, or else the one the top bits of h
// pick, so that entries that share a set replace each other evenly.
func way[T any](set []atomic.Pointer[T], h uint64) uint64 {
	for j := range set {
		if set[j].Load() == nil {
			return uint64(j)
		}
	}
	return h >> 32 % uint64(len(set))
}
