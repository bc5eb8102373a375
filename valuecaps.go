package k6labels

import (
	"hash/maphash"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// maxNames bounds the distinct label names of a Registry, the three k6 ones
// included.
const maxNames = 32

// The k6 names hold their places, with room for others.
var _ [0]struct{} = [len(k6Names) / maxNames]struct{}{}

// valueCaps applies the cardinality caps of a Registry: the values of each
// label name, and the names, in use. A value or name no request carried
// for the window gives up its place. It knows labels only as names and
// values; what the caps made of a label set is memoized in the set.
type valueCaps struct {
	window, sweepEvery int64        // nanoseconds
	now                func() int64 // nanoseconds on a monotonic clock
	seed               maphash.Seed

	// version changes whenever a value or name is admitted or evicted: an
	// admission made under another version is made again. gen changes at
	// every sweep: a request stamps the records it uses once per gen, so
	// that the sweep knows what was seen, without writing on every request.
	version atomic.Uint64
	gen     atomic.Uint64

	mu        sync.Mutex // guards names, the records' lastSeen, nextSweep, ticking
	names     map[string]*nameRecord
	nextSweep int64
	ticker    *time.Timer // sweeps while the caps hold values; nil for a test clock
	ticking   bool
}

// A record tracks when a label name or value was last carried.
type record struct {
	gen      atomic.Uint64 // the last gen a request carried it in
	lastSeen int64         // under valueCaps.mu, updated by sweeps
}

// A nameRecord holds a label name's values. Admissions point to its record,
// never into it: a stale admission, kept by a cached set long after the name
// was evicted, must not keep the values map alive (a map never shrinks).
type nameRecord struct {
	rec      *record
	reserved bool               // one of the k6 names: never evicted
	values   map[uint64]*record // by maphash of the value: 16 bytes a value, whatever its length
}

func newNameRecord(reserved bool) *nameRecord {
	return &nameRecord{rec: new(record), reserved: reserved, values: make(map[uint64]*record)}
}

// An admission is what the caps made of a label set under one version:
// the set to label with (values over the cap replaced, names over the cap
// dropped) and the records a request refreshes.
type admission struct {
	version             uint64
	gen                 atomic.Uint64
	final               *labelSet // nil if no label is left
	records             []*record
	overflowed, dropped int
}

// init makes c evict what no request carried for window, on clock now.
func (c *valueCaps) init(window time.Duration, now func() int64) {
	c.window, c.sweepEvery = int64(window), max(int64(window)/16, 1)
	c.now, c.seed = now, maphash.MakeSeed()
	c.names = make(map[string]*nameRecord)
	// The names k6 sends hold their places from the start, so that a client
	// sending many other k6.* keys first cannot use up the name cap.
	for _, name := range k6Names {
		c.names[name] = newNameRecord(true)
	}
}

// tick sweeps once every window/16 while the caps hold values, so that a
// sweep knows within that much when each value was last carried, even when
// every request is served from the caches (which read no clock).
func (c *valueCaps) tick() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sweep(c.now())
	c.ticking = false
	if c.ticker == nil {
		return // a test clock: the test ticks
	}
	for _, nr := range c.names {
		if !nr.reserved || len(nr.values) > 0 {
			c.ticking = true
			c.ticker.Reset(time.Duration(c.sweepEvery))
			return
		}
	}
}

// sweep evicts the names and values that no request has carried for the
// window, at most once every window/16 (so under a flood of new values it
// costs little), and reports whether anything was evicted. A record stamped
// with the current gen was carried since the last sweep, so it counts as
// seen now: eviction happens between window and window + 2·window/16 after
// the last request that carried it. c.mu is held.
func (c *valueCaps) sweep(now int64) bool {
	if now < c.nextSweep {
		return false
	}
	c.nextSweep = now + c.sweepEvery
	g := c.gen.Load()
	seen := func(rec *record) bool {
		if rec.gen.Load() == g {
			rec.lastSeen = now
		}
		return now-rec.lastSeen < c.window
	}
	evicted := false
	for name, nr := range c.names {
		for h, v := range nr.values {
			if !seen(v) {
				delete(nr.values, h)
				evicted = true
			}
		}
		if !seen(nr.rec) && !nr.reserved {
			delete(c.names, name)
			evicted = true
		}
	}
	c.gen.Add(1)
	if evicted {
		c.version.Add(1)
	}
	return evicted
}

// admission returns the current admission of s, making it if there is none;
// a set of what s keeps, if not s, comes from sets. maxValues is the cap of
// the Labeler asking. On the cached path it only reads, except once per
// sweep, when it stamps the records of s as carried.
func (c *valueCaps) admission(s *labelSet, maxValues int, sets *setCache) *admission {
	a := s.adm.Load()
	// 1,833 vs 3,830 instructions per k6 request, admitted each time (BenchmarkHandler/Jslib, Valgrind)
	if a == nil || a.version != c.version.Load() {
		a = c.admit(s, maxValues, sets)
	}
	// 1,833 vs 1,987 instructions per k6 request, stamped under c.mu each time (BenchmarkHandler/Jslib, Valgrind)
	if g := c.gen.Load(); a.gen.Load() != g {
		a.gen.Store(g)
		for _, rec := range a.records {
			if rec.gen.Load() != g {
				rec.gen.Store(g)
			}
		}
	}
	return a
}

// admit applies the caps to s, records its admission in s and returns it.
// A value the caps hold is kept whatever maxValues, a new one is admitted
// while the name has fewer than maxValues values, so that one member gets
// one answer.
func (c *valueCaps) admit(s *labelSet, maxValues int, sets *setCache) *admission {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	changed := c.sweep(now)
	if c.ticker != nil && !c.ticking {
		c.ticking = true
		c.ticker.Reset(time.Duration(c.sweepEvery))
	}
	g := c.gen.Load()
	touch := func(rec *record) *record {
		rec.lastSeen = now
		rec.gen.Store(g)
		return rec
	}
	a := &admission{records: make([]*record, 0, 2*len(s.labels))}
	var buf [maxLabelsLimit]label
	kept := buf[:0]
	for _, l := range s.labels {
		nr := c.names[l.name]
		if nr == nil {
			if len(c.names) >= maxNames && c.sweep(now) {
				changed = true
			}
			if len(c.names) >= maxNames {
				a.dropped++
				continue
			}
			nr = newNameRecord(false)
			c.names[strings.Clone(l.name)] = nr
			changed = true
		}
		a.records = append(a.records, touch(nr.rec))
		if l.value != OverflowValue {
			h := maphash.String(c.seed, l.value)
			v := nr.values[h]
			if v == nil && len(nr.values) >= maxValues && c.sweep(now) {
				changed = true
			}
			switch {
			case v != nil:
			case len(nr.values) >= maxValues:
				l.value = OverflowValue
				a.overflowed++
			default:
				v = &record{}
				nr.values[h] = v
				changed = true
			}
			if v != nil {
				a.records = append(a.records, touch(v))
			}
		}
		kept = append(kept, l)
	}
	if changed {
		c.version.Add(1)
	}
	a.version = c.version.Load()
	a.gen.Store(c.gen.Load())
	if len(kept) == len(s.labels) && a.overflowed == 0 {
		a.final = s
	} else if len(kept) > 0 {
		var dropped int
		a.final, dropped = sets.get(s.cfg, kept)
		a.dropped += dropped
	}
	s.adm.Store(a)
	return a
}
