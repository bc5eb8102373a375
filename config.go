package k6labels

import (
	"context"
	"net/http"
)

// Defaults and hard limits of the options. The hard limits are Pyroscope's: a
// profile that breaks one of them is rejected whole by the server.
const (
	// DefaultMaxValueBytes is the default cap on the length of a label value.
	DefaultMaxValueBytes = 256
	// DefaultMaxLabels is the default cap on k6 labels per request.
	DefaultMaxLabels = 8
	// DefaultMaxValuesPerLabel is the default cap on distinct values per label
	// name in use at once (see [WithMaxValuesPerLabel]).
	DefaultMaxValuesPerLabel = 1000

	maxValueBytesLimit = 2048   // Pyroscope's default limit on a label value.
	minValueBytes      = 16     // room for OverflowValue and a useful prefix
	maxLabelsLimit     = 30     // Pyroscope's default limit on label names per series.
	maxValuesLimit     = 10_000 // twice Pyroscope's smallest per-tenant series limit
)

// config is what the options set. Its zero value stands for the defaults.
type config struct {
	maxValueBytes int
	maxLabels     int
	maxValues     int
	keepQuery     bool
	registry      *Registry                                     // nil: the process-wide one
	nameFunc      func(ctx context.Context, name string) string // WithNameFunc
	nameFormatter func(r *http.Request, name string) string     // WithNameFormatter, WithRoutePattern, WithServeMux
	httpOnly      string                                        // the name of the last of those given, for NewLabeler's panic
	key           uint64                                        // the options that decide labels, packed: never 0
}

var defaultConfig = newConfig(nil)

func newConfig(opts []Option) config {
	c := config{
		maxValueBytes: DefaultMaxValueBytes,
		maxLabels:     DefaultMaxLabels,
		maxValues:     DefaultMaxValuesPerLabel,
	}
	for _, o := range opts {
		if o != nil {
			o.apply(&c)
		}
	}
	c.key = configKey(c.maxValueBytes, c.maxLabels, c.maxValues, c.keepQuery)
	return c
}

// The fields of a config key, from bit 0: maxValueBytes, maxLabels,
// maxValues, keepQuery. Each field's shift is the end of the one before.
const (
	keyLabelsShift = 12
	keyValuesShift = 17
	keyQueryShift  = 31
)

// Each limit fits below the next field, and a key is never 0 (the line
// cache's mark of a line seen once, and the zero config's "use defaults").
const (
	_ uint = 1<<keyLabelsShift - 1 - maxValueBytesLimit
	_ uint = 1<<(keyValuesShift-keyLabelsShift) - 1 - maxLabelsLimit
	_ uint = 1<<(keyQueryShift-keyValuesShift) - 1 - maxValuesLimit
	_ uint = minValueBytes - 1
	_ uint = 63 - keyQueryShift
)

// configKey packs the options that decide labels into one word: two
// configurations make the same labels from every header iff their keys
// are equal. Each argument is within its option's limits.
func configKey(maxValueBytes, maxLabels, maxValues int, keepQuery bool) uint64 {
	key := uint64(maxValueBytes) | uint64(maxLabels)<<keyLabelsShift | uint64(maxValues)<<keyValuesShift
	if keepQuery {
		key |= 1 << keyQueryShift
	}
	return key
}

// names reports whether c renames requests: r is the request of the HTTP
// handler, nil elsewhere. See name.
func (c *config) names(r *http.Request) bool {
	return c.nameFunc != nil || c.nameFormatter != nil && r != nil
}

// name returns the k6_name value that c gives a request that k6 named name:
// the HTTP handler's [WithNameFormatter] for an HTTP request r, else
// [WithNameFunc]. Every adapter names requests here.
func (c *config) name(ctx context.Context, r *http.Request, name string) string {
	if c.nameFormatter != nil && r != nil {
		return c.nameFormatter(r, name)
	}
	return c.nameFunc(ctx, name)
}

// reg returns the Registry of c.
func (c *config) reg() *Registry {
	if c.registry != nil {
		return c.registry
	}
	return defaultRegistry
}

// Option configures a [Labeler], a handler from [NewHandler] or [Middleware],
// or the interceptors and handlers of the other k6labels modules. The naming
// options of the HTTP handler ([WithNameFormatter], [WithRoutePattern],
// [WithServeMux]) apply to NewHandler and Middleware only: [NewLabeler], and
// so the gRPC interceptors and k6fasthttp, panic when given one.
type Option interface {
	apply(*config)
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// clamp returns def for n < 1 and limit for n > limit.
func clamp(n, def, limit int) int {
	switch {
	case n < 1:
		return def
	case n > limit:
		return limit
	}
	return n
}

// WithMaxValueBytes caps the length of each label value at n bytes. Longer
// values are cut at the last whole UTF-8 character that fits. The default is
// [DefaultMaxValueBytes]; n < 1 means the default, n below 16 means 16 (room
// for [OverflowValue]), and n is at most 2048, the largest value Pyroscope
// accepts by default.
func WithMaxValueBytes(n int) Option {
	return optionFunc(func(c *config) {
		c.maxValueBytes = max(clamp(n, DefaultMaxValueBytes, maxValueBytesLimit), minValueBytes)
	})
}

// WithMaxLabels caps the number of k6 labels set for one request at n.
// k6.test_run_id, k6.scenario and k6.name (in that order) always keep their
// places, whatever comes before them; the other k6 members fill the rest in
// label-name order, so the member order never matters. Members left out are
// counted in [Stats]. The default is [DefaultMaxLabels]; n < 1 means the
// default and n is at most 30, Pyroscope's default limit on label names per
// series (which your own labels share).
func WithMaxLabels(n int) Option {
	return optionFunc(func(c *config) { c.maxLabels = clamp(n, DefaultMaxLabels, maxLabelsLimit) })
}

// WithMaxValuesPerLabel caps at n the distinct values of one label name in
// use at once in the [Registry]. A new value beyond it is replaced by
// [OverflowValue] and counted in [Stats]; values in use keep working, and a
// value no request carried for the registry's window gives up its place.
// The default is [DefaultMaxValuesPerLabel]; n < 1 means the default and n is
// at most 10000.
//
// Labelers with different caps that share a Registry agree on every value it
// holds; each admits a new value only while the name has fewer than its cap.
func WithMaxValuesPerLabel(n int) Option {
	return optionFunc(func(c *config) { c.maxValues = clamp(n, DefaultMaxValuesPerLabel, maxValuesLimit) })
}

// WithQueryStrings controls whether a k6.name value that is a URL keeps its
// query string and fragment. k6 names an untagged request by its full URL, so
// ids in the query would otherwise make a new label value per request. The
// default is false: "http://host/bike?id=3#top" becomes "http://host/bike".
func WithQueryStrings(keep bool) Option {
	return optionFunc(func(c *config) { c.keepQuery = keep })
}

// WithRegistry makes the Labeler record its label values, and cache its label
// sets, in r instead of the process-wide Registry. A nil r means the
// process-wide one.
func WithRegistry(r *Registry) Option {
	return optionFunc(func(c *config) { c.registry = r })
}

// WithNameFunc sets the k6_name value of each labelled request to
// f(ctx, name), where ctx is the context being labelled and name the value
// k6 sent, cleaned: the naming hook of [Labeler.Labels] and of adapters that
// are not net/http (the gRPC interceptors: grpc.Method(ctx) is the call's
// method). The result is cleaned like any label value; "" means no k6_name.
// f runs only for requests with a k6.name member; it must be safe for
// concurrent use.
func WithNameFunc(f func(ctx context.Context, name string) string) Option {
	return optionFunc(func(c *config) { c.nameFunc = f })
}

// WithNameFormatter is the naming hook of the HTTP handler: it sets the
// k6_name value of each labelled request to f(r, name), where name is the
// value k6 sent, cleaned (f may return it). Use it to name requests by route
// (chi.RouteContext(r.Context()).RoutePattern(), mux.CurrentRoute(r)...).
// The result is cleaned like any label value; "" means no k6_name. f runs
// only for requests with a k6.name member; it must be safe for concurrent
// use. It takes precedence over [WithNameFunc] in the HTTP handler. It is an
// option of [NewHandler] and [Middleware] only: [NewLabeler] panics with it.
func WithNameFormatter(f func(r *http.Request, name string) string) Option {
	return httpOption("WithNameFormatter", f)
}

// httpOption is a naming option of the HTTP handler only, named name.
func httpOption(name string, f func(r *http.Request, name string) string) Option {
	return optionFunc(func(c *config) { c.nameFormatter, c.httpOnly = f, name })
}

// WithRoutePattern is [WithNameFormatter] with the route pattern that Go's
// [http.ServeMux] matched for the request (such as "GET /bike/{id}"), or the
// name k6 sent when there is none. A pattern has one value per route,
// whatever ids the URLs carry.
//
// The mux records the pattern in [http.Request.Pattern] while routing, so the
// handler must run after routing: wrap the handlers you register, as in
// mux.Handle("GET /bike/{id}", k6labels.NewHandler(h, k6labels.WithRoutePattern())).
// Wrapped around the whole mux, it sees no pattern yet; use [WithServeMux]
// there. Like WithNameFormatter, it is an option of NewHandler and Middleware
// only.
func WithRoutePattern() Option {
	return httpOption("WithRoutePattern", routePattern)
}

// WithServeMux is [WithRoutePattern] for a handler that wraps the whole mux,
// as in http.ListenAndServe(addr, k6labels.NewHandler(mux, k6labels.WithServeMux(mux))):
// for a request with no pattern yet, it asks mux.Handler(r) which pattern
// will match. That routes the request a second time, so wrapping the
// registered handlers with [WithRoutePattern] is cheaper. A nil mux means
// [WithRoutePattern]. It is an option of NewHandler and Middleware only.
func WithServeMux(mux *http.ServeMux) Option {
	if mux == nil {
		return httpOption("WithServeMux", routePattern)
	}
	return httpOption("WithServeMux", func(r *http.Request, name string) string { return muxPattern(mux, r, name) })
}
