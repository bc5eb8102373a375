package k6grpc_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/k6labels/k6labels/k6grpc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// The cases of the HTTP handler's benchmarks in the root package, for the
// unary interceptor called directly with the metadata grpc-go would hand it.
func benchmarkUnary(b *testing.B, lines []string) {
	md := metadata.MD{
		":authority":   {"127.0.0.1:50051"},
		"content-type": {"application/grpc"},
		"user-agent":   {"grpc-go/1.85.0"},
	}
	if lines != nil {
		md["baggage"] = lines
	}
	ctx := metadata.NewIncomingContext(context.Background(), md)
	info := &grpc.UnaryServerInfo{FullMethod: "/grpc.testing.TestService/UnaryCall"}
	handler := func(context.Context, any) (any, error) { return nil, nil }
	b.ReportAllocs()
	for b.Loop() {
		k6grpc.LabelsFromBaggageUnaryInterceptor(ctx, nil, info, handler)
	}
}

func BenchmarkUnaryServerInterceptor(b *testing.B) {
	var many []string
	for i := range 64 {
		many = append(many, "k6.m"+strconv.Itoa(i)+"=value"+strconv.Itoa(i))
	}
	b.Run("NoHeader", func(b *testing.B) { benchmarkUnary(b, nil) })
	b.Run("NonK6", func(b *testing.B) {
		benchmarkUnary(b, []string{"userId=alice,serverNode=DF%2028,isProduction=false"})
	})
	b.Run("Jslib", func(b *testing.B) { benchmarkUnary(b, []string{k6Header}) })
	b.Run("Members64", func(b *testing.B) { benchmarkUnary(b, []string{strings.Join(many, ", ")}) })
}

func BenchmarkUnaryClientInterceptor(b *testing.B) {
	invoker := func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error { return nil }
	intercept := k6grpc.UnaryClientInterceptor()
	run := func(b *testing.B, ctx context.Context) {
		b.ReportAllocs()
		for b.Loop() {
			intercept(ctx, "/grpc.testing.TestService/UnaryCall", nil, nil, nil, invoker)
		}
	}
	b.Run("NoK6", func(b *testing.B) { run(b, context.Background()) })
	b.Run("K6", func(b *testing.B) { run(b, k6Context(b)) })
	b.Run("K6Existing", func(b *testing.B) {
		run(b, metadata.AppendToOutgoingContext(k6Context(b), "baggage", "userId=alice"))
	})
}
