package k6grpc_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"runtime"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"

	"github.com/k6labels/k6labels/internal/profiletest"
	"github.com/k6labels/k6labels/k6grpc"
)

// k6Header is what k6's http-instrumentation-pyroscope sends.
const k6Header = "k6.test_run_id=123456, k6.scenario=default, k6.name=http://localhost:5000/bike?id=3"

// k6Labels are the labels k6Header makes (the query string is dropped).
var k6Labels = map[string]string{
	"k6_test_run_id": "123456",
	"k6_scenario":    "default",
	"k6_name":        "http://localhost:5000/bike",
}

// spin is how much CPU each handler burns when a test records a profile:
// about 0.1 s (see profiletest.Burn).
const spin = 80_000_000

// The handlers burn CPU in functions of their own, so that the samples of
// each can be told apart in a profile.

//go:noinline
func spinLabelled(n int) { profiletest.Burn(n) }

//go:noinline
func spinPlain(n int) { profiletest.Burn(n) }

//go:noinline
func spinStream(n int) { profiletest.Burn(n) }

//go:noinline
func spinBidi(n int) { profiletest.Burn(n) }

//go:noinline
func spinChild(n int) { profiletest.Burn(n) }

//go:noinline
func spinAfterPanic(n int) { profiletest.Burn(n) }

// labelsOf returns the pprof labels of ctx.
func labelsOf(ctx context.Context) map[string]string {
	m := map[string]string{}
	pprof.ForLabels(ctx, func(k, v string) bool {
		m[k] = v
		return true
	})
	return m
}

// encodeLabels writes labels as sorted "k=v" lines, to send back to the
// client in a payload.
func encodeLabels(m map[string]string) []byte {
	var lines []string
	for k, v := range m {
		lines = append(lines, k+"="+v)
	}
	sort.Strings(lines)
	return []byte(strings.Join(lines, "\n"))
}

func decodeLabels(b []byte) map[string]string {
	m := map[string]string{}
	for line := range strings.SplitSeq(string(b), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			m[k] = v
		}
	}
	return m
}

// currentLabels returns the pprof labels of the calling goroutine, read from
// a goroutine profile: the labels of the one goroutine whose stack is in
// currentLabels.
//
//go:noinline
func currentLabels() (map[string]string, error) {
	var buf bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&buf, 0); err != nil {
		return nil, err
	}
	p, err := profile.Parse(&buf)
	if err != nil {
		return nil, err
	}
	var found []map[string]string
	for _, s := range p.Sample {
		if !profiletest.HasFunc(s, "k6grpc_test.currentLabels") {
			continue
		}
		m := map[string]string{}
		for k, v := range s.Label {
			m[k] = strings.Join(v, ",")
		}
		for range s.Value[0] {
			found = append(found, m)
		}
	}
	if len(found) != 1 {
		return nil, fmt.Errorf("%d goroutines in currentLabels, want 1: run the test alone", len(found))
	}
	return found[0], nil
}

// goroutineID returns the id of the calling goroutine, from its stack trace,
// and whether the goroutine is one of grpc-go's stream workers.
func goroutineID() (id int, worker bool) {
	buf := make([]byte, 16<<10)
	buf = buf[:runtime.Stack(buf, false)]
	f := bytes.Fields(buf)
	if len(f) > 1 {
		id, _ = strconv.Atoi(string(f[1]))
	}
	return id, bytes.Contains(buf, []byte("serverWorker"))
}

// testService implements the interop test service. What each call does is
// chosen by the client: the request payload names it ("labelled", "plain",
// "child", "panic", "goroutine"). Every response carries the labels of the
// handler's context ("goroutine": of its goroutine) and the id of the
// goroutine that ran it.
type testService struct {
	testpb.UnimplementedTestServiceServer
}

func (s *testService) work(ctx context.Context, what string) {
	switch what {
	case "labelled":
		spinLabelled(spin)
	case "plain":
		spinPlain(spin)
	case "child":
		// A goroutine started by the handler copies its labels.
		done := make(chan struct{})
		go func() {
			defer close(done)
			spinChild(spin)
		}()
		<-done
	case "panic":
		panic("handler panicked")
	}
}

func (s *testService) UnaryCall(ctx context.Context, req *testpb.SimpleRequest) (*testpb.SimpleResponse, error) {
	what := string(req.GetPayload().GetBody())
	s.work(ctx, what)
	labels := labelsOf(ctx)
	if what == "goroutine" {
		// The goroutine's labels instead of the context's.
		var err error
		if labels, err = currentLabels(); err != nil {
			return nil, status.Error(codes.Internal, err.Error())
		}
	}
	id, worker := goroutineID()
	return &testpb.SimpleResponse{
		Payload:  &testpb.Payload{Body: encodeLabels(labels)},
		Username: strconv.Itoa(id),
		ServerId: strconv.FormatBool(worker),
	}, nil
}

func (s *testService) StreamingOutputCall(req *testpb.StreamingOutputCallRequest, stream grpc.ServerStreamingServer[testpb.StreamingOutputCallResponse]) error {
	for range req.GetResponseParameters() {
		spinStream(spin / 3)
		if err := stream.Send(&testpb.StreamingOutputCallResponse{
			Payload: &testpb.Payload{Body: encodeLabels(labelsOf(stream.Context()))},
		}); err != nil {
			return err
		}
	}
	return nil
}

func (s *testService) FullDuplexCall(stream grpc.BidiStreamingServer[testpb.StreamingOutputCallRequest, testpb.StreamingOutputCallResponse]) error {
	for {
		if _, err := stream.Recv(); err != nil {
			return nil // io.EOF: the client is done
		}
		spinBidi(spin / 3)
		if err := stream.Send(&testpb.StreamingOutputCallResponse{
			Payload: &testpb.Payload{Body: encodeLabels(labelsOf(stream.Context()))},
		}); err != nil {
			return err
		}
	}
}

// startServer serves the test service on 127.0.0.1 with opts and returns a
// client connected to it with dialOpts.
func startServer(t *testing.T, srv testpb.TestServiceServer, opts []grpc.ServerOption, dialOpts ...grpc.DialOption) testpb.TestServiceClient {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer(opts...)
	testpb.RegisterTestServiceServer(s, srv)
	go s.Serve(lis)
	t.Cleanup(s.Stop)
	conn, err := grpc.NewClient(lis.Addr().String(), append(dialOpts, grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return testpb.NewTestServiceClient(conn)
}

// defaultServerOptions installs the x/k6-compatible interceptors.
func defaultServerOptions(extra ...grpc.ServerOption) []grpc.ServerOption {
	return append([]grpc.ServerOption{
		grpc.UnaryInterceptor(k6grpc.LabelsFromBaggageUnaryInterceptor),
		grpc.StreamInterceptor(k6grpc.LabelsFromBaggageStreamInterceptor),
	}, extra...)
}

// checkSamples fails t unless p has samples in fn and each of them carries
// exactly the labels want (nil: no label at all).
func checkSamples(t *testing.T, p *profile.Profile, fn string, want map[string]string) {
	t.Helper()
	samples := profiletest.Samples(p, fn)
	if len(samples) == 0 {
		t.Errorf("no CPU samples in %s", fn)
		return
	}
	for _, s := range samples {
		got := profiletest.Labels(s)
		if len(got) != len(want) {
			t.Errorf("a sample in %s has labels %v, want %v", fn, got, want)
			return
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("a sample in %s has labels %v, want %v", fn, got, want)
				return
			}
		}
	}
}
