package k6labels

import (
	"time"

	"github.com/k6labels/k6labels/internal/counters"
	"github.com/k6labels/k6labels/internal/linecache"
)

// DefaultWindow is how long the process-wide [Registry] keeps a label value
// (or label name) that no request has carried: 20 of pyroscope-go's 15 s
// upload periods. A test run keeps its place as long as it sends requests,
// and a finished one gives it up within minutes.
const DefaultWindow = 5 * time.Minute

// A Registry holds the label values in use, for the cardinality caps, and
// the caches that make a repeated header cost no allocation. A value (or
// label name) not carried by any request for the Registry's window gives up
// its place. Every Labeler uses the process-wide Registry unless given
// [WithRegistry]; its memory is bounded whatever the traffic and however
// many Labelers share it (see the package documentation).
type Registry struct {
	// The stages of a request, in the order Labeler.label calls them. Their
	// bounds hold per Registry, whatever the number of Labelers, handlers
	// and interceptors that share it.
	lines  linecache.Cache[lineResult] // header line → its labels before the caps
	sets   setCache                    // labels → the one labelSet they make
	caps   valueCaps                   // per-name value caps, the name cap, the sweeper
	counts counters.Set                // Stats
}

// lineEntry caches what one header line comes to under one Labeler
// configuration (its config key).
type lineEntry = linecache.Entry[lineResult]

// lineResult is what a header line comes to: the set of its labels before
// the caps (nil: no labels) and what the parse counted.
type lineResult struct {
	set       *labelSet
	skipped   int
	truncated bool
	urlTail   bool // the line's last member is a URL name: the line with a query string appended makes the same labels
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
	r.caps.ticker = time.AfterFunc(time.Hour, r.caps.tick)
	r.caps.ticker.Stop()
	return r
}

// newRegistry is NewRegistry on clock now (nanoseconds, monotonic) and
// without a sweeping timer: a test clock's test ticks.
func newRegistry(window time.Duration, now func() int64) *Registry {
	r := new(Registry)
	r.lines.Init()
	r.sets.init()
	r.caps.init(window, now)
	return r
}

var defaultRegistry = NewRegistry(0)

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
	return Counters(r.counts.Sum())
}

// Stats returns the counters of the process-wide Registry, which every
// Labeler uses unless given [WithRegistry].
func Stats() Counters {
	return defaultRegistry.Stats()
}
