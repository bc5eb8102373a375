package k6labels

import (
	"context"
	"hash/maphash"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// OverflowValue replaces a label value once its label name has reached the
// cap set by [WithMaxValuesPerLabel].
const OverflowValue = "_overflow"

// undefinedValue is what k6's helper sends for the test run id on a local
// `k6 run`, where no id exists. It carries nothing, so it is not a label.
const undefinedValue = "undefined"

// Limits that keep the process-wide bookkeeping bounded whatever clients send.
const (
	maxNameBytes = 128  // longer label names are skipped, not cut: a cut could merge two names
	maxNames     = 32   // distinct label names per process
	maxSets      = 1024 // cached label sets; the cache starts over when full
)

// label is one k6 label in the making: the member key as sent, the label name
// derived from it and the cleaned value.
type label struct {
	key, name, value string
}

// labelName appends to buf the pprof label name for a baggage key and
// reports whether the key is a k6 key that makes a valid name. Names are the
// key with every byte outside [a-zA-Z0-9_] turned into '_', so
// "k6.test_run_id" becomes "k6_test_run_id" and every name matches
// ^[a-zA-Z_][a-zA-Z0-9_]*$. Building into the caller's buffer lets a name
// seen before cost no allocation (see registry.intern).
func labelName(key string, buf []byte) ([]byte, bool) {
	if len(key) <= len("k6.") || len(key) > maxNameBytes || !strings.HasPrefix(key, "k6.") {
		return buf, false
	}
	buf = append(buf, "k6_"...)
	for i := 3; i < len(key); i++ {
		c := key[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			c = '_'
		}
		buf = append(buf, c)
	}
	return buf, true
}

// labelValue turns a raw member value into a label value: percent-decoded,
// then cleaned by cleanValue. For a k6.name URL it drops the query string and
// fragment unless keepQuery is set; this is done before decoding, so an
// escaped "%3F" stays part of the path.
func labelValue(key, raw string, maxBytes int, keepQuery bool) string {
	if !keepQuery && key == "k6.name" && (strings.HasPrefix(raw, "/") || strings.Contains(raw, "://")) {
		if i := strings.IndexAny(raw, "?#"); i >= 0 {
			raw = raw[:i]
		}
	}
	if isPlain(raw) {
		return raw[:min(len(raw), maxBytes)]
	}
	return cleanValue(decodeValue(raw), maxBytes)
}

// cleanValue makes s a valid label value: valid UTF-8 without control
// characters (each becomes U+FFFD), at most maxBytes long and cut on a
// character boundary.
func cleanValue(s string, maxBytes int) string {
	if isPlain(s) {
		return s[:min(len(s), maxBytes)]
	}
	b := make([]byte, 0, min(len(s), maxBytes))
	for _, r := range s {
		if r < 0x20 || 0x7f <= r && r < 0xa0 {
			r = utf8.RuneError
		}
		if len(b)+utf8.RuneLen(r) > maxBytes {
			break
		}
		b = utf8.AppendRune(b, r)
	}
	return string(b)
}

// A labelSet is one distinct set of k6 labels, built once and shared by every
// request that carries it. Nothing in it changes after it is cached.
type labelSet struct {
	labels  []label         // sorted by name
	ctx     context.Context // context.Background() with the labels
	set     pprof.LabelSet
	baggage string // the members, encoded for a baggage header
}

func newLabelSet(labels []label) *labelSet {
	s := &labelSet{labels: make([]label, len(labels))}
	kv := make([]string, 0, 2*len(labels))
	var b []byte
	for i, l := range labels {
		l.key, l.name, l.value = strings.Clone(l.key), strings.Clone(l.name), strings.Clone(l.value)
		s.labels[i] = l
		kv = append(kv, l.name, l.value)
		if i > 0 {
			b = append(b, ',')
		}
		if isToken(l.key) {
			b = append(b, l.key...)
		} else {
			// Not a valid baggage key (a space, a quote...): send the key
			// the label name stands for, which makes the same label name
			// downstream and is always a token.
			b = append(b, "k6."...)
			b = append(b, l.name[len("k6_"):]...)
		}
		b = append(b, '=')
		b = appendEncoded(b, l.value)
	}
	s.set = pprof.Labels(kv...)
	s.ctx = pprof.WithLabels(context.Background(), s.set)
	s.baggage = string(b)
	return s
}

func (s *labelSet) equal(labels []label) bool {
	if len(s.labels) != len(labels) {
		return false
	}
	for i := range labels {
		if s.labels[i] != labels[i] {
			return false
		}
	}
	return true
}

// registry is the process-wide record of label values seen (for the
// cardinality caps) and the cache of label sets built from them.
type registry struct {
	mu     sync.RWMutex
	values map[string]map[string]struct{} // label name → values admitted
	names  map[string]string              // the keys of values, for intern
	sets   map[uint64]*labelSet
	seed   maphash.Seed
}

var reg = newRegistry()

func newRegistry() *registry {
	r := &registry{
		values: make(map[string]map[string]struct{}),
		names:  make(map[string]string),
		sets:   make(map[uint64]*labelSet),
		seed:   maphash.MakeSeed(),
	}
	// The names k6 sends hold their places from the start, so that a client
	// sending many other k6.* keys first cannot use up the name cap.
	for _, name := range []string{"k6_test_run_id", "k6_scenario", "k6_name"} {
		r.values[name] = make(map[string]struct{})
		r.names[name] = name
	}
	return r
}

// counters back Stats.
var counters struct {
	labelled, skipped, overflowed, truncated atomic.Uint64
}

// admit applies the cardinality caps to labels, appends the result to dst
// and returns it, the number of values it replaced by OverflowValue, the
// number of labels it dropped because the process has seen too many label
// names, and whether it would have to record a name or value it has not seen. With record false it only
// reads, so it can run under the read lock; with record true the caller holds
// the write lock.
func (r *registry) admit(dst, labels []label, maxValues int, record bool) (kept []label, overflowed, dropped int, missing bool) {
	kept = dst
	for _, l := range labels {
		vals, ok := r.values[l.name]
		if !ok {
			if len(r.values) >= maxNames {
				dropped++
				continue
			}
			if !record {
				return nil, 0, 0, true
			}
			vals = make(map[string]struct{})
			name := strings.Clone(l.name)
			r.values[name] = vals
			r.names[name] = name
		}
		if _, ok := vals[l.value]; !ok {
			switch {
			case len(vals) >= maxValues:
				l.value = OverflowValue
				overflowed++
			case !record:
				return nil, 0, 0, true
			default:
				vals[strings.Clone(l.value)] = struct{}{}
			}
		}
		kept = append(kept, l)
	}
	return kept, overflowed, dropped, false
}

// intern returns name as a string, without allocating when the name is one
// k6 sends or one the registry holds already.
func (r *registry) intern(name []byte) string {
	switch string(name) {
	case "k6_test_run_id":
		return "k6_test_run_id"
	case "k6_scenario":
		return "k6_scenario"
	case "k6_name":
		return "k6_name"
	}
	r.mu.RLock()
	s, ok := r.names[string(name)] // the compiler does not allocate for this lookup
	r.mu.RUnlock()
	if ok {
		return s
	}
	return string(name)
}

func (r *registry) hash(labels []label) uint64 {
	var h maphash.Hash
	h.SetSeed(r.seed)
	for _, l := range labels {
		h.WriteString(l.key)
		h.WriteByte(0)
		h.WriteString(l.name)
		h.WriteByte(0)
		h.WriteString(l.value)
		h.WriteByte(0)
	}
	return h.Sum64()
}

// labelSet returns the shared labelSet for labels, which must be sorted by
// name, after applying the cardinality caps to them, or nil if no label is
// left, with the number of values that overflowed and of labels dropped. It
// allocates only for a set it has not built before.
func (r *registry) labelSet(labels []label, maxValues int) (_ *labelSet, overflowed, dropped int) {
	var buf [maxLabelsLimit]label
	r.mu.RLock()
	kept, overflowed, dropped, missing := r.admit(buf[:0], labels, maxValues, false)
	var s *labelSet
	var h uint64
	if !missing {
		h = r.hash(kept)
		if s = r.sets[h]; s != nil && !s.equal(kept) {
			s = nil // a hash collision: build this set afresh below
		}
	}
	r.mu.RUnlock()
	if s == nil && (missing || len(kept) > 0) {
		r.mu.Lock()
		if missing {
			kept, overflowed, dropped, _ = r.admit(buf[:0], labels, maxValues, true)
			h = r.hash(kept)
		}
		if s = r.sets[h]; len(kept) == 0 {
			s = nil
		} else if s == nil || !s.equal(kept) {
			s = newLabelSet(kept)
			if len(r.sets) >= maxSets {
				clear(r.sets) // simpler than LRU, and the hot sets come back at once
			}
			r.sets[h] = s
		}
		r.mu.Unlock()
	}
	return s, overflowed, dropped
}

// Counters are counts since the process started, for dashboards and alerts:
// a growing Overflowed means label values are hitting the cardinality cap.
type Counters struct {
	// Labelled counts requests that were given k6 labels.
	Labelled uint64
	// Skipped counts baggage members dropped: malformed members, and k6
	// members beyond the label cap or with a key too long for a label name.
	Skipped uint64
	// Overflowed counts label values replaced by OverflowValue.
	Overflowed uint64
	// Truncated counts requests whose baggage went beyond MaxBaggageBytes or
	// MaxBaggageMembers and was examined only up to that limit.
	Truncated uint64
}

// Stats returns the counters of the whole process.
func Stats() Counters {
	return Counters{
		Labelled:   counters.labelled.Load(),
		Skipped:    counters.skipped.Load(),
		Overflowed: counters.overflowed.Load(),
		Truncated:  counters.truncated.Load(),
	}
}
