package integration

import (
	"context"
	"errors"
	"io"
	"net"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/k6labels/k6labels"
	"github.com/k6labels/k6labels/internal/profiletest"
	"github.com/k6labels/k6labels/k6grpc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
)

// grpcLeakService serves the interop TestService: UnaryCall and
// FullDuplexCall burn CPU in workWithBaggage or workWithoutBaggage,
// depending on whether the call carried baggage metadata.
type grpcLeakService struct {
	testpb.UnimplementedTestServiceServer
	runID string
	work  int
	wrong atomic.Int64 // calls whose labels were not what they sent
	sink  atomic.Uint64
}

func (s *grpcLeakService) serve(ctx context.Context) {
	if len(metadata.ValueFromIncomingContext(ctx, "baggage")) == 0 {
		pprof.ForLabels(ctx, func(string, string) bool {
			s.wrong.Add(1)
			return false
		})
		s.sink.Add(workWithoutBaggage(s.work))
		return
	}
	if v, _ := pprof.Label(ctx, "k6_test_run_id"); v != s.runID {
		s.wrong.Add(1)
	}
	s.sink.Add(workWithBaggage(s.work))
}

func (s *grpcLeakService) UnaryCall(ctx context.Context, _ *testpb.SimpleRequest) (*testpb.SimpleResponse, error) {
	s.serve(ctx)
	return &testpb.SimpleResponse{}, nil
}

func (s *grpcLeakService) FullDuplexCall(stream grpc.BidiStreamingServer[testpb.StreamingOutputCallRequest, testpb.StreamingOutputCallResponse]) error {
	for {
		if _, err := stream.Recv(); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return err
		}
		s.serve(stream.Context())
		if err := stream.Send(&testpb.StreamingOutputCallResponse{}); err != nil {
			return err
		}
	}
}

// TestNoLabelLeakGRPC is the keep-alive leak check for the gRPC
// interceptors: unary calls and bidirectional streams that alternate between
// k6 baggage and none over one connection per client, served by a server
// with stream workers (grpc.NumStreamWorkers), which reuse goroutines from
// call to call. The CPU profile must show no k6 label on a sample of a call
// without baggage, nor on the server's own code outside the handler.
//
// CI: 2,000 unary calls and 500 streams of 4 messages; -soak: 100,000 unary
// calls and 25,000 streams of 4 messages.
func TestNoLabelLeakGRPC(t *testing.T) {
	const clients = 4
	const perStream = 4
	unary, streams := pick(2_000, 100_000), pick(500, 25_000)
	svc := &grpcLeakService{runID: "grpc-leak", work: pick(200_000, 50_000)}
	admit(svc.runID, "grpc", "unary")

	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(
		grpc.UnaryInterceptor(k6grpc.LabelsFromBaggageUnaryInterceptor),
		grpc.StreamInterceptor(k6grpc.LabelsFromBaggageStreamInterceptor),
		grpc.NumStreamWorkers(2),
	)
	testpb.RegisterTestServiceServer(srv, svc)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	defer func() {
		srv.Stop()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()

	baggage := "k6.test_run_id=" + svc.runID + ", k6.scenario=grpc, k6.name=unary"
	var failed atomic.Int64
	fail := func(format string, args ...any) {
		if failed.Add(1) <= 5 {
			t.Errorf(format, args...)
		}
	}
	p := profiletest.Record(t, func() {
		var wg sync.WaitGroup
		for c := range clients {
			conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
			if err != nil {
				t.Fatal(err)
			}
			client := testpb.NewTestServiceClient(conn)
			wg.Go(func() {
				defer conn.Close()
				for j := 0; j < unary/clients; j++ {
					ctx := context.Background()
					if j%2 == 0 {
						ctx = metadata.AppendToOutgoingContext(ctx, "baggage", baggage)
					}
					if _, err := client.UnaryCall(ctx, &testpb.SimpleRequest{}); err != nil {
						fail("unary call %d/%d: %v", c, j, err)
						return
					}
				}
				for j := 0; j < streams/clients; j++ {
					ctx := context.Background()
					if j%2 == 0 {
						ctx = metadata.AppendToOutgoingContext(ctx, "baggage", baggage)
					}
					if err := grpcStream(ctx, client, perStream); err != nil {
						fail("stream %d/%d: %v", c, j, err)
						return
					}
				}
			})
		}
		wg.Wait()
	})
	if n := svc.wrong.Load(); n > 0 {
		t.Errorf("%d calls had the wrong labels in their context", n)
	}
	t.Logf("%d unary calls, %d streams of %d messages over %d connections", unary, streams, perStream, clients)
	// Inside: the interceptors and what they run; outside: gRPC's own code on
	// the transport and stream worker goroutines.
	leakSamples(t, p, svc.runID, []string{"k6labels.Do", "k6labels/k6grpc."}, []string{"google.golang.org/grpc."})
	profiletest.CheckLabels(t, p, k6labels.DefaultMaxValueBytes)
}

// grpcStream runs one bidirectional stream of n messages.
func grpcStream(ctx context.Context, client testpb.TestServiceClient, n int) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := client.FullDuplexCall(ctx)
	if err != nil {
		return err
	}
	for range n {
		if err := stream.Send(&testpb.StreamingOutputCallRequest{}); err != nil {
			return err
		}
		if _, err := stream.Recv(); err != nil {
			return err
		}
	}
	if err := stream.CloseSend(); err != nil {
		return err
	}
	if _, err := stream.Recv(); !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}
