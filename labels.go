package k6labels

import (
	"context"
	"hash/maphash"
	"runtime/pprof"
	"strings"
	"sync/atomic"

	"github.com/k6labels/k6labels/internal/w3c"
	"unsafe"
)

// OverflowValue replaces a label value once its label name has reached the
// cap set by [WithMaxValuesPerLabel]. A client that sends it as a value gets
// it as the label, without taking a value's place under the cap.
const OverflowValue = "_overflow"

// undefinedValue is what k6's helper sends for the test run id on a local
// `k6 run`, where no id exists. It carries nothing, so it is not a label.
const undefinedValue = "undefined"

// maxNameBytes bounds a label name; longer keys are skipped, not cut: a cut
// could merge two names.
const maxNameBytes = 128

// The label names k6's helper sends. They always have a place under the
// name cap and come first in what is sent downstream.
var k6Names = [...]string{"k6_test_run_id", "k6_scenario", "k6_name"}

// label is one k6 label: its pprof name and value. The baggage key it came
// from is not kept: keys that make the same name are the same label, and
// the key sent downstream is the one the name stands for (see keyOf).
type label struct {
	name, value string
}

// labelName appends to buf the pprof label name for a baggage key and
// reports whether the key is a k6 key that makes a valid name. Names are the
// key with every byte outside [a-zA-Z0-9_] turned into '_', so
// "k6.test_run_id" becomes "k6_test_run_id" and every name matches
// ^[a-zA-Z_][a-zA-Z0-9_]*$, the names Pyroscope accepts in every mode.
func labelName(key string, buf []byte) ([]byte, bool) {
	if len(key) <= len("k6.") || len(key) > maxNameBytes || !strings.HasPrefix(key, "k6.") {
		return buf, false
	}
	buf = append(buf, "k6_"...)
	start := len(buf)
	buf = append(buf, key[len("k6."):]...)
	w3c.Name(buf[start:])
	return buf, true
}

// The w3c.Arena of a request decodes values up to the largest cap without
// allocating, and holds a request's labels at the default limits: each
// pair must be equal (a negative difference does not convert to uint).
const (
	_ = uint(maxValueBytesLimit-w3c.MaxValueBytes) + uint(w3c.MaxValueBytes-maxValueBytesLimit)
	_ = uint(DefaultMaxLabels*(DefaultMaxValueBytes+32)-w3c.ArenaBytes) + uint(w3c.ArenaBytes-DefaultMaxLabels*(DefaultMaxValueBytes+32))
)

// keyOf returns the baggage key a label name stands for: "k6_my_tag" is
// sent as "k6.my_tag", which is always a valid key and makes the same name.
func keyOf(name string) string {
	return "k6." + name[len("k6_"):]
}

// labelValue turns a raw member value into a label value: percent-decoded,
// valid UTF-8 without control characters, at most maxBytes long. For k6.name
// it drops a URL's query string and fragment unless keepQuery is set: before
// decoding when the value is a URL as sent (so an escaped "%3F" stays part of
// the path), after decoding when only the decoded value is one (a URL sent
// whole through encodeURIComponent). Work is bounded by maxBytes, not by the
// length of raw.
func labelValue(name, raw string, maxBytes int, keepQuery bool, a *w3c.Arena) string {
	isName := name == "k6_name" && !keepQuery
	if isName && w3c.LooksLikeURL(raw) {
		raw, isName = w3c.CutQuery(raw), false
	}
	if w3c.IsPlain(raw) { // 16,224 vs 17,913 instructions per new k6 line, decoded all the same (BenchmarkHandler/NewPath, Valgrind)
		return raw[:min(len(raw), maxBytes)]
	}
	v := a.Value(raw, maxBytes)
	if isName && w3c.LooksLikeURL(v) {
		v = w3c.CutQuery(v)
	}
	return v
}

// cleanValue is [w3c.CleanValue], for the names a naming hook returns.
func cleanValue(s string, maxBytes int) string {
	return w3c.CleanValue(s, maxBytes)
}

// A labelSet is one distinct set of k6 labels, built once and shared by every
// request that carries it. Its labels never change; what it caches about
// them (admission, renaming, the encoded baggage) is replaced atomically.
type labelSet struct {
	labels  []label // sorted by name
	cfg     uint64  // the Labeler options it was built under (config.key)
	hash    uint64
	size    int // bytes it holds, for the cache budget
	dropped int // labels left out to fit a baggage header

	ctx context.Context // context.Background() with the labels
	set pprof.LabelSet
	// prof is what pprof.SetGoroutineLabels(ctx) puts on a goroutine, learnt
	// the first time s is put on one (put), then set without a lookup: 78 of
	// 1,693 instructions per k6 request (4.6%, BenchmarkHandler/Jslib,
	// Valgrind). Never learnt before: a set only renamed is never on a
	// goroutine, not even for an instant a CPU sample could land in.
	prof unsafe.Pointer

	adm     atomic.Pointer[admission] // what the registry made of it, while current
	renamed atomic.Pointer[renaming]  // the last set a naming hook turned it into
	baggage atomic.Pointer[string]    // the labels encoded for a baggage header, once asked for
}

// renaming records that a naming hook turned a set's k6_name into name.
type renaming struct {
	name    string
	set     *labelSet
	dropped int // labels left out of set to fit a baggage header
}

// newLabelSet builds the set of labels (sorted by name) under config key
// cfg. It copies every string, so labels may point into buffers that the
// caller reuses. Labels that would make the encoded baggage exceed the W3C
// limit are left out, the least important first, so that [Baggage] always
// fits; it returns how many.
func newLabelSet(labels []label, cfg, hash uint64) (_ *labelSet, dropped int) {
	keep, dropped := fitBaggage(labels)
	if len(labels) == dropped {
		return nil, dropped
	}
	n := 0
	for i, l := range labels {
		if keep[i] {
			n += len(l.name) + len(l.value)
		}
	}
	var sb strings.Builder
	sb.Grow(n)
	for i, l := range labels {
		if keep[i] {
			sb.WriteString(l.name)
			sb.WriteString(l.value)
		}
	}
	all := sb.String() // one copy for every string of the set
	s := &labelSet{labels: make([]label, 0, len(labels)-dropped), cfg: cfg, hash: hash}
	kv := make([]string, 0, 2*cap(s.labels))
	off := 0
	for i, l := range labels {
		if !keep[i] {
			continue
		}
		name := all[off : off+len(l.name)]
		off += len(l.name)
		value := all[off : off+len(l.value)]
		off += len(l.value)
		s.labels = append(s.labels, label{name, value})
		kv = append(kv, name, value)
	}
	s.set = pprof.Labels(kv...)
	s.ctx = pprof.WithLabels(context.Background(), s.set)
	s.size = 256 + 3*n + 64*len(s.labels) // strings, the pprof copies, headers
	return s, dropped
}

// fitBaggage reports which of labels to keep, and how many not to, so that
// their encoded baggage is at most MaxBaggageBytes: the three k6 names are
// kept first, then the others in name order.
func fitBaggage(labels []label) (keep [maxLabelsLimit]bool, dropped int) {
	size := -1 // no ',' before the first member
	for i, l := range labels {
		size += 1 + memberLen(l)
		keep[i] = true
	}
	if size <= MaxBaggageBytes {
		return keep, 0
	}
	keep = [maxLabelsLimit]bool{}
	size = -1
	for pass := range 2 {
		for i, l := range labels {
			if isK6Name(l.name) != (pass == 0) {
				continue
			}
			if n := 1 + memberLen(l); size+n <= MaxBaggageBytes {
				keep[i] = true
				size += n
			}
		}
	}
	dropped = 0
	for i := range labels {
		if !keep[i] {
			dropped++
		}
	}
	return keep, dropped
}

func isK6Name(name string) bool {
	return name == k6Names[0] || name == k6Names[1] || name == k6Names[2]
}

// memberLen is the length of l as an encoded baggage member.
func memberLen(l label) int {
	n := len(l.name) + 1 // the key is as long as the name
	for i := 0; i < len(l.value); i++ {
		if w3c.NeedsEscape(l.value[i]) {
			n += 3
		} else {
			n++
		}
	}
	return n
}

// encodedBaggage returns the labels of s as a baggage header value, building
// it on first use: most services never send it on.
func (s *labelSet) encodedBaggage() string {
	// 4,605 vs 7,641 instructions per request sent on, encoded each time (BenchmarkTransport/K6, Valgrind)
	if p := s.baggage.Load(); p != nil {
		return *p
	}
	var b []byte
	for i, l := range s.labels {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, "k6."...)
		b = append(b, l.name[len("k6_"):]...)
		b = append(b, '=')
		b = w3c.AppendEncoded(b, l.value)
	}
	str := string(b)
	s.baggage.Store(&str)
	return str
}

// equal reports whether labels, under config key cfg, make the set s.
func (s *labelSet) equal(cfg uint64, labels []label) bool {
	if s.cfg != cfg || len(s.labels)+s.dropped != len(labels) {
		return false
	}
	if s.dropped == 0 {
		for i := range labels {
			if s.labels[i] != labels[i] {
				return false
			}
		}
		return true
	}
	// s holds what fitBaggage kept of its labels: labels make s if they are
	// as long, and what it keeps of them is s.
	keep, _ := fitBaggage(labels)
	j := 0
	for i := range labels {
		if keep[i] {
			if j == len(s.labels) || s.labels[j] != labels[i] {
				return false
			}
			j++
		}
	}
	return j == len(s.labels)
}

// value returns the value of the label named name, if s has it.
func (s *labelSet) value(name string) (string, bool) {
	for _, l := range s.labels {
		if l.name == name {
			return l.value, true
		}
	}
	return "", false
}

// hashLabels hashes labels (sorted by name) under config key cfg.
func hashLabels(seed maphash.Seed, cfg uint64, labels []label) uint64 {
	var h maphash.Hash
	h.SetSeed(seed)
	var b [8]byte
	for i := range b {
		b[i] = byte(cfg >> (8 * i))
	}
	h.Write(b[:])
	for _, l := range labels {
		h.WriteString(l.name)
		h.WriteByte(0)
		h.WriteString(l.value)
		h.WriteByte(0)
	}
	return h.Sum64()
}

// put puts s's labels on the calling goroutine, as
// pprof.SetGoroutineLabels(s.ctx) does.
func (s *labelSet) put() {
	if p := atomic.LoadPointer(&s.prof); p != nil {
		setProfLabel(p)
		return
	}
	pprof.SetGoroutineLabels(s.ctx)
	atomic.StorePointer(&s.prof, getProfLabel())
}
