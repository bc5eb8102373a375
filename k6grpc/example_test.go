package k6grpc_test

import (
	"context"
	"fmt"
	"net"
	"runtime/pprof"

	"github.com/k6labels/k6labels"
	"github.com/k6labels/k6labels/k6grpc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
)

// fromK6 is the incoming context of a call that k6 made: its baggage
// metadata, as grpc-go hands it to the interceptors.
func fromK6() context.Context {
	return metadata.NewIncomingContext(context.Background(), metadata.Pairs(
		"baggage", "k6.test_run_id=123, k6.scenario=default, k6.name=Check"))
}

// printLabels prints the pprof labels of ctx, sorted by name.
func printLabels(ctx context.Context) {
	pprof.ForLabels(ctx, func(k, v string) bool {
		fmt.Printf("%s=%s\n", k, v)
		return true
	})
}

// Install the interceptors when creating the server; each call from k6 is
// then served with its k6 labels. Here the interceptor is called directly
// with a call from k6, to show what the handler sees.
func ExampleLabelsFromBaggageUnaryInterceptor() {
	srv := grpc.NewServer(
		grpc.UnaryInterceptor(k6grpc.LabelsFromBaggageUnaryInterceptor),
		grpc.StreamInterceptor(k6grpc.LabelsFromBaggageStreamInterceptor),
	)
	healthpb.RegisterHealthServer(srv, health.NewServer())
	defer srv.Stop()

	info := &grpc.UnaryServerInfo{FullMethod: "/grpc.health.v1.Health/Check"}
	k6grpc.LabelsFromBaggageUnaryInterceptor(fromK6(), nil, info, func(ctx context.Context, req any) (any, error) {
		printLabels(ctx) // and the goroutine has them while the handler runs
		return nil, nil
	})
	// Output:
	// k6_name=Check
	// k6_scenario=default
	// k6_test_run_id=123
}

// exampleStream stands in for the stream grpc-go hands the interceptor.
type exampleStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s exampleStream) Context() context.Context { return s.ctx }

// A stream handler sees the labels through the stream's Context.
func ExampleLabelsFromBaggageStreamInterceptor() {
	srv := grpc.NewServer(grpc.StreamInterceptor(k6grpc.LabelsFromBaggageStreamInterceptor))
	defer srv.Stop()

	info := &grpc.StreamServerInfo{FullMethod: "/grpc.health.v1.Health/Watch", IsServerStream: true}
	k6grpc.LabelsFromBaggageStreamInterceptor(nil, exampleStream{ctx: fromK6()}, info, func(srv any, ss grpc.ServerStream) error {
		printLabels(ss.Context())
		return nil
	})
	// Output:
	// k6_name=Check
	// k6_scenario=default
	// k6_test_run_id=123
}

// The constructors take the options of the HTTP middleware. Chain them with
// your other interceptors; put a recovery interceptor outside so that it
// runs with the labels already restored.
func ExampleUnaryServerInterceptor() {
	// Keep the query string of k6.name URLs (dropped by default).
	k6 := k6grpc.UnaryServerInterceptor(k6labels.WithQueryStrings(true))
	srv := grpc.NewServer(grpc.ChainUnaryInterceptor(k6))
	defer srv.Stop()

	ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs(
		"baggage", "k6.scenario=default, k6.name=grpc://bikes/Get?id=3"))
	k6(ctx, nil, &grpc.UnaryServerInfo{}, func(ctx context.Context, req any) (any, error) {
		printLabels(ctx)
		return nil, nil
	})
	// Output:
	// k6_name=grpc://bikes/Get?id=3
	// k6_scenario=default
}

func ExampleStreamServerInterceptor() {
	// At most one k6 label per call: the first member sent.
	k6 := k6grpc.StreamServerInterceptor(k6labels.WithMaxLabels(1))
	srv := grpc.NewServer(grpc.ChainStreamInterceptor(k6))
	defer srv.Stop()

	k6(nil, exampleStream{ctx: fromK6()}, &grpc.StreamServerInfo{}, func(srv any, ss grpc.ServerStream) error {
		printLabels(ss.Context())
		return nil
	})
	// Output:
	// k6_test_run_id=123
}

// A service that calls other gRPC services installs the client interceptors
// and calls them with the context its own handler got: the k6 members go
// along in the baggage metadata. Here the interceptor is called directly
// with such a context, to show what is sent.
func ExampleUnaryClientInterceptor() {
	conn, err := grpc.NewClient("127.0.0.1:50051", // connects on first use only
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithUnaryInterceptor(k6grpc.UnaryClientInterceptor()),
		grpc.WithStreamInterceptor(k6grpc.StreamClientInterceptor()),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer conn.Close()

	// The handler's context, with baggage of its own to send as well.
	ctx := k6labels.NewLabeler().Context(fromK6(), metadata.ValueFromIncomingContext(fromK6(), "baggage"))
	ctx = metadata.AppendToOutgoingContext(ctx, "baggage", "userId=alice")

	invoker := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, opts ...grpc.CallOption) error {
		fmt.Println(metadata.ValueFromOutgoingContext(ctx, "baggage"))
		return nil
	}
	k6grpc.UnaryClientInterceptor()(ctx, "/grpc.health.v1.Health/Check", nil, nil, conn, invoker)
	// Output: [userId=alice,k6.name=Check,k6.scenario=default,k6.test_run_id=123]
}

func ExampleStreamClientInterceptor() {
	ctx := k6labels.NewLabeler().Context(context.Background(),
		[]string{"k6.test_run_id=123, k6.scenario=default, k6.name=Watch"})

	streamer := func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		fmt.Println(metadata.ValueFromOutgoingContext(ctx, "baggage"))
		return nil, nil
	}
	k6grpc.StreamClientInterceptor()(ctx, &grpc.StreamDesc{ServerStreams: true}, nil, "/grpc.health.v1.Health/Watch", streamer)
	// Output: [k6.name=Watch,k6.scenario=default,k6.test_run_id=123]
}

// Name each call by its gRPC method (grpc.Method) instead of the k6.name
// sent: one k6_name value per method, whatever the script names its calls.
func ExampleUnaryServerInterceptor_fullMethod() {
	byMethod := k6labels.WithNameFunc(func(ctx context.Context, name string) string {
		if m, ok := grpc.Method(ctx); ok {
			return m
		}
		return name
	})
	// An interceptor after k6's shows what the handler gets.
	show := func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		printLabels(ctx)
		return h(ctx, req)
	}
	srv := grpc.NewServer(grpc.ChainUnaryInterceptor(k6grpc.UnaryServerInterceptor(byMethod), show))
	healthpb.RegisterHealthServer(srv, health.NewServer())
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	go srv.Serve(lis)
	defer srv.Stop()

	conn, err := k6grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer conn.Close()
	ctx := metadata.AppendToOutgoingContext(context.Background(),
		"baggage", "k6.scenario=default,k6.name=check the bike service")
	if _, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{}); err != nil {
		fmt.Println(err)
	}
	// Output:
	// k6_name=/grpc.health.v1.Health/Check
	// k6_scenario=default
}
