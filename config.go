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
	// name kept by the process.
	DefaultMaxValuesPerLabel = 1000

	maxValueBytesLimit = 2048 // Pyroscope's default limit on a label value.
	minValueBytes      = 16   // room for OverflowValue and a useful prefix
	maxLabelsLimit     = 30   // Pyroscope's default limit on label names per series.
	maxValuesLimit     = 1 << 20
)

// config is what the options set. The zero value is not valid: use newConfig.
type config struct {
	maxValueBytes int
	maxLabels     int
	maxValues     int
	keepQuery     bool
	routePattern  bool                                          // WithRoutePattern or WithServeMux
	nameFunc      func(ctx context.Context, name string) string // WithNameFunc
	mux           *http.ServeMux                                // WithServeMux
}

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
	return c
}

// Option configures a [Labeler], a handler from [NewHandler] or [Middleware],
// or the interceptors of the gRPC module.
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

// WithMaxLabels caps the number of k6 labels set for one request at n. Members
// beyond it are skipped and counted in [Stats]. The default is
// [DefaultMaxLabels]; n < 1 means the default and n is at most 30, Pyroscope's
// default limit on label names per series (which your own labels share).
func WithMaxLabels(n int) Option {
	return optionFunc(func(c *config) { c.maxLabels = clamp(n, DefaultMaxLabels, maxLabelsLimit) })
}

// WithMaxValuesPerLabel caps the distinct values that one label name may take
// in this process at n. Once a name has n values, every new value is replaced
// by [OverflowValue] and counted in [Stats]; values seen before keep working.
// This bounds both the series a Pyroscope server must hold and this package's
// memory. The default is [DefaultMaxValuesPerLabel]; n < 1 means the default.
//
// The record of values seen is shared by the whole process: two handlers with
// different caps each admit values while the shared count is below their own
// cap.
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

// WithRoutePattern makes a handler from [NewHandler] or [Middleware] use the
// route pattern that Go's [http.ServeMux] matched for the request (such as
// "GET /bike/{id}") as the k6_name value, in place of the name k6 sent.
// A pattern has one value per route, whatever ids the URLs carry, which makes
// it the cheapest way to keep k6_name's cardinality low. The default is off.
//
// The mux records the pattern in [http.Request.Pattern] while routing, so the
// handler must run after routing: wrap the handlers you register, as in
// mux.Handle("GET /bike/{id}", k6labels.NewHandler(h, k6labels.WithRoutePattern())).
// Wrapped around the whole mux, it sees no pattern yet; use [WithServeMux]
// there. When there is no pattern, k6_name keeps the name k6 sent.
//
// The pattern replaces the value only of a k6.name member that the request
// carries; it adds no k6_name to requests without one. [Members] and
// [Baggage] report the pattern too. It has no effect on a [Labeler] used
// directly or on the gRPC interceptors, which see no HTTP request.
func WithRoutePattern() Option {
	return optionFunc(func(c *config) { c.routePattern = true })
}

// WithServeMux is [WithRoutePattern] for a handler that wraps the whole mux,
// as in http.ListenAndServe(addr, k6labels.NewHandler(mux, k6labels.WithServeMux(mux))):
// for a request with a k6.name member and no pattern yet, it asks
// mux.Handler(r) which pattern will match. That routes the request a second
// time (the mux routes it again to serve it), so wrapping the registered
// handlers with [WithRoutePattern] is cheaper. A nil mux means
// [WithRoutePattern] alone. The default is off.
func WithServeMux(mux *http.ServeMux) Option {
	return optionFunc(func(c *config) { c.routePattern, c.mux = true, mux })
}

// WithNameFunc sets the k6_name value of each labelled request to
// f(ctx, name), where ctx is the context being labelled and name the value
// k6 sent, cleaned. It is the naming hook of adapters that are not net/http:
// the gRPC interceptors (grpc.Method(ctx) is the call's full method) and
// [Labeler.Labels] callers. The result is cleaned like any label value; ""
// means no k6_name label. f is called only for requests with a k6.name
// member, and must be cheap and safe for concurrent use.
func WithNameFunc(f func(ctx context.Context, name string) string) Option {
	return optionFunc(func(c *config) { c.nameFunc = f })
}
