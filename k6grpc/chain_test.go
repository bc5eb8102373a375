package k6grpc_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/k6labels/k6labels"
	"github.com/k6labels/k6labels/internal/profiletest"
	"github.com/k6labels/k6labels/k6grpc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
)

//go:noinline
func spinServiceA(n int) { profiletest.Burn(n) }

//go:noinline
func spinServiceB(n int) { profiletest.Burn(n) }

//go:noinline
func spinServiceC(n int) { profiletest.Burn(n) }

// serviceB is the gRPC service in the middle: it burns some CPU, then calls
// the HTTP service C with the call's context.
type serviceB struct {
	testpb.UnimplementedTestServiceServer
	c      *http.Client
	url    string
	mu     sync.Mutex
	gotBag []string // the baggage metadata B received
}

func (s *serviceB) UnaryCall(ctx context.Context, _ *testpb.SimpleRequest) (*testpb.SimpleResponse, error) {
	s.mu.Lock()
	s.gotBag = metadata.ValueFromIncomingContext(ctx, "baggage")
	s.mu.Unlock()
	spinServiceB(spin)
	req, err := http.NewRequestWithContext(ctx, "GET", s.url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := s.c.Do(req)
	if err != nil {
		return nil, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return &testpb.SimpleResponse{}, nil
}

// TestThreeServices: k6 → HTTP service A → gRPC service B → HTTP service C,
// all real servers on 127.0.0.1. The k6 baggage enters only A; B and C get
// the k6 members from the client interceptor and the transport, and the
// CPU samples of all three carry the same k6 labels.
func TestThreeServices(t *testing.T) {
	// C: plain net/http with the k6labels middleware.
	var muC sync.Mutex
	var gotC []string
	c := httptest.NewServer(k6labels.NewHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		muC.Lock()
		gotC = r.Header.Values("Baggage")
		muC.Unlock()
		spinServiceC(spin)
	})))
	defer c.Close()

	// B: gRPC with the server interceptor, calling C through NewTransport.
	toC := &http.Client{Transport: k6labels.NewTransport(&http.Transport{})}
	defer toC.CloseIdleConnections()
	b := &serviceB{c: toC, url: c.URL}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srvB := grpc.NewServer(grpc.UnaryInterceptor(k6grpc.LabelsFromBaggageUnaryInterceptor))
	testpb.RegisterTestServiceServer(srvB, b)
	go srvB.Serve(lis)
	defer srvB.Stop()

	// A: net/http with the middleware, calling B with the client interceptor.
	conn, err := grpc.NewClient(lis.Addr().String(),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithUnaryInterceptor(k6grpc.UnaryClientInterceptor()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	toB := testpb.NewTestServiceClient(conn)
	a := httptest.NewServer(k6labels.NewHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		spinServiceA(spin)
		if _, err := toB.UnaryCall(r.Context(), &testpb.SimpleRequest{}); err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
		}
	})))
	defer a.Close()

	// k6: baggage as the jslib sends it, with a member of the script's own
	// before the k6 ones.
	k6 := &http.Client{Transport: &http.Transport{}}
	defer k6.CloseIdleConnections()
	p := profiletest.Record(t, func() {
		req, _ := http.NewRequest("GET", a.URL+"/bike?id=3", nil)
		req.Header.Set("Baggage", "userId=alice, "+k6Header)
		resp, err := k6.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("A answered %s", resp.Status)
		}
	})

	checkSamples(t, p, "spinServiceA", k6Labels)
	checkSamples(t, p, "spinServiceB", k6Labels)
	checkSamples(t, p, "spinServiceC", k6Labels)
	profiletest.CheckLabels(t, p, k6labels.DefaultMaxValueBytes)

	// Only the k6 members travel on, once each.
	want := "k6.name=http://localhost:5000/bike,k6.scenario=default,k6.test_run_id=123456"
	b.mu.Lock()
	if len(b.gotBag) != 1 || b.gotBag[0] != want {
		t.Errorf("B got baggage %q, want %q", b.gotBag, want)
	}
	b.mu.Unlock()
	muC.Lock()
	if len(gotC) != 1 || gotC[0] != want {
		t.Errorf("C got baggage %q, want %q", gotC, want)
	}
	muC.Unlock()
}
