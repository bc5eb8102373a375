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
//
// The call runs with the goroutine's pprof labels cleared, as with
// [NewClient]'s channels.
func UnaryClientInterceptor() grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		return invokeUnlabelled(withBaggage(ctx), method, req, reply, cc, invoker, opts...)
	}
}

// StreamClientInterceptor returns a [grpc.StreamClientInterceptor] that adds
// the k6 members of the stream's context to its outgoing "baggage" metadata,
// like [UnaryClientInterceptor].
func StreamClientInterceptor() grpc.StreamClientInterceptor {
	return func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		return streamUnlabelled(withBaggage(ctx), desc, cc, method, streamer, opts...)
	}
}

// unlabelled runs f with the goroutine's pprof labels cleared, and puts
// them back exactly. A call may reconnect a channel from the caller's
// goroutine (after a GOAWAY, a restart, an idle timeout): the connection's
// goroutines start from it and would keep the labels of that one request
// for the connection's life. The call's own work is left unlabelled too,
// as [k6labels.NewTransport] does for HTTP.
func unlabelled(f func()) {
	k6labels.Do(context.Background(), func(context.Context) { f() })
}

// invokeUnlabelled and streamUnlabelled are the interceptors that clear the
// labels for a call.
func invokeUnlabelled(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) (err error) {
	unlabelled(func() { err = invoker(ctx, method, req, reply, cc, opts...) })
	return err
}

func streamUnlabelled(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (cs grpc.ClientStream, err error) {
	unlabelled(func() { cs, err = streamer(ctx, desc, cc, method, opts...) })
	if err != nil {
		return nil, err
	}
	return unlabelledStream{cs}, nil
}

// unlabelledStream runs the methods that may pick a connection again (a
// retried stream does) with the labels cleared.
type unlabelledStream struct {
	grpc.ClientStream
}

func (s unlabelledStream) SendMsg(m any) (err error) {
	unlabelled(func() { err = s.ClientStream.SendMsg(m) })
	return err
}

func (s unlabelledStream) RecvMsg(m any) (err error) {
	unlabelled(func() { err = s.ClientStream.RecvMsg(m) })
	return err
}

func (s unlabelledStream) Header() (md metadata.MD, err error) {
	unlabelled(func() { md, err = s.ClientStream.Header() })
	return md, err
}

func (s unlabelledStream) CloseSend() (err error) {
	unlabelled(func() { err = s.ClientStream.CloseSend() })
	return err
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
// labels cleared, and restored exactly afterwards, whose calls run with them
// cleared too (the last interceptors of the chain). The goroutines of a
// channel (resolver, balancer, connections) start from NewClient or from a
// call that reconnects, and keep the labels they start with: made from a
// labelled handler with grpc.NewClient, they carry that request's k6 labels.
func NewClient(target string, opts ...grpc.DialOption) (conn *grpc.ClientConn, err error) {
	opts = append(opts[:len(opts):len(opts)],
		grpc.WithChainUnaryInterceptor(invokeUnlabelled),
		grpc.WithChainStreamInterceptor(streamUnlabelled))
	unlabelled(func() { conn, err = grpc.NewClient(target, opts...) })
	return conn, err
}
