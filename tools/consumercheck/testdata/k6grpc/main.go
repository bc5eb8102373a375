// Command k6grpc makes one gRPC call with k6 baggage in its metadata to a
// server on 127.0.0.1 that uses the k6grpc interceptor, and prints the pprof
// labels the method saw.
package main

import (
	"context"
	"fmt"
	"log"

	"github.com/k6labels/k6labels/k6grpc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// baggage is what k6's http-instrumentation-pyroscope 1.0.2 sends.
const baggage = "k6.test_run_id=4242,k6.scenario=rush_hour,k6.name=order bike"

// service is a one-method service written as protoc-gen-go-grpc would: the
// method answers with the labels of its context.
var service = grpc.ServiceDesc{
	ServiceName: "consumer.Labels",
	HandlerType: (*any)(nil),
	Methods: []grpc.MethodDesc{{
		MethodName: "Get",
		Handler: func(_ any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
			in := new(wrapperspb.StringValue)
			if err := dec(in); err != nil {
				return nil, err
			}
			get := func(ctx context.Context, _ any) (any, error) {
				return wrapperspb.String(labels(ctx)), nil
			}
			return interceptor(ctx, in, &grpc.UnaryServerInfo{FullMethod: "/consumer.Labels/Get"}, get)
		},
	}},
}

func main() {
	ln := listen()
	srv := grpc.NewServer(grpc.UnaryInterceptor(k6grpc.UnaryServerInterceptor()))
	srv.RegisterService(&service, nil)
	go srv.Serve(ln)
	defer srv.Stop()

	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	ctx := metadata.AppendToOutgoingContext(context.Background(), "baggage", baggage)
	out := new(wrapperspb.StringValue)
	if err := conn.Invoke(ctx, "/consumer.Labels/Get", wrapperspb.String("car"), out); err != nil {
		log.Fatal(err)
	}
	fmt.Println("labels:", out.GetValue())
}
