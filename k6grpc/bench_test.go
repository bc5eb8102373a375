package k6grpc_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/k6labels/k6labels"
	"github.com/k6labels/k6labels/k6grpc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// jslib is the baggage k6's helper 1.0.2 sends for an untagged request.
func jslib(url string) string {
	return "k6.test_run_id=123456,k6.scenario=default,k6.name=" + url
}

// callContexts returns the incoming contexts grpc-go would hand the
// interceptor for calls of method with each baggage value (none for "").
func callContexts(method string, baggage ...string) []context.Context {
	out := make([]context.Context, len(baggage))
	for i, b := range baggage {
		md := metadata.MD{
			":authority":   {"127.0.0.1:50051"},
			"content-type": {"application/grpc"},
			"user-agent":   {"grpc-go/1.85.0"},
		}
		if b != "" {
			md["baggage"] = []string{b}
		}
		ctx := metadata.NewIncomingContext(context.Background(), md)
		out[i] = grpc.NewContextWithServerTransportStream(ctx, &transportStream{method: method})
	}
	return out
}

// transportStream stands in for grpc-go's stream, which grpc.Method reads.
type transportStream struct {
	grpc.ServerTransportStream
	method string
}

func (s *transportStream) Method() string { return s.method }

// byMethod is the FullMethod naming recipe of ExampleUnaryServerInterceptor_fullMethod.
var byMethod = k6labels.WithNameFunc(func(ctx context.Context, name string) string {
	if m, ok := grpc.Method(ctx); ok {
		return m
	}
	return name
})

func benchmarkUnary(b *testing.B, intercept grpc.UnaryServerInterceptor, ctxs []context.Context) {
	info := &grpc.UnaryServerInfo{FullMethod: "/grpc.testing.TestService/UnaryCall"}
	handler := func(context.Context, any) (any, error) { return nil, nil }
	for _, ctx := range ctxs { // warm the caches
		intercept(ctx, nil, info, handler)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		intercept(ctxs[i], nil, info, handler)
		if i++; i == len(ctxs) {
			i = 0
		}
	}
}

// BenchmarkUnaryServerInterceptor: the rows of the HTTP handler's table, for
// the unary interceptor called with the metadata grpc-go would hand it.
func BenchmarkUnaryServerInterceptor(b *testing.B) {
	const method = "/grpc.testing.TestService/UnaryCall"
	var many []string
	for i := range 64 {
		many = append(many, "k6.m"+strconv.Itoa(i)+"=value"+strconv.Itoa(i))
	}
	varying := make([]string, 1<<14)
	for i := range varying {
		varying[i] = jslib("http://localhost:5000/bike?id=" + strconv.Itoa(i))
	}
	names := make([]string, 1000)
	for i := range names {
		names[i] = jslib("http://localhost:5000/bike/" + strconv.Itoa(i))
	}
	rows := []struct {
		name    string
		baggage []string
	}{
		{"NoHeader", []string{""}},
		{"NonK6", []string{"userId=alice,serverNode=DF%2028,isProduction=false"}},
		{"Jslib", []string{jslib("http://localhost:5000/bike?id=3")}},
		{"JslibNewID", varying},
		{"Names1000", names},
		{"Members64", []string{strings.Join(many, ",")}},
	}
	for _, r := range rows {
		b.Run(r.name, func(b *testing.B) {
			// A Registry per row: no row's values count against another's cap.
			benchmarkUnary(b, k6grpc.UnaryServerInterceptor(k6labels.WithRegistry(k6labels.NewRegistry(0))), callContexts(method, r.baggage...))
		})
	}
	// Named by method: k6's 1000 names become one.
	for _, r := range rows[2:5] {
		b.Run(r.name+"/FullMethod", func(b *testing.B) {
			benchmarkUnary(b, k6grpc.UnaryServerInterceptor(byMethod, k6labels.WithRegistry(k6labels.NewRegistry(0))), callContexts(method, r.baggage...))
		})
	}
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
