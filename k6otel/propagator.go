// Package k6otel makes k6labels work alongside OpenTelemetry.
//
// Two things need care when a service uses both k6labels and OpenTelemetry
// (otelhttp, otelgrpc, the W3C baggage propagator, and a span profiler such
// as github.com/grafana/otel-profiling-go):
//
//   - Downstream propagation. OpenTelemetry's baggage propagator replaces the
//     outgoing baggage header with the context's OTel baggage, and its parser
//     drops members whose value is not valid W3C baggage. k6 sends values
//     unencoded, so a k6.name with a space or a bare '%' (a tags.name such as
//     "GET bike") never reaches the OTel baggage and so never reaches the next
//     service. [Propagator] wraps your propagator and merges the request's
//     k6 members into the header it wrote, each key once, keeping every
//     other member; the OTel baggage in the context is left as it was.
//
//   - Code that only has the OTel baggage, such as a message consumer whose
//     headers went through a propagator, or a handler not wrapped by the
//     k6labels middleware. [Context] builds the k6-labelled context from the
//     k6 members of the context's OTel baggage, with the same parser and
//     label rules as the middleware.
//
// Span profilers need nothing from this package: the k6labels middleware
// works with otelhttp and otel-profiling-go in either order (see the README
// for why k6labels outside otelhttp is the recommended one).
package k6otel

import (
	"context"
	"net/http"

	"github.com/k6labels/k6labels"
	"go.opentelemetry.io/otel/propagation"
)

// header is the W3C baggage header name, as OpenTelemetry's carriers use it.
const header = "baggage"

// Propagator returns a propagator that injects like next and then merges the
// k6 members of the context (those [k6labels.Baggage] reports, i.e. the ones
// the k6labels middleware or gRPC interceptor labelled the request with) into
// the carrier's baggage header with [k6labels.MergeBaggage], the merge that
// [k6labels.NewTransport] uses too:
//
//   - Each k6 key is sent once. A k6 member that next's baggage propagator
//     already wrote (OpenTelemetry extracted it from the incoming header) is
//     replaced by k6labels' value, also under a key that makes the same
//     label name ("k6.my-tag" is replaced by "k6.my_tag"), so the header is
//     the same whichever of Propagator and k6labels.NewTransport runs last.
//   - Every other member next wrote is kept as written. Only the carrier is
//     changed: the OTel baggage in the context is never touched.
//   - The header stays within the W3C limits ([k6labels.MaxBaggageBytes],
//     [k6labels.MaxBaggageMembers]); when both lists do not fit, the k6
//     members go first and other members are dropped whole, never cut.
//   - A k6 member whose key is not a valid baggage key (an RFC 7230 token)
//     is sent under the key its label name stands for, as
//     [k6labels.Baggage] encodes it: "k6.bad key" as "k6.bad_key".
//   - A context without k6 members leaves the carrier exactly as next left
//     it, and costs one context lookup.
//
// Extract is next's: the k6labels middleware reads the header itself, and
// labelling in Extract would leave labels on the goroutine after the request
// (see the README). next may be nil, in which case Propagator only adds k6
// members. Wrap the propagator given to otelhttp or otelgrpc, or the global
// one:
//
//	otel.SetTextMapPropagator(k6otel.Propagator(
//		propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})))
//
// A carrier that can hold several values for a key should implement
// [propagation.ValuesGetter], as [propagation.HeaderCarrier] does; for one
// that does not, only the first value is merged (OpenTelemetry's own baggage
// propagator reads such a carrier the same way).
func Propagator(next propagation.TextMapPropagator) propagation.TextMapPropagator {
	fields := []string{header}
	if next != nil {
		fields = fields[:0]
		for _, f := range next.Fields() {
			if f != header {
				fields = append(fields, f)
			}
		}
		fields = append(fields, header)
	}
	return &propagator{next: next, fields: fields}
}

type propagator struct {
	next   propagation.TextMapPropagator
	fields []string
}

// Inject implements propagation.TextMapPropagator.
func (p *propagator) Inject(ctx context.Context, carrier propagation.TextMapCarrier) {
	if p.next != nil {
		p.next.Inject(ctx, carrier)
	}
	k6 := k6labels.Baggage(ctx) // valid baggage: the root package ensures it
	if k6 == "" {
		return
	}
	// otelhttp's carrier is an http.Header: merge into it directly, as
	// Values and Set would each allocate to canonicalize "baggage", and
	// would miss lines set under another case.
	if hc, ok := carrier.(propagation.HeaderCarrier); ok {
		k6labels.MergeBaggageHeader(http.Header(hc), k6)
		return
	}
	var lines []string
	if vg, ok := carrier.(propagation.ValuesGetter); ok {
		lines = vg.Values(header)
	} else if v := carrier.Get(header); v != "" {
		lines = []string{v}
	}
	if merged := k6labels.MergeBaggage(lines, k6); merged != "" {
		carrier.Set(header, merged)
	}
}

// Extract implements propagation.TextMapPropagator: it is next's Extract.
func (p *propagator) Extract(ctx context.Context, carrier propagation.TextMapCarrier) context.Context {
	if p.next == nil {
		return ctx
	}
	return p.next.Extract(ctx, carrier)
}

// Fields implements propagation.TextMapPropagator: next's fields and
// "baggage".
func (p *propagator) Fields() []string {
	return append([]string(nil), p.fields...)
}
