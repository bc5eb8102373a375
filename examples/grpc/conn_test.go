package main

import (
	"context"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/k6labels/k6labels/examples/internal/conntest"
	"github.com/k6labels/k6labels/examples/internal/servetest"
	"github.com/k6labels/k6labels/internal/profiletest"
)

// grpcConnRoots are the root functions of a gRPC channel's goroutines in
// grpc-go v1.85, found here independently of the command's list.
var grpcConnRoots = []string{
	"google.golang.org/grpc/internal/transport.(*http2Client).reader",
	"google.golang.org/grpc/internal/transport.(*loopyWriter).run",
	"google.golang.org/grpc/internal/transport.(*http2Client).keepalive",
	connectRoot,
	"google.golang.org/grpc.(*addrConn).resetTransportAndUnlock",
	"google.golang.org/grpc/internal/grpcsync.(*CallbackSerializer).run",
}

// connectRoot is the root of the subchannel's connect goroutine.
const connectRoot = "google.golang.org/grpc.(*addrConn).connect"

// grpcConnPrefixes are the closures among them (NewHTTP2Client starts the
// loopy writer in one).
var grpcConnPrefixes = []string{"google.golang.org/grpc/internal/transport.NewHTTP2Client.func"}

// TestConnectionGoroutinesGRPC: an HTTP handler labelled by k6's baggage
// makes a gRPC channel on first use with grpc.NewClient and calls it, so
// the channel's goroutines (transport reader and loopy writer, the
// subchannel's connect, the resolver's and balancer's serializers) start
// in that request and keep its labels. The channel connects through a
// dialer that costs CPU as a handshake does, in the subchannel's connect
// goroutine; later unlabelled calls with large messages burn CPU in the
// reader and the loopy writer. The report counts that CPU in
// the connection row, in no k6 row, and its note names k6grpc.NewClient;
// without gRPC's transport roots, or without addrConn.connect and
// resetTransportAndUnlock, in the command's list it would not.
func TestConnectionGoroutinesGRPC(t *testing.T) {
	var (
		p          *profile.Profile
		k6         string
		conn, work time.Duration
		byRoot     map[string]time.Duration
	)
	for try := range 3 {
		p, k6 = recordGRPCConn(t)
		conn, work, byRoot = conntest.Truth(p, grpcConnRoots, grpcConnPrefixes)
		if conn >= 50*time.Millisecond && byRoot[connectRoot] > 0 && work > 0 { // with no request work, no k6 row to report
			break
		}
		t.Logf("try %d: only %s of labelled CPU in the channel's goroutines, %s in connect", try+1, conn, byRoot[connectRoot])
	}
	if conn < 50*time.Millisecond || byRoot[connectRoot] == 0 {
		t.Fatalf("only %s of labelled CPU in the channel's goroutines, %s in connect: the profile shows nothing to test", conn, byRoot[connectRoot])
	}
	r := servetest.ReportByName(t, "grpc conn profile", p, k6)
	conntest.CheckCPU(t, r, conn, work, "the channel's goroutines")
	if !slices.ContainsFunc(r.Notes, func(n string) bool {
		return strings.Contains(n, "k6labels.NewTransport") && strings.Contains(n, "k6grpc.NewClient")
	}) {
		t.Errorf("no note names k6labels.NewTransport and k6grpc.NewClient: %q", r.Notes)
	}
	t.Logf("channel goroutines %s (%v), request work %s", conn, byRoot, work)
}

// recordGRPCConn records the run that TestConnectionGoroutinesGRPC
// describes and returns its profile and k6 results.
func recordGRPCConn(t *testing.T) (*profile.Profile, string) {
	t.Helper()
	echo := func(_ any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
		in := new(wrapperspb.BytesValue)
		if err := dec(in); err != nil {
			return nil, err
		}
		return in, nil
	}
	s := grpc.NewServer()
	s.RegisterService(&grpc.ServiceDesc{
		ServiceName: "k6labels.examples.v1.Stock",
		HandlerType: (*any)(nil),
		Methods:     []grpc.MethodDesc{{MethodName: "Echo", Handler: echo}},
	}, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = s.Serve(ln) }()
	defer s.Stop()

	var (
		once   sync.Once
		client *grpc.ClientConn
		dialer net.Dialer
	)
	handshake := func(ctx context.Context, addr string) (net.Conn, error) {
		profiletest.Burn(40_000_000)
		return dialer.DialContext(ctx, "tcp", addr)
	}
	lazy := func() (*grpc.ClientConn, error) {
		var err error
		once.Do(func() {
			client, err = grpc.NewClient(ln.Addr().String(),
				grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithContextDialer(handshake))
		})
		return client, err
	}
	defer func() {
		if client != nil {
			client.Close()
		}
	}()
	const method = "/k6labels.examples.v1.Stock/Echo"
	small, big := wrapperspb.Bytes([]byte("x")), wrapperspb.Bytes(make([]byte, 1<<20))
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		profiletest.Burn(5_000_000)
		c, err := lazy()
		if err == nil {
			err = c.Invoke(r.Context(), method, small, new(wrapperspb.BytesValue))
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
		}
	})
	return conntest.Record(t, "grpc-conn", handler, func(checkout func()) {
		// The first checkout makes and connects the channel inside a
		// labelled request; the calls after it are unlabelled.
		checkout()
		for i := range 300 {
			if err := client.Invoke(context.Background(), method, big, new(wrapperspb.BytesValue)); err != nil {
				t.Fatal(err)
			}
			if i%30 == 0 {
				checkout()
			}
		}
	})
}
