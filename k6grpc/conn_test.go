package k6grpc_test

import (
	"bytes"
	"context"
	"net"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"github.com/k6labels/k6labels"
	"github.com/k6labels/k6labels/k6grpc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/keepalive"
)

// labelledGoroutines returns the grpc-go functions on the stacks of the
// goroutines that carry a k6 label, from a goroutine profile of the process.
func labelledGoroutines(t *testing.T) []string {
	t.Helper()
	var buf bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&buf, 0); err != nil {
		t.Fatal(err)
	}
	p, err := profile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range p.Sample {
		k6 := false
		for k := range s.Label {
			k6 = k6 || strings.HasPrefix(k, "k6_")
		}
		if !k6 {
			continue
		}
		for _, loc := range s.Location {
			for _, l := range loc.Line {
				if l.Function != nil && strings.HasPrefix(l.Function.Name, "google.golang.org/grpc") {
					out = append(out, l.Function.Name)
				}
			}
		}
	}
	return out
}

// serveEcho serves echoService on 127.0.0.1 and returns its address.
func serveEcho(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer()
	testpb.RegisterTestServiceServer(s, echoService{})
	go s.Serve(lis)
	t.Cleanup(s.Stop)
	return lis.Addr().String()
}

// TestClientConnectionGoroutinesUnlabelled: a channel created unlabelled
// whose first call (which takes it out of idle mode and connects) is made
// from a labelled handler starts no goroutine with the k6 labels: grpc-go
// connects from goroutines the channel started at NewClient.
func TestClientConnectionGoroutinesUnlabelled(t *testing.T) {
	c := startServer(t, echoService{}, nil, grpc.WithUnaryInterceptor(k6grpc.UnaryClientInterceptor()))
	k6labels.Do(k6Context(t), func(ctx context.Context) {
		if _, err := c.UnaryCall(ctx, &testpb.SimpleRequest{}); err != nil {
			t.Fatal(err)
		}
	})
	if got := labelledGoroutines(t); len(got) > 0 {
		t.Errorf("connection goroutines carry k6 labels: %q", got)
	}
}

// TestNewClient: created from a labelled handler, a channel's goroutines
// carry no k6 label with k6grpc.NewClient, and do with grpc.NewClient (which
// shows that the goroutine profile sees them).
func TestNewClient(t *testing.T) {
	addr := serveEcho(t)
	connect := func(newClient func(string, ...grpc.DialOption) (*grpc.ClientConn, error)) (*grpc.ClientConn, []string) {
		var conn *grpc.ClientConn
		var labelled []string
		k6labels.Do(k6Context(t), func(ctx context.Context) {
			var err error
			conn, err = newClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := testpb.NewTestServiceClient(conn).UnaryCall(ctx, &testpb.SimpleRequest{}); err != nil {
				t.Fatal(err)
			}
			labelled = labelledGoroutines(t)
		})
		return conn, labelled
	}
	conn, labelled := connect(k6grpc.NewClient)
	if len(labelled) > 0 {
		t.Errorf("with k6grpc.NewClient, goroutines carry k6 labels: %q", labelled)
	}
	conn.Close()

	conn, labelled = connect(grpc.NewClient)
	if len(labelled) == 0 {
		t.Error("with grpc.NewClient, no goroutine carries the k6 labels: the profile does not see them")
	}
	conn.Close()
	// Wait for the channel's goroutines to end, so that later tests do not
	// see them: not an assertion.
	for i := 0; i < 100 && len(labelledGoroutines(t)) > 0; i++ {
		time.Sleep(10 * time.Millisecond)
	}
}

// TestReconnectFromLabelledCall: a channel whose connection the server
// closed (here by its maximum age; a GOAWAY or a restart does the same)
// reconnects from the goroutine of the next call. Made from a labelled
// handler, through the k6 interceptors or on a k6grpc.NewClient channel
// without them, that call leaves no goroutine with its labels.
func TestReconnectFromLabelledCall(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer(grpc.KeepaliveParams(keepalive.ServerParameters{
		MaxConnectionAge: 200 * time.Millisecond, MaxConnectionAgeGrace: 50 * time.Millisecond}))
	testpb.RegisterTestServiceServer(s, echoService{})
	go s.Serve(lis)
	t.Cleanup(s.Stop)
	insecureOpt := grpc.WithTransportCredentials(insecure.NewCredentials())
	for _, tc := range []struct {
		name string
		dial func() (*grpc.ClientConn, error)
	}{
		{"grpc.NewClient with the k6 interceptors", func() (*grpc.ClientConn, error) {
			return grpc.NewClient(lis.Addr().String(), insecureOpt,
				grpc.WithUnaryInterceptor(k6grpc.UnaryClientInterceptor()),
				grpc.WithStreamInterceptor(k6grpc.StreamClientInterceptor()))
		}},
		{"k6grpc.NewClient alone", func() (*grpc.ClientConn, error) {
			return k6grpc.NewClient(lis.Addr().String(), insecureOpt)
		}},
	} {
		for _, stream := range []bool{false, true} {
			conn, err := tc.dial()
			if err != nil {
				t.Fatal(err)
			}
			c := testpb.NewTestServiceClient(conn)
			call := func(ctx context.Context) {
				if !stream {
					if _, err := c.UnaryCall(ctx, &testpb.SimpleRequest{}); err != nil {
						t.Fatal(err)
					}
					return
				}
				st, err := c.StreamingOutputCall(ctx, &testpb.StreamingOutputCallRequest{})
				if err != nil {
					t.Fatal(err)
				}
				for err == nil {
					_, err = st.Recv()
				}
			}
			call(context.Background())
			time.Sleep(500 * time.Millisecond) // the server closes the connection
			k6labels.Do(k6Context(t), call)
			if got := labelledGoroutines(t); len(got) > 0 {
				t.Errorf("%s, stream %v: after a reconnect, goroutines carry the k6 labels of the call that reconnected: %q", tc.name, stream, got)
			}
			conn.Close()
		}
	}
}
