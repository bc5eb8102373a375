package k6labels

import (
	"net/http"
	"strings"
)

// NewTransport wraps base so that a request whose context carries k6 members
// (the context a handler from [NewHandler] or a gRPC interceptor gave the
// code that sends it) takes them to the next service in its baggage header.
// The next service, running this package too, then labels its own profile
// with the same test run, scenario and request name. A nil base means
// [http.DefaultTransport].
//
// The k6 members are merged into a baggage header the request already has
// with [MergeBaggage]: no key is sent twice and the W3C limits hold. The
// request is cloned before its header is changed, as an
// [http.RoundTripper] must not modify the request it is given. A request
// without k6 members in its context is passed to base untouched.
//
// Use it as the Transport of the [http.Client] the service calls others
// with, and send each request with the incoming request's context
// (http.NewRequestWithContext(r.Context(), ...)).
//
// Like [UnlabelledTransport], it runs base's RoundTrip with the goroutine's
// pprof labels cleared, so that connection goroutines it starts are not
// labelled with one request's labels for the connection's life.
func NewTransport(base http.RoundTripper) http.RoundTripper {
	return &transport{base: base, propagate: true}
}

// transport is both wrappers: it runs base's RoundTrip unlabelled and, if
// propagate is set, sends the context's k6 members on first.
type transport struct {
	base      http.RoundTripper
	propagate bool
}

func (t *transport) next() http.RoundTripper {
	if t.base == nil {
		return http.DefaultTransport
	}
	return t.base
}

// RoundTrip implements [http.RoundTripper].
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !t.propagate {
		return roundTripUnlabelled(t.next(), req)
	}
	add := Baggage(req.Context())
	if add == "" {
		return roundTripUnlabelled(t.next(), req)
	}
	r := req.Clone(req.Context())
	if r.Header == nil {
		r.Header = make(http.Header)
	}
	MergeBaggageHeader(r.Header, add)
	return roundTripUnlabelled(t.next(), r)
}

// MergeBaggageHeader merges the baggage members add into h's baggage header
// with [MergeBaggage], in place, leaving one "Baggage" line, or none if no
// valid member is left. Lines under a
// key in another case ("baggage", set by map assignment, which Go sends as
// it is) count too, and are removed: otherwise the next service would see
// two values for a key. h must not be nil.
func MergeBaggageHeader(h http.Header, add string) {
	lines := h["Baggage"]
	for k, v := range h {
		if k != "Baggage" && strings.EqualFold(k, "Baggage") {
			lines = append(lines[:len(lines):len(lines)], v...)
			delete(h, k)
		}
	}
	if m := MergeBaggage(lines, add); m != "" {
		h["Baggage"] = []string{m}
	} else {
		delete(h, "Baggage") // an empty line is not valid baggage
	}
}

// CloseIdleConnections closes the idle connections of the wrapped transport,
// if it has that method, so that [http.Client.CloseIdleConnections] keeps
// working through the wrapper.
func (t *transport) CloseIdleConnections() {
	if c, ok := t.next().(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// UnlabelledTransport wraps base (nil means [http.DefaultTransport]) so that
// its RoundTrip runs with the calling goroutine's pprof labels cleared, and
// the goroutine gets exactly its labels back when RoundTrip returns.
// Goroutines base starts meanwhile (dialling, connection read and write
// loops, HTTP/2 request writers) start unlabelled; reading the response
// body afterwards runs labelled. [NewTransport] already does this.
func UnlabelledTransport(base http.RoundTripper) http.RoundTripper {
	return &transport{base: base}
}

// roundTripUnlabelled calls rt.RoundTrip(req) with the goroutine's labels
// cleared. A goroutine copies its creator's labels when it starts: an
// http.Transport that dials from inside a labelled handler would otherwise
// start connection goroutines that keep that request's labels, and the CPU
// of every later request on the connection, labelled or not, with them.
func roundTripUnlabelled(rt http.RoundTripper, req *http.Request) (*http.Response, error) {
	prev := getProfLabel()
	if prev == nil { // 127 vs 177 instructions per request without k6 labels, deferred (BenchmarkTransport/NoK6, Valgrind)
		return rt.RoundTrip(req)
	}
	setProfLabel(nil)
	defer setProfLabel(prev)
	return rt.RoundTrip(req)
}
