package k6labels

import (
	"context"
	"hash/maphash"
	"net/http"
	"runtime/pprof"
	"strings"
	"sync/atomic"
)

// A Labeler turns the k6 members of a baggage list into pprof labels. It is
// safe for concurrent use; the HTTP handler and the gRPC interceptors are thin
// wrappers around one. Make one with [NewLabeler]: the zero value labels
// nothing.
type Labeler struct {
	cfg   config
	lines *lineCache // nil when a result depends on more than the header
}

// NewLabeler returns a Labeler with the given options.
func NewLabeler(opts ...Option) *Labeler {
	l := &Labeler{cfg: newConfig(opts)}
	if !l.cfg.routePattern {
		l.lines = &lineCache{seed: maphash.MakeSeed()}
	}
	return l
}

// Context returns a context derived from ctx that carries pprof labels for the
// k6 members of baggage, merged with ctx's own labels (the k6 ones win), and
// the members themselves for [Members] and [Baggage]. baggage holds the
// header lines (or gRPC metadata values) as received. If they carry no usable
// k6 member, Context returns ctx itself. To tell the two apart, test
// Baggage(result) != "" rather than comparing contexts: == panics on a
// context type that is not comparable.
//
// Context only builds the context; [Do] puts its labels on the goroutine.
func (l *Labeler) Context(ctx context.Context, baggage []string) context.Context {
	ctx, _ = l.context(ctx, baggage, nil)
	return ctx
}

// context is Context for the HTTP handler: r, if not nil, is the request, from
// which the route pattern options take the k6_name value. It also reports
// whether it added labels, which callers must not find out by comparing
// contexts: == panics on a context type that is not comparable.
func (l *Labeler) context(ctx context.Context, baggage []string, r *http.Request) (context.Context, bool) {
	if len(baggage) == 0 {
		return ctx, false
	}
	var res result
	var slot *atomic.Pointer[result]
	cached := false
	if l.lines != nil && len(baggage) == 1 && len(baggage[0]) <= maxCachedLine {
		slot = l.lines.slot(baggage[0])
		if c := slot.Load(); c != nil && c.line == baggage[0] {
			res, cached = *c, true
		}
	}
	if !cached {
		res = l.build(baggage, r)
		// Only lines that make labels are cached, so that other baggage
		// costs no allocation.
		if slot != nil && res.set != nil {
			c := res
			c.line = strings.Clone(baggage[0])
			slot.Store(&c)
		}
	}
	if l.cfg.nameFunc != nil && res.set != nil {
		res = l.rename(ctx, res)
	}
	res.count()
	if res.set == nil {
		return ctx, false
	}
	if hasLabels(ctx) {
		// Rare: merge with the caller's labels, which costs allocations.
		return &labelledContext{Context: pprof.WithLabels(ctx, res.set.set), set: res.set, merged: true}, true
	}
	return &labelledContext{Context: ctx, set: res.set}, true
}

// A result is what one baggage list comes to: its label set (nil if none)
// and what to add to the counters for it.
type result struct {
	line                string // the header line, when cached
	set                 *labelSet
	skipped, overflowed int
	truncated           bool
}

func (res *result) count() {
	if res.set != nil {
		counters.labelled.Add(1)
	}
	if res.skipped > 0 {
		counters.skipped.Add(uint64(res.skipped))
	}
	if res.overflowed > 0 {
		counters.overflowed.Add(uint64(res.overflowed))
	}
	if res.truncated {
		counters.truncated.Add(1)
	}
}

// Bounds of the line cache: how many header lines it remembers per Labeler,
// and the longest line it remembers.
const (
	lineSlots     = 256
	maxCachedLine = 512
)

// lineCache maps a baggage header line to the result it came to, so that the
// same line, which k6 sends thousands of times, is parsed once. It is
// direct-mapped: a line takes the slot its hash picks, replacing whatever
// line was there, so it never holds more than lineSlots lines. A result stays
// right as long as it is cached because the registry only ever grows: a value
// admitted once stays admitted, and one over the cap stays over it.
type lineCache struct {
	seed  maphash.Seed
	slots [lineSlots]atomic.Pointer[result]
}

func (c *lineCache) slot(line string) *atomic.Pointer[result] {
	return &c.slots[maphash.String(c.seed, line)%lineSlots]
}

// build parses baggage and builds its label set.
func (l *Labeler) build(baggage []string, r *http.Request) result {
	var buf [maxLabelsLimit]label
	labels, skipped, truncated := l.collect(baggage, r, buf[:0])
	res := result{skipped: skipped, truncated: truncated}
	if len(labels) > 0 {
		var dropped int
		res.set, res.overflowed, dropped = reg.labelSet(labels, l.cfg.maxValues)
		res.skipped += dropped
	}
	return res
}

// collect appends the k6 labels of baggage to labels, sorted by name, and
// returns them with the number of members skipped and whether a limit cut
// the list. For a key sent twice the last value wins (as in OpenTelemetry);
// two keys that make the same label name count as the same key.
func (l *Labeler) collect(baggage []string, r *http.Request, labels []label) (_ []label, skipped int, truncated bool) {
	sc := newScanner(baggage)
	var nameBuf [maxNameBytes]byte
	for {
		key, raw, ok, more := sc.next()
		if !more {
			break
		}
		if !ok {
			skipped++
			continue
		}
		name, ok := labelName(key, nameBuf[:0])
		if !ok {
			if strings.HasPrefix(key, "k6.") {
				skipped++ // a k6 key too long, or empty, to name a label
			}
			continue
		}
		i := 0
		for i < len(labels) && labels[i].name < string(name) {
			i++
		}
		if i < len(labels) && labels[i].name == string(name) {
			labels[i].key = key
			labels[i].value = labelValue(key, raw, l.cfg.maxValueBytes, l.cfg.keepQuery)
			continue
		}
		if len(labels) == l.cfg.maxLabels {
			skipped++
			continue
		}
		labels = append(labels, label{})
		copy(labels[i+1:], labels[i:])
		labels[i] = label{key, reg.intern(name), labelValue(key, raw, l.cfg.maxValueBytes, l.cfg.keepQuery)}
	}
	// Empty values and k6's "undefined" are dropped only now, so that they
	// still replace an earlier value of the same key.
	kept := labels[:0]
	for _, lb := range labels {
		if lb.value != "" && lb.value != undefinedValue {
			if r != nil && lb.name == "k6_name" {
				lb.value = l.routeName(r, lb.value)
			}
			kept = append(kept, lb)
		}
	}
	return kept, skipped, sc.truncated
}

// hasLabels reports whether ctx carries any pprof label.
func hasLabels(ctx context.Context) bool {
	found := false
	pprof.ForLabels(ctx, func(string, string) bool {
		found = true
		return false
	})
	return found
}

// labelledContext is what Context returns. In the common case, where the
// parent has no pprof labels, it answers pprof's lookup from the cached
// context of its label set instead of allocating a merged label map for every
// request: pprof finds its labels through Value, like any other lookup.
type labelledContext struct {
	context.Context           // the parent
	set             *labelSet // the k6 labels and members
	merged          bool      // the parent holds the labels, merged with its own
}

type setKey struct{}

func (c *labelledContext) Value(key any) any {
	if _, ok := key.(setKey); ok {
		return c.set
	}
	if !c.merged {
		if v := c.set.ctx.Value(key); v != nil {
			return v
		}
	}
	return c.Context.Value(key)
}

// String names the context like the standard library's contexts do.
func (c *labelledContext) String() string {
	return "k6labels.Context"
}

func setFrom(ctx context.Context) *labelSet {
	s, _ := ctx.Value(setKey{}).(*labelSet)
	return s
}

// Members returns the k6 members that [Labeler.Context] found for ctx, after
// the same cleaning as the labels (values decoded, capped, with the
// cardinality cap applied), sorted by label name. It returns nil if ctx came
// from no request with k6 members.
func Members(ctx context.Context) []Member {
	s := setFrom(ctx)
	if s == nil {
		return nil
	}
	out := make([]Member, len(s.labels))
	for i, l := range s.labels {
		out[i] = Member{Key: l.key, Value: l.value}
	}
	return out
}

// Baggage returns the k6 members of ctx encoded as a W3C baggage header value,
// ready to send to a downstream service, or "" if there are none. Values are
// percent-encoded where needed; a key that is not a valid baggage key (one
// with a space, say) is sent as the key its label name stands for
// ("k6.my key" as "k6.my_key"), so the next service makes the same label. It does not
// allocate: the value is built once per distinct label set.
func Baggage(ctx context.Context) string {
	if s := setFrom(ctx); s != nil {
		return s.baggage
	}
	return ""
}

// Do calls f(ctx) with ctx's pprof labels set on the current goroutine, then
// puts back the labels the goroutine had before, also when f panics.
//
// It differs from [pprof.Do] in what it restores: pprof.Do restores the labels
// of the context it was given, which drops labels that lived only on the
// goroutine (inherited from the goroutine that started it, or set by a span
// profiler) and, on a reused goroutine such as an HTTP/1.1 keep-alive
// connection, may leave one request's labels on the next.
func Do(ctx context.Context, f func(context.Context)) {
	prev := getProfLabel()
	defer setProfLabel(prev)
	pprof.SetGoroutineLabels(ctx)
	f(ctx)
}

// Labels is [Labeler.Context] that also reports whether it added labels, the
// entry point for adapters: with ok false, ctx is returned as it was and
// nothing is to be done for the request.
func (l *Labeler) Labels(ctx context.Context, baggage []string) (_ context.Context, ok bool) {
	return l.context(ctx, baggage, nil)
}

// LabelName returns the pprof label name that baggage key makes, and false
// if key makes no label (it does not start with "k6.", or is too long).
func LabelName(key string) (string, bool) {
	name, ok := labelName(key, nil)
	return string(name), ok
}

// LabelValue returns the label value that a Labeler made with opts gives the
// baggage member key=value, as sent, before the cardinality cap: decoded,
// cleaned, cut to length and, for a k6.name URL, without its query string.
// Tools that match k6's own results with profiles use it to name requests
// exactly as the labels do.
func LabelValue(key, value string, opts ...Option) string {
	c := newConfig(opts)
	return labelValue(key, value, c.maxValueBytes, c.keepQuery)
}

// rename applies the WithNameFunc hook to res's k6_name label.
func (l *Labeler) rename(ctx context.Context, res result) result {
	var buf [maxLabelsLimit]label
	labels := append(buf[:0], res.set.labels...)
	for i := range labels {
		if labels[i].name != "k6_name" {
			continue
		}
		if v := cleanValue(l.cfg.nameFunc(ctx, labels[i].value), l.cfg.maxValueBytes); v != "" {
			labels[i].value = v
		} else {
			labels = append(labels[:i], labels[i+1:]...)
		}
		var dropped int
		res.set, res.overflowed, dropped = reg.labelSet(labels, l.cfg.maxValues)
		res.skipped += dropped
		break
	}
	return res
}
