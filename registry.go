package k6labels

import (
	"context"
	"hash/maphash"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// DefaultWindow is how long the process-wide [Registry] keeps a label value
// (or label name) that no request has carried: 20 of pyroscope-go's 15 s
// upload periods. A test run keeps its place as long as it sends requests,
// and a finished one gives it up within minutes.
const DefaultWindow = 5 * time.Minute

// Bounds of a Registry's bookkeeping. They hold per Registry, whatever the
// number of Labelers, handlers and interceptors that share it.
const (
	maxNames      = 32   // distinct label names, the three k6 ones included
	lineSlots     = 2048 // cached header lines
	lineWays      = 8    // slots of a line set; a line may take either of two sets
	maxCachedLine = 512  // longest header line cached
	setSlots      = 4096 // cached label sets (two-way associative)
	setWays       = 2
	setBudget     = 4 << 20 // bytes of cached label sets before the cache starts over
	statStripes   = 64      // counter stripes (see stripe)
)

// A Registry holds the label values in use, for the cardinality caps, and
// the caches that make a repeated header cost no allocation. A value (or
// label name) not carried by any request for the Registry's window gives up
// its place. Every Labeler uses the process-wide Registry unless given
// [WithRegistry]; its memory is bounded whatever the traffic and however
// many Labelers share it (see the package documentation).
type Registry struct {
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
	ticker    *time.Timer // sweeps while the registry holds values; nil for a test clock
	ticking   bool

	lines    [lineSlots]lineSlot
	sets     [setSlots]atomic.Pointer[labelSet]
	setBytes atomic.Int64

	stats [statStripes]stripe
}

// A record tracks when a label name or value was last carried.
type record struct {
	gen      atomic.Uint64 // the last gen a request carried it in
	lastSeen int64         // under Registry.mu, updated by sweeps
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

// An admission is what the registry made of a label set under one version:
// the set to label with (values over the cap replaced, names over the cap
// dropped) and the records a request refreshes.
type admission struct {
	version             uint64
	gen                 atomic.Uint64
	final               *labelSet // nil if no label is left
	records             []*record
	overflowed, dropped int
}

// A lineSlot holds a cached line's entry and the hash of its line, so that a
// lookup reads only the entries that may match.
type lineSlot struct {
	hash  atomic.Uint64
	entry atomic.Pointer[lineEntry]
}

// lineEntry caches what one header line comes to under one Labeler
// configuration: the set of its labels before admission.
type lineEntry struct {
	cfg       uint64
	line      string
	set       *labelSet
	skipped   int
	truncated bool
	urlTail   bool // line's last member is a URL name: line with a query string appended makes the same labels
}

// NewRegistry returns a Registry whose values and names are evicted once no
// request has carried them for window. A window < 1 means [DefaultWindow].
// Use one with [WithRegistry] to give handlers caps and caches of their own,
// as tests that run in parallel do.
func NewRegistry(window time.Duration) *Registry {
	if window < 1 {
		window = DefaultWindow
	}
	start := time.Now()
	r := newRegistry(window, func() int64 { return int64(time.Since(start)) })
	r.ticker = time.AfterFunc(time.Hour, r.tick)
	r.ticker.Stop()
	return r
}

// tick sweeps once every window/16 while the registry holds values, so that
// a sweep knows within that much when each value was last carried, even when
// every request is served from the caches (which read no clock).
func (r *Registry) tick() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sweep(r.now())
	r.ticking = false
	if r.ticker == nil {
		return // a test clock: the test ticks
	}
	for _, nr := range r.names {
		if !nr.reserved || len(nr.values) > 0 {
			r.ticking = true
			r.ticker.Reset(time.Duration(r.sweepEvery))
			return
		}
	}
}

func newRegistry(window time.Duration, now func() int64) *Registry {
	r := &Registry{
		window:     int64(window),
		sweepEvery: max(int64(window)/16, 1),
		now:        now,
		seed:       maphash.MakeSeed(),
		names:      make(map[string]*nameRecord),
	}
	// The names k6 sends hold their places from the start, so that a client
	// sending many other k6.* keys first cannot use up the name cap.
	for _, name := range k6Names {
		r.names[name] = newNameRecord(true)
	}
	return r
}

var defaultRegistry = NewRegistry(0)

// sweep evicts the names and values that no request has carried for the
// window, at most once every window/16 (so under a flood of new values it
// costs little), and reports whether anything was evicted. A record stamped
// with the current gen was carried since the last sweep, so it counts as
// seen now: eviction happens between window and window + 2·window/16 after
// the last request that carried it. r.mu is held.
func (r *Registry) sweep(now int64) bool {
	if now < r.nextSweep {
		return false
	}
	r.nextSweep = now + r.sweepEvery
	g := r.gen.Load()
	seen := func(rec *record) bool {
		if rec.gen.Load() == g {
			rec.lastSeen = now
		}
		return now-rec.lastSeen < r.window
	}
	evicted := false
	for name, nr := range r.names {
		for h, v := range nr.values {
			if !seen(v) {
				delete(nr.values, h)
				evicted = true
			}
		}
		if !seen(nr.rec) && !nr.reserved {
			delete(r.names, name)
			evicted = true
		}
	}
	r.gen.Add(1)
	if evicted {
		r.version.Add(1)
	}
	return evicted
}

// admit applies the cardinality caps to s, records its admission in s and
// returns it. maxValues is the cap of the Labeler asking: a value the
// registry holds is kept whatever the cap, a new one is admitted while the
// name has fewer than maxValues values, so that one member gets one answer.
func (r *Registry) admit(s *labelSet, maxValues int) *admission {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	changed := r.sweep(now)
	if r.ticker != nil && !r.ticking {
		r.ticking = true
		r.ticker.Reset(time.Duration(r.sweepEvery))
	}
	g := r.gen.Load()
	touch := func(rec *record) *record {
		rec.lastSeen = now
		rec.gen.Store(g)
		return rec
	}
	a := &admission{records: make([]*record, 0, 2*len(s.labels))}
	var buf [maxLabelsLimit]label
	kept := buf[:0]
	for _, l := range s.labels {
		nr := r.names[l.name]
		if nr == nil {
			if len(r.names) >= maxNames && r.sweep(now) {
				changed = true
			}
			if len(r.names) >= maxNames {
				a.dropped++
				continue
			}
			nr = newNameRecord(false)
			r.names[clone(l.name)] = nr
			changed = true
		}
		a.records = append(a.records, touch(nr.rec))
		if l.value != OverflowValue {
			h := maphash.String(r.seed, l.value)
			v := nr.values[h]
			if v == nil && len(nr.values) >= maxValues && r.sweep(now) {
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
		r.version.Add(1)
	}
	a.version = r.version.Load()
	a.gen.Store(r.gen.Load())
	if len(kept) == len(s.labels) && a.overflowed == 0 {
		a.final = s
	} else if len(kept) > 0 {
		var dropped int
		a.final, dropped = r.set(s.cfg, kept)
		a.dropped += dropped
	}
	s.adm.Store(a)
	return a
}

// admission returns the current admission of s, making it if there is none.
// On the cached path it only reads, except once per sweep, when it stamps
// the records of s as carried.
func (r *Registry) admission(s *labelSet, maxValues int) *admission {
	a := s.adm.Load()
	if a == nil || a.version != r.version.Load() {
		a = r.admit(s, maxValues)
	}
	if g := r.gen.Load(); a.gen.Load() != g {
		a.gen.Store(g)
		for _, rec := range a.records {
			if rec.gen.Load() != g {
				rec.gen.Store(g)
			}
		}
	}
	return a
}

// set returns the cached label set for labels under config key cfg, building
// it if there is none. It reads without locking; two requests building the
// same new set at once each build one, and one of them stays cached.
func (r *Registry) set(cfg uint64, labels []label) (*labelSet, int) {
	h := hashLabels(r.seed, cfg, labels)
	i := h % setSlots &^ (setWays - 1) // the ways of a set share a cache line
	for j := i; j < i+setWays; j++ {
		if s := r.sets[j].Load(); s != nil && s.hash == h && s.equal(cfg, labels) {
			return s, s.dropped
		}
	}
	s, dropped := newLabelSet(labels, cfg, h)
	if s == nil {
		return nil, dropped
	}
	s.dropped = dropped
	if old := r.sets[way(r.sets[i:i+setWays], h)+i].Swap(s); old != nil {
		r.setBytes.Add(-int64(old.size))
	}
	if r.setBytes.Add(int64(s.size)) > setBudget {
		// Over budget: start over. Sets still in use stay reachable from
		// the line cache and their admissions; they are found or rebuilt.
		for k := range r.sets {
			if old := r.sets[k].Swap(nil); old != nil {
				r.setBytes.Add(-int64(old.size))
			}
		}
	}
	return s, dropped
}

// lineSets returns the hash of line under config key cfg and the first
// slots of the two sets of lineWays it may take: with two sets to choose
// from, lines rarely crowd one set out.
func (r *Registry) lineSets(cfg uint64, line string) (h, a, b uint64) {
	h = maphash.String(r.seed, line) ^ cfg*0x9e3779b97f4a7c15
	return h, h % lineSlots &^ (lineWays - 1), h >> 32 % lineSlots &^ (lineWays - 1)
}

// line returns the cached entry for line under config key cfg, or nil.
func (r *Registry) line(cfg uint64, line string) *lineEntry {
	h, a, b := r.lineSets(cfg, line)
	if e := r.lineIn(a, h, cfg, line); e != nil {
		return e
	}
	return r.lineIn(b, h, cfg, line)
}

// lineIn looks for line in the set from slot i, reading only the entries
// whose slot holds hash h.
func (r *Registry) lineIn(i, h, cfg uint64, line string) *lineEntry {
	set := r.lineSet(i)
	for k := range set {
		sl := &set[k]
		if sl.hash.Load() != h {
			continue
		}
		if e := sl.entry.Load(); e != nil && e.cfg == cfg && e.line == line {
			return e
		}
	}
	return nil
}

func (r *Registry) lineSet(i uint64) *[lineWays]lineSlot {
	return (*[lineWays]lineSlot)(r.lines[i : i+lineWays])
}

// storeLine caches e in the emptier of its two sets or, when both are
// full, in place of the entry in the slot that the top bits of its hash
// pick, so that lines that share the sets replace each other evenly.
func (r *Registry) storeLine(e *lineEntry) {
	h, a, b := r.lineSets(e.cfg, e.line)
	j, n := r.freeLine(a)
	if k, m := r.freeLine(b); m > n {
		j, n = k, m
	}
	if n == 0 {
		j = a
		if h>>63 == 1 {
			j = b
		}
		j += h >> 58 % lineWays
	}
	// The entry before the hash: a lookup that sees the new hash reads this
	// entry or a newer one, and checks it.
	r.lines[j].entry.Store(e)
	r.lines[j].hash.Store(h)
}

// freeLine returns the first free slot of the set from slot i and how many
// free slots it has.
func (r *Registry) freeLine(i uint64) (first uint64, free int) {
	set := r.lineSet(i)
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

// rename returns the set that base becomes when a naming hook gives its
// k6_name the value name ("" removes the label), and how many labels were
// left out of it to fit a baggage header. The last answer is kept in base,
// so a hook that gives each line one name costs no allocation.
func (r *Registry) rename(base *labelSet, name string, maxValueBytes int) (*labelSet, int) {
	name = cleanValue(name, maxValueBytes)
	if v, _ := base.value(k6Names[2]); v == name {
		return base, 0
	}
	if m := base.renamed.Load(); m != nil && m.name == name {
		return m.set, m.dropped
	}
	var buf [maxLabelsLimit]label
	labels := buf[:0]
	for _, l := range base.labels {
		if l.name == k6Names[2] {
			if name == "" {
				continue
			}
			l.value = name
		}
		labels = append(labels, l)
	}
	var s *labelSet
	var dropped int
	if len(labels) > 0 {
		s, dropped = r.set(base.cfg, labels)
	}
	base.renamed.Store(&renaming{name: clone(name), set: s, dropped: dropped})
	return s, dropped
}

// clone returns a copy of s that shares no memory with it: names from a
// hook or a request may point into buffers that are reused.
func clone(s string) string {
	return string([]byte(s))
}

// A stripe holds a share of the counters. Each goroutine counts in the
// stripe its stack address picks, so that cores serving requests write to
// different cache lines; Stats adds the stripes up.
type stripe struct {
	labelled, skipped, overflowed, truncated atomic.Uint64
	_                                        [96]byte // a stripe per 128 bytes: no two share a cache line (or its prefetched pair)
}

func (r *Registry) stripe() *stripe {
	var here byte
	p := uint64(uintptr(unsafe.Pointer(&here)))
	return &r.stats[(p>>13)*0x9e3779b97f4a7c15>>58] // 8 KiB stacks: the bits above 13 tell goroutines apart
}

// count adds one request's outcome to the counters.
func (r *Registry) count(labelled bool, skipped, overflowed int, truncated bool) {
	if !labelled && skipped == 0 && overflowed == 0 && !truncated {
		return
	}
	st := r.stripe()
	if labelled {
		st.labelled.Add(1)
	}
	if skipped > 0 {
		st.skipped.Add(uint64(skipped))
	}
	if overflowed > 0 {
		st.overflowed.Add(uint64(overflowed))
	}
	if truncated {
		st.truncated.Add(1)
	}
}

// countUnlabelled counts a request that gets no labels here, unless a
// handler before labelled it, and so counted it.
func (r *Registry) countUnlabelled(ctx context.Context, skipped int, truncated bool) {
	if (skipped > 0 || truncated) && setFrom(ctx) == nil {
		r.count(false, skipped, 0, truncated)
	}
}

// Counters are counts since a Registry was made, for dashboards and alerts:
// a growing Overflowed means label values are hitting the cardinality cap.
// A request is counted by the first handler that labels it, however many it
// passes through; one that no handler labels is counted by each.
type Counters struct {
	// Labelled counts requests that were given k6 labels.
	Labelled uint64
	// Skipped counts baggage members dropped: malformed members, and k6
	// members beyond the label caps, with a key too long for a label name,
	// or beyond what fits in a baggage header.
	Skipped uint64
	// Overflowed counts label values replaced by OverflowValue.
	Overflowed uint64
	// Truncated counts requests whose baggage went beyond MaxBaggageBytes or
	// MaxBaggageMembers and was examined only up to that limit.
	Truncated uint64
}

// Stats returns the counters of r.
func (r *Registry) Stats() Counters {
	var c Counters
	for i := range r.stats {
		st := &r.stats[i]
		c.Labelled += st.labelled.Load()
		c.Skipped += st.skipped.Load()
		c.Overflowed += st.overflowed.Load()
		c.Truncated += st.truncated.Load()
	}
	return c
}

// Stats returns the counters of the process-wide Registry, which every
// Labeler uses unless given [WithRegistry].
func Stats() Counters {
	return defaultRegistry.Stats()
}
