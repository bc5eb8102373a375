package main

import (
	"context"
	"errors"
	"io"
	"maps"
	"net"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/k6labels/k6labels/examples/internal/servetest"
)

// start serves newServer on 127.0.0.1 at a free port and returns a client
// connection to it.
func start(t *testing.T) *grpc.ClientConn {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := newServer()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.Serve(ln)
	}()
	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		s.Stop()
		<-done
	})
	return conn
}

func withBaggage(baggage ...string) context.Context {
	ctx := context.Background()
	for _, b := range baggage {
		ctx = metadata.AppendToOutgoingContext(ctx, "baggage", b)
	}
	return ctx
}

func toMap(s *structpb.Struct) map[string]string {
	m := map[string]string{}
	for k, v := range s.GetFields() {
		m[k] = v.GetStringValue()
	}
	return m
}

func TestUnary(t *testing.T) {
	conn := start(t)
	for range 2 { // the server may reuse its goroutines: nothing carries over
		out := new(structpb.Struct)
		if err := conn.Invoke(withBaggage(servetest.Baggage), labelsMethod, new(emptypb.Empty), out); err != nil {
			t.Fatal(err)
		}
		if got := toMap(out); !maps.Equal(got, servetest.Want()) {
			t.Errorf("with k6 baggage: labels %v, want %v", got, servetest.Want())
		}
		out = new(structpb.Struct)
		if err := conn.Invoke(withBaggage("userId=alice"), labelsMethod, new(emptypb.Empty), out); err != nil {
			t.Fatal(err)
		}
		if got := toMap(out); len(got) != 0 {
			t.Errorf("without k6 members: labels %v, want none", got)
		}
	}
	// Two metadata values, as two baggage header fields arrive.
	out := new(structpb.Struct)
	ctx := withBaggage("userId=alice, k6.test_run_id=123456", "k6.scenario=rides, k6.name=http://localhost/bike/42?id=42")
	if err := conn.Invoke(ctx, labelsMethod, new(emptypb.Empty), out); err != nil {
		t.Fatal(err)
	}
	if got := toMap(out); !maps.Equal(got, servetest.Want()) {
		t.Errorf("baggage in two values: labels %v, want %v", got, servetest.Want())
	}
}

func TestStream(t *testing.T) {
	conn := start(t)
	desc := &labelServiceDesc.Streams[0]
	stream, err := conn.NewStream(withBaggage(servetest.Baggage), desc, watchLabelsMethod)
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.SendMsg(new(emptypb.Empty)); err != nil {
		t.Fatal(err)
	}
	if err := stream.CloseSend(); err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		out := new(structpb.Struct)
		err := stream.RecvMsg(out)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
		if got := toMap(out); !maps.Equal(got, servetest.Want()) {
			t.Errorf("message %d: labels %v, want %v", n, got, servetest.Want())
		}
	}
	if n != 2 {
		t.Errorf("got %d messages, want 2", n)
	}
}
