package k6grpc

import (
	"context"

	"github.com/k6labels/k6labels"
	"google.golang.org/grpc"
)

// baggageKey is the metadata key of W3C baggage. gRPC metadata keys arrive
// lowercase, and each baggage header field of the request is one value.
const baggageKey = "baggage"

var defaultInterceptors = newInterceptors(k6labels.NewLabeler())

// LabelsFromBaggageUnaryInterceptor is a [grpc.UnaryServerInterceptor] that
// serves each call carrying k6 baggage with pprof labels k6_test_run_id,
// k6_scenario, k6_name (and any other "k6." member, named the same way) on
// its goroutine and in the context handed to the handler. When the handler
// returns or panics, the goroutine gets back exactly the labels it had
// before, so a stream worker goroutine that grpc-go reuses for the next call
// does not carry them over. A call with no usable k6 member is passed on as
// it came.
//
// It has the name, signature and defaults of the interceptor in pyroscope-go's
// x/k6 package: grpc.UnaryInterceptor(k6grpc.LabelsFromBaggageUnaryInterceptor).
func LabelsFromBaggageUnaryInterceptor(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	return defaultInterceptors.unary(ctx, req, info, handler)
}

// LabelsFromBaggageStreamInterceptor is the [grpc.StreamServerInterceptor]
// counterpart of [LabelsFromBaggageUnaryInterceptor]: the labels are set on
// the goroutine that runs the stream handler, and the stream's Context
// returns the labelled context, so that goroutines the handler starts with
// it carry them too.
//
// It has the name, signature and defaults of the interceptor in pyroscope-go's
// x/k6 package: grpc.StreamInterceptor(k6grpc.LabelsFromBaggageStreamInterceptor).
func LabelsFromBaggageStreamInterceptor(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	return defaultInterceptors.stream(srv, ss, info, handler)
}

// UnaryServerInterceptor is [LabelsFromBaggageUnaryInterceptor] with options,
// the same as those of the HTTP handler (k6labels.WithMaxValueBytes and so
// on) but its naming options: it panics, as k6labels.NewLabeler does, with
// k6labels.WithNameFormatter, WithRoutePattern or WithServeMux, which a call
// could never use (name calls with k6labels.WithNameFunc).
func UnaryServerInterceptor(opts ...k6labels.Option) grpc.UnaryServerInterceptor {
	return newInterceptors(k6labels.NewLabeler(opts...)).unary
}

// StreamServerInterceptor is [LabelsFromBaggageStreamInterceptor] with
// options, those of [UnaryServerInterceptor] (it panics on the same ones).
func StreamServerInterceptor(opts ...k6labels.Option) grpc.StreamServerInterceptor {
	return newInterceptors(k6labels.NewLabeler(opts...)).stream
}

type interceptors struct {
	labeler *k6labels.Labeler
}

func newInterceptors(l *k6labels.Labeler) *interceptors {
	return &interceptors{labeler: l}
}

func (i *interceptors) unary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	lines := incomingBaggage(ctx)
	if len(lines) == 0 {
		return handler(ctx, req)
	}
	lctx, ok := i.labeler.Labels(ctx, lines)
	if !ok {
		return handler(ctx, req)
	}
	var resp any
	var err error
	k6labels.DoRequest(lctx, func(ctx context.Context) { resp, err = handler(ctx, req) })
	return resp, err
}

func (i *interceptors) stream(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	lctx, ok := i.labeler.Labels(ss.Context(), incomingBaggage(ss.Context()))
	if !ok {
		return handler(srv, ss)
	}
	var err error
	k6labels.DoRequest(lctx, func(ctx context.Context) { err = handler(srv, &serverStream{ServerStream: ss, ctx: ctx}) })
	return err
}

// serverStream is a grpc.ServerStream whose Context is the labelled one.
type serverStream struct {
	grpc.ServerStream
	ctx context.Context
}

// Context returns the stream's context with the k6 labels and members.
func (s *serverStream) Context() context.Context { return s.ctx }
