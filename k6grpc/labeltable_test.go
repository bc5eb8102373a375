package k6grpc_test

import (
	"context"
	"maps"
	"testing"

	"google.golang.org/grpc"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"

	"github.com/k6labels/k6labels/internal/labeltable"
	"github.com/k6labels/k6labels/k6grpc"
)

// The shared table through a real gRPC server: the unary and the stream
// interceptors make the labels the net/http handler makes of the same
// header, each header line one "baggage" metadata value.
func TestLabelTable(t *testing.T) {
	c := startServer(t, &testService{}, []grpc.ServerOption{
		grpc.UnaryInterceptor(k6grpc.UnaryServerInterceptor()),
		grpc.StreamInterceptor(k6grpc.StreamServerInterceptor()),
	})
	for _, tc := range labeltable.Cases() {
		if got, _, _ := call(t, c, "", tc.Lines...); !maps.Equal(got, tc.Want) {
			t.Errorf("%s: unary labels %v, want %v", tc.Name, got, tc.Want)
		}
		ctx := context.Background()
		for _, l := range tc.Lines {
			ctx = metadata.AppendToOutgoingContext(ctx, "baggage", l)
		}
		stream, err := c.StreamingOutputCall(ctx, &testpb.StreamingOutputCallRequest{
			ResponseParameters: make([]*testpb.ResponseParameters, 1),
		})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := stream.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if got := decodeLabels(resp.GetPayload().GetBody()); !maps.Equal(got, tc.Want) {
			t.Errorf("%s: stream labels %v, want %v", tc.Name, got, tc.Want)
		}
	}
}
