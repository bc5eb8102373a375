package k6grpc

import (
	"context"

	"github.com/k6labels/k6labels"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// UnaryClientInterceptor returns a [grpc.UnaryClientInterceptor] that adds
// the k6 members of the call's context (see [k6labels.Baggage]) to the
// outgoing "baggage" metadata, so that the service called labels its profile
// with the same test run, scenario and request name. Call with the context
// the server interceptor or the HTTP handler gave you.
//
// Baggage already in the outgoing metadata is merged with
// [k6labels.MergeBaggage]: its members are kept, a k6 key in it is replaced
// rather than sent twice, and the result stays within the W3C limits. A call
// whose context has no k6 members is passed on untouched.
func UnaryClientInterceptor() grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		return invoker(withBaggage(ctx), method, req, reply, cc, opts...)
	}
}

// StreamClientInterceptor returns a [grpc.StreamClientInterceptor] that adds
// the k6 members of the stream's context to its outgoing "baggage" metadata,
// like [UnaryClientInterceptor].
func StreamClientInterceptor() grpc.StreamClientInterceptor {
	return func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		return streamer(withBaggage(ctx), desc, cc, method, opts...)
	}
}

// withBaggage returns ctx with the k6 members of ctx in its outgoing
// baggage metadata, or ctx itself when it has none.
func withBaggage(ctx context.Context) context.Context {
	add := k6labels.Baggage(ctx)
	if add == "" {
		return ctx
	}
	existing := metadata.ValueFromOutgoingContext(ctx, baggageKey)
	if len(existing) == 0 {
		// AppendToOutgoingContext does not copy the metadata already there.
		return metadata.AppendToOutgoingContext(ctx, baggageKey, k6labels.MergeBaggage(nil, add))
	}
	md, _ := metadata.FromOutgoingContext(ctx) // a copy, keys lowercased
	md[baggageKey] = []string{k6labels.MergeBaggage(existing, add)}
	return metadata.NewOutgoingContext(ctx, md)
}

// NewClient is [grpc.NewClient] called with the calling goroutine's pprof
// labels cleared, and restored exactly afterwards. The goroutines of a
// channel (resolver, balancer, connections) start from NewClient and keep
// the labels they start with for the channel's life: created from a labelled
// handler with grpc.NewClient, they carry that request's k6 labels.
func NewClient(target string, opts ...grpc.DialOption) (conn *grpc.ClientConn, err error) {
	k6labels.Do(context.Background(), func(context.Context) { conn, err = grpc.NewClient(target, opts...) })
	return conn, err
}
