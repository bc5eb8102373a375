// Command grpc serves a gRPC service whose handlers run with the k6 pprof
// labels of each call, through the interceptors of the k6grpc package. The
// service needs no generated code: it is described by hand with
// grpc.ServiceDesc and its messages are protobuf well-known types. With
// -client it is the client instead: it calls the server with the baggage a
// k6 script sends and prints the labels the handlers ran with.
//
//	go run ./grpc &            # from examples/; then, once it listens:
//	go run ./grpc -client
//
// The same call with grpcurl, and a k6 script (grpc/load.js), both using
// grpc/labels.proto:
//
//	grpcurl -plaintext -import-path grpc -proto labels.proto -d '{}' \
//	  -H 'baggage: k6.test_run_id=1,k6.scenario=rides,k6.name=labels' \
//	  127.0.0.1:8086 k6labels.examples.v1.LabelService/Labels
//	k6 run --no-usage-report -e K6_CLOUDRUN_TEST_RUN_ID=build-124 grpc/load.js
package main

import (
	"context"
	"flag"
	"log"
	"net"
	"os"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/k6labels/k6labels/k6grpc"

	"github.com/k6labels/k6labels/examples/internal/show"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8086", "address to listen on (with -client: to call)")
	client := flag.Bool("client", false, "call the server at -addr with k6 baggage and print the labels its handlers saw")
	baggage := flag.String("baggage", defaultClientBaggage, "with -client: the baggage metadata to send")
	flag.Parse()
	if *client {
		if err := runClient(context.Background(), *addr, *baggage, os.Stdout); err != nil {
			log.Fatal(err)
		}
		return
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("listening on %s", *addr)
	log.Fatal(newServer().Serve(ln))
}

// newServer builds the application: one interceptor for unary calls, one for
// streams. With other interceptors, chain them with grpc.ChainUnaryInterceptor
// and put k6grpc's first, so that the others run with the labels too.
func newServer() *grpc.Server {
	s := grpc.NewServer(
		grpc.UnaryInterceptor(k6grpc.UnaryServerInterceptor()),
		grpc.StreamInterceptor(k6grpc.StreamServerInterceptor()),
	)
	s.RegisterService(&labelServiceDesc, nil)
	return s
}

// The service, as generated code would describe it:
//
//	service LabelService {
//	  rpc Labels(google.protobuf.Empty) returns (google.protobuf.Struct);
//	  rpc WatchLabels(google.protobuf.Empty) returns (stream google.protobuf.Struct);
//	}
const (
	labelsMethod      = "/k6labels.examples.v1.LabelService/Labels"
	watchLabelsMethod = "/k6labels.examples.v1.LabelService/WatchLabels"
)

var labelServiceDesc = grpc.ServiceDesc{
	ServiceName: "k6labels.examples.v1.LabelService",
	HandlerType: (*any)(nil),
	Methods:     []grpc.MethodDesc{{MethodName: "Labels", Handler: labelsHandler}},
	Streams: []grpc.StreamDesc{{
		StreamName:    "WatchLabels",
		Handler:       watchLabelsHandler,
		ServerStreams: true,
	}},
}

// labels answers with the pprof labels of the call's context.
func labels(ctx context.Context) (*structpb.Struct, error) {
	fields := map[string]any{}
	for k, v := range show.Labels(ctx) {
		fields[k] = v
	}
	return structpb.NewStruct(fields)
}

// labelsHandler is what generated code would write: a grpc.MethodHandler.
//
//nolint:revive // the argument order is grpc.MethodHandler's
func labelsHandler(srv any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
	in := new(emptypb.Empty)
	if err := dec(in); err != nil {
		return nil, err
	}
	handler := func(ctx context.Context, _ any) (any, error) { return labels(ctx) }
	if interceptor == nil {
		return handler(ctx, in)
	}
	return interceptor(ctx, in, &grpc.UnaryServerInfo{Server: srv, FullMethod: labelsMethod}, handler)
}

// watchLabelsHandler sends the labels of the stream's context twice: from
// the handler's goroutine and from a goroutine it starts with that context.
func watchLabelsHandler(_ any, stream grpc.ServerStream) error {
	if err := stream.RecvMsg(new(emptypb.Empty)); err != nil {
		return err
	}
	for range 2 {
		done := make(chan error, 1)
		go func() { // the context carries the labels to other goroutines
			m, err := labels(stream.Context())
			if err == nil {
				err = stream.SendMsg(m)
			}
			done <- err
		}()
		if err := <-done; err != nil {
			return err
		}
	}
	return nil
}
