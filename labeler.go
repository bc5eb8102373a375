package k6labels

import (
	"context"
	"net/http"
	"runtime/pprof"
	"strings"
	"unsafe"

	"github.com/k6labels/k6labels/internal/linecache"
	"github.com/k6labels/k6labels/internal/w3c"
)

// A Labeler turns the k6 members of a baggage list into pprof labels. It is
// safe for concurrent use; the HTTP handler and the gRPC interceptors are thin
// wrappers around one. The zero Labeler uses the default options.
type Labeler struct {
	cfg config
}

// NewLabeler returns a Labeler with the given options. It panics if one of
// them names requests from an *http.Request ([WithNameFormatter],
// [WithRoutePattern], [WithServeMux]): a Labeler, and the adapters built on
// it, never have one, so the option would be ignored. Use [WithNameFunc].
func NewLabeler(opts ...Option) *Labeler {
	l := newLabeler(opts)
	if name := l.cfg.httpOnly; name != "" {
		panic("k6labels: " + name + " names requests in the HTTP handler only (NewHandler, Middleware); " +
			"a Labeler, the gRPC interceptors and k6fasthttp would ignore it: use WithNameFunc")
	}
	return l
}

// newLabeler is NewLabeler for the HTTP handler, which takes every option.
func newLabeler(opts []Option) *Labeler {
	return &Labeler{cfg: newConfig(opts)}
}

func (l *Labeler) config() *config {
	if l.cfg.key == 0 {
		return &defaultConfig
	}
	return &l.cfg
}

// Labels returns a context derived from ctx that carries pprof labels for the
// k6 members of baggage, merged with ctx's own labels (the k6 ones win and
// replace those an earlier Labels gave ctx), and the members themselves for
// [Members] and [Baggage]; ok reports whether there were any. Without k6
// members it returns ctx itself and false. baggage holds the header lines
// (or gRPC metadata values) as received; they may point into buffers that
// are reused once Labels returns.
//
// Labels only builds the context; [Do] puts its labels on the goroutine.
func (l *Labeler) Labels(ctx context.Context, baggage []string) (_ context.Context, ok bool) {
	if c, _ := l.label(ctx, baggage, nil); c != nil {
		return c, true
	}
	return ctx, false
}

// Context is [Labeler.Labels] without ok.
func (l *Labeler) Context(ctx context.Context, baggage []string) context.Context {
	ctx, _ = l.Labels(ctx, baggage)
	return ctx
}

// label is [Labeler.Labels] for every adapter: r is the request of the HTTP
// handler, nil elsewhere. It runs the stages in order (line cache, or on a
// miss the parse and the set cache; naming; caps; counters) and returns the
// labelled context, nil without k6 labels; same reports that it is ctx
// itself, which already carries exactly these labels (a second handler).
func (l *Labeler) label(ctx context.Context, baggage []string, r *http.Request) (c *labelledContext, same bool) {
	if len(baggage) == 0 {
		return nil, false
	}
	cfg := l.config()
	reg := cfg.reg()
	var e *lineEntry
	var key string // the line's cache key, when it may be cached
	owned := false // key is a copy of ours
	if len(baggage) == 1 && len(baggage[0]) <= linecache.MaxLine {
		// 1,833 vs 7,063 instructions per k6 request, cached vs parsed (BenchmarkHandler/Jslib, Valgrind)
		e, key, owned = cachedLine(reg, cfg, baggage[0])
		if e != nil && e.Val.set == nil { // a line remembered as making no labels
			countUnlabelled(ctx, reg, e.Val.skipped, e.Val.truncated)
			return nil, false
		}
	}
	if e == nil {
		var a w3c.Arena // here, so that only a miss pays for zeroing it
		list, skipped, truncated := collect(baggage, cfg, &a)
		var set *labelSet
		var dropped int
		if list.n > 0 {
			set, dropped = reg.sets.get(cfg.key, list.l[:list.n])
		}
		if set == nil {
			countUnlabelled(ctx, reg, skipped+dropped, truncated)
			if key != "" && list.n == 0 && reg.lines.SeenOnce(cfg.key, key) {
				// Seen twice: cached as making no labels.
				cached := lineEntry{Cfg: cfg.key, Line: key, Val: lineResult{skipped: skipped, truncated: truncated}}
				if !owned {
					cached.Line = strings.Clone(key)
				}
				reg.lines.Put(&cached)
			}
			return nil, false
		}
		local := lineEntry{Cfg: cfg.key, Val: lineResult{set: set, skipped: skipped + dropped, truncated: truncated}}
		local.Val.urlTail = key != "" && !cfg.keepQuery && w3c.EndsInURLName(key[w3c.LastComma(key)+1:])
		e = &local // on the stack unless cached
		if key != "" {
			cached := local
			// A line that makes labels is cached the first time.
			if cached.Line = key; !owned {
				cached.Line = strings.Clone(key)
			}
			reg.lines.Put(&cached)
			e = &cached
		}
	}
	s, skipped := e.Val.set, e.Val.skipped
	if cfg.names(r) {
		if name, ok := s.value(k6Names[2]); ok {
			var dropped int
			s, dropped = rename(&reg.sets, s, cfg.name(ctx, r, name), cfg.maxValueBytes)
			if skipped += dropped; s == nil {
				countUnlabelled(ctx, reg, skipped, e.Val.truncated)
				return nil, false
			}
		}
	}
	a := reg.caps.admission(s, cfg.maxValues, &reg.sets)
	var parent parentLabels
	if s = a.final; s != nil {
		parent = parentOf(ctx, s)
	}
	// A request that a handler before labelled was counted there.
	if !parent.ours {
		reg.counts.Add(s != nil, skipped+a.dropped, a.overflowed, e.Val.truncated)
	}
	if s == nil {
		return nil, false
	}
	return labelled(ctx, s, parent)
}

// labelled returns the context labelled with s for a request whose context
// ctx carries parent (see label).
func labelled(ctx context.Context, s *labelSet, parent parentLabels) (*labelledContext, bool) {
	if parent.same {
		return ctx.(*labelledContext), true
	}
	c := new(labelledContext)
	c.init(ctx, s, parent.labels)
	return c, false
}

// countUnlabelled counts a request that gets no labels here, unless a
// handler before labelled it, and so counted it.
func countUnlabelled(ctx context.Context, reg *Registry, skipped int, truncated bool) {
	if (skipped > 0 || truncated) && setFrom(ctx) == nil {
		reg.counts.Add(false, skipped, 0, truncated)
	}
}

// rename returns the set that base becomes when a naming hook gives its
// k6_name the value name, cleaned ("" removes the label), and how many
// labels were left out of it to fit a baggage header. The last answer is
// kept in base, so a hook that gives each line one name costs no allocation.
func rename(sets *setCache, base *labelSet, name string, maxValueBytes int) (*labelSet, int) {
	name = cleanValue(name, maxValueBytes)
	if v, _ := base.value(k6Names[2]); v == name {
		return base, 0
	}
	// 4,756 vs 6,613 instructions per named k6 request, renamed each time (BenchmarkRoutePattern/PerHandler, Valgrind)
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
		s, dropped = sets.get(base.cfg, labels)
	}
	base.renamed.Store(&renaming{name: strings.Clone(name), set: s, dropped: dropped})
	return s, dropped
}

// cachedLine returns line's cache entry or, if there is none, the key to
// cache it under (owned: a copy, not a part of line).
func cachedLine(reg *Registry, cfg *config, line string) (e *lineEntry, key string, owned bool) {
	if cfg.keepQuery {
		return reg.lines.Get(cfg.key, line), line, false
	}
	// k6's helper sends the URL name last, with a new query string on most
	// requests. When the line's first '?' is in its last member, the line up
	// to it makes the same labels if its entry says that its last member is
	// a URL name (urlTail; a '#' before the '?' changes nothing).
	q := strings.IndexByte(line, '?')
	switch {
	case q < 0 && strings.IndexByte(line, '#') < 0: // 1,056 vs 1,253 instructions per cached k6 line without a query, 690 vs 894 non-k6, cut all the same (BenchmarkNonK6Line/line=k6, BenchmarkHandler/NonK6, Valgrind)
		return reg.lines.Get(cfg.key, line), line, false // nothing to cut
	case q >= 0 && strings.IndexByte(line[q:], ',') < 0: // 2,014 vs 2,635 instructions per k6 request with a new ?id=, cut all the same (BenchmarkHandler/NewID, Valgrind)
		e := reg.lines.Get(cfg.key, line[:q])
		if e != nil && e.Val.urlTail {
			return e, "", false
		}
		if e == nil {
			return cutLine(reg, cfg, line, q)
		}
	}
	return cutLine(reg, cfg, line, -1)
}

// cutLine is cachedLine for a line whose queries [w3c.WithoutQueries] cuts
// wherever they are; line[:missed] (unless missed < 0) is known not cached.
func cutLine(reg *Registry, cfg *config, line string, missed int) (e *lineEntry, key string, owned bool) {
	var buf [linecache.MaxLine]byte
	norm, _ := w3c.WithoutQueries(line, buf[:0])
	inLine := unsafe.StringData(norm) == unsafe.StringData(line) // line or a prefix of it
	// Not probed twice: 16,891 vs 17,294 instructions per new k6 line with a query (BenchmarkHandler/NewPathID, Valgrind).
	if inLine && len(norm) == missed {
		return nil, line[:missed], false // its probe missed already
	}
	switch e = reg.lines.Get(cfg.key, norm); {
	case e != nil:
		return e, "", false
	case inLine: // 4,749 vs 4,952 instructions, 0 vs 1 allocation per new non-k6 line with a query, cloned (BenchmarkNonK6Line/line=scanQuery, Valgrind)
		return nil, line[:len(norm)], false // not norm, so that buf stays on the stack
	}
	return nil, strings.Clone(norm), true
}

// parentLabels is what a request's context already carries.
type parentLabels struct {
	labels bool // pprof labels: the k6 ones are merged with them
	ours   bool // k6 labels, from a handler the request passed before
	same   bool // exactly the set about to be set: the context serves as it is
}

func parentOf(ctx context.Context, s *labelSet) parentLabels {
	if c, ok := ctx.(*labelledContext); ok {
		return parentLabels{labels: true, ours: true, same: c.set == s && !c.merged}
	}
	if !hasLabels(ctx) {
		return parentLabels{} // the common case
	}
	return parentLabels{labels: true, ours: setFrom(ctx) != nil}
}

// collect returns the k6 labels of baggage, sorted by name, with the
// number of members skipped and whether a limit cut the list. For a key sent
// twice the last value wins (as in OpenTelemetry); two keys that make the
// same label name count as the same key. The per-request cap is the rule of
// capped: k6's three members always keep their place. Values are decoded
// only once the cap is decided, so duplicates and capped members cost no
// decoding.
func collect(baggage []string, cfg *config, a *w3c.Arena) (labels labelList, skipped int, truncated bool) {
	// labels and kept are indexed as arrays, never through a slice, so that
	// the strings in them (and a) stay on the stack.
	sc := w3c.NewScanner(baggage, MaxBaggageBytes, MaxBaggageMembers)
	var kept capped
	for {
		key, raw, ok, more := sc.Next()
		if !more {
			break
		}
		if !ok {
			skipped++
			continue
		}
		if !isLabelKey(key) {
			if strings.HasPrefix(key, "k6.") {
				skipped++ // a k6 key too long, or empty, to name a label
			}
			continue
		}
		skipped += kept.add(key, raw, cfg.maxLabels)
	}
	// A value that decodes to "undefined" is dropped only now.
	var nameBuf [maxNameBytes]byte
	n := 0
	for i := range kept.n {
		name, _ := labelName(kept.keys[i], nameBuf[:0])
		lb := label{name: a.String(name)}
		lb.value = labelValue(lb.name, kept.raws[i], cfg.maxValueBytes, cfg.keepQuery, a)
		if lb.value != "" && lb.value != undefinedValue {
			labels.l[n] = lb
			n++
		}
	}
	labels.n = n
	return labels, skipped, sc.Truncated()
}

// A labelList is the labels of one request, sorted by name, in
// l[:n].
type labelList struct {
	n int
	l [maxLabelsLimit]label
}

// hasLabels reports whether ctx carries pprof labels (an empty set of them
// may count: merging with it changes nothing).
func hasLabels(ctx context.Context) bool {
	if labelsKey != nil {
		return ctx.Value(labelsKey) != nil
	}
	found := false
	pprof.ForLabels(ctx, func(string, string) bool {
		found = true
		return false
	})
	return found
}

// labelledContext is what Labels returns. In the common case, where the
// parent has no pprof labels, it answers pprof's lookup from the cached
// context of its label set instead of allocating a merged label map for every
// request: pprof finds its labels through Value, like any other lookup.
type labelledContext struct {
	context.Context           // the parent, or a mergedContext over it
	set             *labelSet // the k6 labels and members
	merged          bool      // Context holds the labels, merged with the parent's own
}

// mergedContext is a parent whose pprof labels are answered from labels.
type mergedContext struct {
	context.Context
	labels context.Context
}

func (c *mergedContext) Value(key any) any {
	if v := c.labels.Value(key); v != nil {
		return v
	}
	return c.Context.Value(key)
}

// init makes c the labelled context of parent with the labels of s; merge
// says that parent has pprof labels of its own.
func (c *labelledContext) init(parent context.Context, s *labelSet, merge bool) {
	// 1,843 vs 2,497 instructions and 2 vs 4 allocations per k6 request with pprof.WithLabels (BenchmarkHandler/Jslib, Valgrind)
	c.Context, c.set = parent, s
	if merge {
		// Rare: merge with the parent's labels, which costs allocations.
		if m := mergedLabels(parent, s); m != nil {
			c.Context, c.merged = &mergedContext{parent, m}, true
		}
	}
}

// mergedLabels returns a context holding the pprof labels of parent with
// those of s, which win, or nil if parent has none but k6 labels that a
// handler before gave it: s replaces those, so that labels and members agree.
func mergedLabels(parent context.Context, s *labelSet) context.Context {
	before := setFrom(parent)
	var own []string
	pprof.ForLabels(parent, func(name, value string) bool {
		if before != nil {
			if v, ok := before.value(name); ok && v == value {
				return true
			}
		}
		own = append(own, name, value)
		return true
	})
	if own == nil {
		return nil
	}
	return pprof.WithLabels(pprof.WithLabels(context.Background(), pprof.Labels(own...)), s.set)
}

// setGoroutineLabels is [pprof.SetGoroutineLabels] that, for a context of
// ours, sets what its label set learnt once, without a context lookup.
func setGoroutineLabels(ctx context.Context) {
	if c, ok := ctx.(*labelledContext); ok && !c.merged {
		c.set.put()
		return
	}
	pprof.SetGoroutineLabels(ctx)
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

// Members returns the k6 members that [Labeler.Labels] found for ctx, after
// the same cleaning as the labels (values decoded and capped, the
// cardinality cap applied), sorted by key. A key is the one the label name
// stands for ("k6.my-tag" is reported as "k6.my_tag"). It returns nil if ctx
// came from no request with k6 members.
func Members(ctx context.Context) []Member {
	s := setFrom(ctx)
	if s == nil {
		return nil
	}
	out := make([]Member, len(s.labels))
	for i, l := range s.labels {
		out[i] = Member{Key: keyOf(l.name), Value: l.value}
	}
	return out
}

// Baggage returns the k6 members of ctx encoded as a W3C baggage header value,
// ready to send to a downstream service, or "" if there are none. Values are
// percent-encoded where needed, and keys are the ones their label names stand
// for, so the next service makes the same labels. The result is always valid
// W3C baggage within [MaxBaggageBytes] and [MaxBaggageMembers]. It is built
// once per distinct label set.
func Baggage(ctx context.Context) string {
	if s := setFrom(ctx); s != nil {
		return s.encodedBaggage()
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
	setGoroutineLabels(ctx)
	f(ctx)
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
// exactly as the labels do. k6 sends its names unencoded, so value ends, as
// in the header, at its first ',' or ';', without the spaces around it.
func LabelValue(key, value string, opts ...Option) string {
	// value = *baggage-octet, ended by "," (the next member) or ";" (a
	// property), with OWS around it.
	if i := strings.IndexAny(value, ",;"); i >= 0 {
		value = value[:i]
	}
	value = w3c.TrimOWS(value)
	c := newConfig(opts)
	name, ok := labelName(key, nil)
	if !ok {
		return w3c.CleanValue(w3c.DecodeValue(value), c.maxValueBytes)
	}
	var a w3c.Arena
	return strings.Clone(labelValue(string(name), value, c.maxValueBytes, c.keepQuery, &a))
}
