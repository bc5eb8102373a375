package k6grpc_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/k6labels/k6labels"
	"github.com/k6labels/k6labels/k6grpc"
	"google.golang.org/grpc"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
)

// echoService answers with the baggage metadata values it received (one per
// line) and, as the username, the value of "x-other".
type echoService struct {
	testpb.UnimplementedTestServiceServer
}

func received(ctx context.Context) *testpb.Payload {
	return &testpb.Payload{Body: []byte(strings.Join(metadata.ValueFromIncomingContext(ctx, "baggage"), "\n"))}
}

func (echoService) UnaryCall(ctx context.Context, _ *testpb.SimpleRequest) (*testpb.SimpleResponse, error) {
	other := metadata.ValueFromIncomingContext(ctx, "x-other")
	return &testpb.SimpleResponse{Payload: received(ctx), Username: strings.Join(other, ",")}, nil
}

func (echoService) StreamingOutputCall(_ *testpb.StreamingOutputCallRequest, stream grpc.ServerStreamingServer[testpb.StreamingOutputCallResponse]) error {
	return stream.Send(&testpb.StreamingOutputCallResponse{Payload: received(stream.Context())})
}

// k6Context returns the context a server interceptor gives a handler for a
// call from k6.
func k6Context(t testing.TB) context.Context {
	t.Helper()
	ctx := k6labels.NewLabeler().Context(context.Background(), []string{k6Header})
	if k6labels.Baggage(ctx) == "" {
		t.Fatal("no k6 members in the context")
	}
	return ctx
}

func TestClientInterceptors(t *testing.T) {
	c := startServer(t, echoService{}, nil,
		grpc.WithUnaryInterceptor(k6grpc.UnaryClientInterceptor()),
		grpc.WithStreamInterceptor(k6grpc.StreamClientInterceptor()))
	k6ctx := k6Context(t)
	k6 := k6labels.Baggage(k6ctx)

	tests := []struct {
		name string
		ctx  context.Context
		want []string
	}{
		{"no k6 members, no baggage", context.Background(), nil},
		{
			"no k6 members: baggage untouched",
			metadata.AppendToOutgoingContext(context.Background(), "baggage", "a=1 ,  b=2", "baggage", "c=3"),
			[]string{"a=1 ,  b=2", "c=3"},
		},
		{"k6 members added", k6ctx, []string{k6}},
		{
			"merged with appended baggage, k6 key replaced",
			metadata.AppendToOutgoingContext(k6ctx, "baggage", "userId=alice, k6.scenario=old", "x-other", "kept"),
			[]string{"userId=alice," + k6},
		},
		{
			"merged with metadata set and appended",
			metadata.AppendToOutgoingContext(
				metadata.NewOutgoingContext(k6ctx, metadata.Pairs("baggage", "a=1", "Baggage", "b=2;p", "x-other", "kept")),
				"baggage", "c=3"),
			[]string{"a=1,b=2;p,c=3," + k6},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := c.UnaryCall(tt.ctx, &testpb.SimpleRequest{})
			if err != nil {
				t.Fatal(err)
			}
			check := func(kind string, body []byte) {
				var got []string
				if len(body) > 0 {
					got = strings.Split(string(body), "\n")
				}
				if !reflect.DeepEqual(got, tt.want) {
					t.Errorf("%s: server got baggage %q, want %q", kind, got, tt.want)
				}
			}
			check("unary", resp.GetPayload().GetBody())
			if other := metadata.ValueFromOutgoingContext(tt.ctx, "x-other"); len(other) > 0 && resp.GetUsername() != "kept" {
				t.Errorf("other metadata lost: server got x-other %q", resp.GetUsername())
			}

			stream, err := c.StreamingOutputCall(tt.ctx, &testpb.StreamingOutputCallRequest{})
			if err != nil {
				t.Fatal(err)
			}
			sresp, err := stream.Recv()
			if err != nil {
				t.Fatal(err)
			}
			check("stream", sresp.GetPayload().GetBody())
		})
	}
}

// TestClientInterceptorLeavesCallerContext: the caller's outgoing metadata
// is not changed by the interceptor (it works on a copy).
func TestClientInterceptorLeavesCallerContext(t *testing.T) {
	md := metadata.Pairs("baggage", "a=1")
	ctx := metadata.NewOutgoingContext(k6Context(t), md)
	var sent []string
	invoker := func(ctx context.Context, _ string, _, _ any, _ *grpc.ClientConn, _ ...grpc.CallOption) error {
		sent = metadata.ValueFromOutgoingContext(ctx, "baggage")
		return nil
	}
	if err := k6grpc.UnaryClientInterceptor()(ctx, "/m", nil, nil, nil, invoker); err != nil {
		t.Fatal(err)
	}
	if len(sent) != 1 || !strings.HasPrefix(sent[0], "a=1,k6.") {
		t.Errorf("sent baggage %q", sent)
	}
	if got := md["baggage"]; len(got) != 1 || got[0] != "a=1" {
		t.Errorf("the caller's metadata changed to %q", got)
	}
}

// TestClientInterceptorLimits: a full outgoing baggage still takes the k6
// members, and the result stays within the W3C limits.
func TestClientInterceptorLimits(t *testing.T) {
	var members []string
	for i := range 64 {
		members = append(members, "m"+strings.Repeat("x", 100)+string(rune('a'+i%26))+"=v")
	}
	ctx := metadata.AppendToOutgoingContext(k6Context(t), "baggage", strings.Join(members, ","))
	var sent []string
	invoker := func(ctx context.Context, _ string, _, _ any, _ *grpc.ClientConn, _ ...grpc.CallOption) error {
		sent = metadata.ValueFromOutgoingContext(ctx, "baggage")
		return nil
	}
	if err := k6grpc.UnaryClientInterceptor()(ctx, "/m", nil, nil, nil, invoker); err != nil {
		t.Fatal(err)
	}
	if len(sent) != 1 {
		t.Fatalf("sent %d baggage values, want 1", len(sent))
	}
	got := k6labels.ParseBaggage(sent[0])
	if len(got) > k6labels.MaxBaggageMembers || len(sent[0]) > k6labels.MaxBaggageBytes {
		t.Errorf("sent %d members, %d bytes: over the limits", len(got), len(sent[0]))
	}
	if !strings.HasSuffix(sent[0], ","+k6labels.Baggage(ctx)) {
		t.Errorf("k6 members missing from %q", sent[0])
	}
}
