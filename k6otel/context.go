package k6otel

import (
	"context"
	"slices"
	"strings"

	"github.com/k6labels/k6labels"
	"go.opentelemetry.io/otel/baggage"
)

var defaultLabeler = k6labels.NewLabeler()

// Context returns ctx with the pprof labels of the k6 members ("k6." keys) of
// ctx's OpenTelemetry baggage, built by l as [k6labels.Labeler.Context] builds
// them from a header; a nil l means [k6labels.NewLabeler] with no options.
// Pass the result to [k6labels.Do] to put the labels on the goroutine.
//
// Use it where only the OTel baggage arrives: a message consumer that
// extracted its headers with a propagator, or a handler that otelhttp or
// otelgrpc wraps but the k6labels middleware does not. Where the baggage
// header itself is at hand, prefer the middleware: OpenTelemetry's parser
// drops a member whose value is not valid W3C baggage, such as a k6.name
// sent with a space in it, so Context cannot label what it never received.
//
// If ctx already carries k6 members (the middleware or an interceptor ran),
// or its OTel baggage has no k6 member, Context returns ctx itself. The OTel
// baggage is only read.
func Context(ctx context.Context, l *k6labels.Labeler) context.Context {
	if k6labels.Baggage(ctx) != "" {
		return ctx
	}
	bag := baggage.FromContext(ctx)
	if bag.Len() == 0 {
		return ctx
	}
	members := bag.Members()
	// A Baggage is a map: sort so that two keys making the same label name
	// ("k6.a-b", "k6.a_b") resolve the same way every time.
	slices.SortFunc(members, func(a, b baggage.Member) int { return strings.Compare(a.Key(), b.Key()) })
	var b strings.Builder
	for _, m := range members {
		if !strings.HasPrefix(m.Key(), "k6.") {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		// Member.String encodes the value as a header would carry it, so the
		// k6labels parser sees exactly what a header would have given it.
		b.WriteString(m.String())
	}
	if b.Len() == 0 {
		return ctx
	}
	if l == nil {
		l = defaultLabeler
	}
	return l.Context(ctx, []string{b.String()})
}
