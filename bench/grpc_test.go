package bench

import (
	"context"
	"runtime/pprof"
	"testing"

	"github.com/k6labels/k6labels"
	"github.com/k6labels/k6labels/k6grpc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

var unaryImpls = []struct {
	name string
	new  func() grpc.UnaryServerInterceptor
}{
	{"baseline", func() grpc.UnaryServerInterceptor { return BaselineUnary }},
	{"k6labels", func() grpc.UnaryServerInterceptor {
		return k6grpc.UnaryServerInterceptor(k6labels.WithRegistry(k6labels.NewRegistry(0)))
	}},
}

// incoming returns the incoming contexts grpc-go hands a server interceptor
// for calls with each set of baggage values.
func incoming(lines [][]string) []context.Context {
	out := make([]context.Context, len(lines))
	for i, l := range lines {
		// What grpc-go's server puts in the metadata of a call.
		md := metadata.Pairs(":authority", "127.0.0.1:50051", "content-type", "application/grpc", "user-agent", "grpc-go/1.85.0")
		if l != nil {
			md["baggage"] = l
		}
		out[i] = metadata.NewIncomingContext(context.Background(), md)
	}
	return out
}

// BenchmarkUnary is the handler table's traffic through the unary server
// interceptors, called as grpc-go calls them.
func BenchmarkUnary(b *testing.B) {
	info := &grpc.UnaryServerInfo{FullMethod: "/grpc.testing.TestService/UnaryCall"}
	handler := func(context.Context, any) (any, error) { return nil, nil }
	for _, tr := range traffics {
		ctxs := incoming(tr.lines)
		for _, impl := range unaryImpls {
			b.Run("header="+tr.name+"/impl="+impl.name, func(b *testing.B) {
				intercept := impl.new()
				cycle(b, len(ctxs), func(i int) { intercept(ctxs[i], nil, info, handler) })
			})
		}
	}
}

// TestBaselineUnaryLabels: both interceptors label the k6 rows.
func TestBaselineUnaryLabels(t *testing.T) {
	info := &grpc.UnaryServerInfo{}
	for _, impl := range unaryImpls {
		for _, tr := range k6Traffics {
			intercept := impl.new()
			for i, ctx := range incoming(tr.lines[:min(3, len(tr.lines))]) {
				var got string
				intercept(ctx, nil, info, func(ctx context.Context, _ any) (any, error) {
					got, _ = pprof.Label(ctx, "k6_scenario")
					return nil, nil
				})
				if got != "default" {
					t.Fatalf("%s, %s call %d: k6_scenario = %q, want default", impl.name, tr.name, i, got)
				}
			}
		}
	}
}
