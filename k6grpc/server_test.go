package k6grpc_test

import (
	"context"
	"io"
	"reflect"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/k6labels/k6labels"
	"github.com/k6labels/k6labels/internal/profiletest"
	"github.com/k6labels/k6labels/k6grpc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// call makes a unary call with baggage metadata values (none when empty),
// asking the handler to do what, and returns the labels the handler's
// context had and the handler goroutine's id and whether it was a worker.
func call(t *testing.T, c testpb.TestServiceClient, what string, baggage ...string) (labels map[string]string, goroutine string, worker bool) {
	t.Helper()
	ctx := context.Background()
	for _, b := range baggage {
		ctx = metadata.AppendToOutgoingContext(ctx, "baggage", b)
	}
	resp, err := c.UnaryCall(ctx, &testpb.SimpleRequest{Payload: &testpb.Payload{Body: []byte(what)}})
	if err != nil {
		t.Fatalf("UnaryCall(%q): %v", what, err)
	}
	return decodeLabels(resp.GetPayload().GetBody()), resp.GetUsername(), resp.GetServerId() == "true"
}

func TestUnaryMetadataValues(t *testing.T) {
	c := startServer(t, &testService{}, defaultServerOptions())
	tests := []struct {
		name    string
		baggage []string
		want    map[string]string
	}{
		{"none", nil, map[string]string{}},
		{"k6 header", []string{k6Header}, k6Labels},
		{
			"one member per metadata value",
			[]string{"k6.test_run_id=123456", "userId=alice, k6.scenario=default", "k6.name=http://localhost:5000/bike?id=3"},
			k6Labels,
		},
		{
			"a later value wins for the same key",
			[]string{"k6.scenario=first, k6.name=n", "k6.scenario=second"},
			map[string]string{"k6_scenario": "second", "k6_name": "n"},
		},
		{"no k6 member", []string{"userId=alice, serverNode=DF%2028"}, map[string]string{}},
		{
			"malformed members skipped, the rest kept",
			[]string{"garbage, =x, ,, k6.scenario", "k6.name=n ; p=1, k6.test_run_id=%FF%FE"},
			map[string]string{"k6_name": "n", "k6_test_run_id": "\uFFFD\uFFFD"},
		},
		{"only malformed", []string{";;;", "====", ",,,"}, map[string]string{}},
		{"local k6 run", []string{"k6.test_run_id=undefined, k6.scenario=s"}, map[string]string{"k6_scenario": "s"}},
		{
			"long value capped",
			[]string{"k6.name=" + strings.Repeat("x", 5000)},
			map[string]string{"k6_name": strings.Repeat("x", k6labels.DefaultMaxValueBytes)},
		},
		{
			"a member past the 8192-byte limit dropped whole",
			[]string{"k6.scenario=s", "k6.name=" + strings.Repeat("x", 10000)},
			map[string]string{"k6_scenario": "s"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, _ := call(t, c, "", tt.baggage...)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("handler context labels %v, want %v", got, tt.want)
			}
		})
	}
}

func TestUnaryServerInterceptorOptions(t *testing.T) {
	c := startServer(t, &testService{}, []grpc.ServerOption{
		grpc.UnaryInterceptor(k6grpc.UnaryServerInterceptor(k6labels.WithQueryStrings(true), k6labels.WithMaxValueBytes(40))),
	})
	got, _, _ := call(t, c, "", k6Header)
	if want := "http://localhost:5000/bike?id=3"; got["k6_name"] != want {
		t.Errorf("k6_name %q, want %q (query kept)", got["k6_name"], want)
	}
	got, _, _ = call(t, c, "", "k6.name="+strings.Repeat("y", 100))
	if len(got["k6_name"]) != 40 {
		t.Errorf("k6_name is %d bytes, want 40", len(got["k6_name"]))
	}
}

// TestUnaryMergesContextLabels: labels an earlier interceptor put in the
// context (as grpc-go does with GRPC_GO_SERVER_GOROUTINE_LABELS) stay.
func TestUnaryMergesContextLabels(t *testing.T) {
	outer := func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		return h(pprof.WithLabels(ctx, pprof.Labels("grpc.method", "UnaryCall")), req)
	}
	c := startServer(t, &testService{}, []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(outer, k6grpc.LabelsFromBaggageUnaryInterceptor),
	})
	got, _, _ := call(t, c, "", "k6.scenario=s")
	want := map[string]string{"grpc.method": "UnaryCall", "k6_scenario": "s"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("labels %v, want %v", got, want)
	}
}

// TestUnaryProfileNoLeakOnWorker records a CPU profile of a labelled call
// followed by a call without baggage that grpc-go runs on the same stream
// worker goroutine: the first call's samples carry the k6 labels, the
// second's carry none.
func TestUnaryProfileNoLeakOnWorker(t *testing.T) {
	c := startServer(t, &testService{}, defaultServerOptions(grpc.NumStreamWorkers(1)))
	// Warm up the connection, so the profiled calls are the only traffic.
	call(t, c, "")

	reused := false
	p := profiletest.Record(t, func() {
		// grpc-go hands a call to a worker only if one is idle; the single
		// worker may still be finishing the previous call, so try a few
		// pairs until both calls of one pair ran on it.
		for range 5 {
			labels, g1, w1 := call(t, c, "labelled", k6Header)
			if !reflect.DeepEqual(labels, k6Labels) {
				t.Fatalf("labelled call saw %v", labels)
			}
			time.Sleep(10 * time.Millisecond) // let the worker go back to waiting: not an assertion
			labels, g2, w2 := call(t, c, "plain")
			if len(labels) != 0 {
				t.Errorf("call without baggage saw labels %v in its context", labels)
			}
			if w1 && w2 && g1 == g2 {
				reused = true
				break
			}
		}
	})
	if !reused {
		t.Fatal("grpc-go never ran two calls on the same stream worker: the test proves nothing")
	}
	checkSamples(t, p, "spinLabelled", k6Labels)
	checkSamples(t, p, "spinPlain", nil)
	profiletest.CheckLabels(t, p, k6labels.DefaultMaxValueBytes)
}

// TestUnaryProfileChildGoroutine: a goroutine the handler starts inherits
// the labels from the handler's goroutine.
func TestUnaryProfileChildGoroutine(t *testing.T) {
	c := startServer(t, &testService{}, defaultServerOptions())
	p := profiletest.Record(t, func() { call(t, c, "child", k6Header) })
	checkSamples(t, p, "spinChild", k6Labels)
}

// TestUnaryPanicRestoresLabels: a handler panics under a recovery
// interceptor outside ours that sets labels of its own on the goroutine, as
// a span profiler does, without putting them in the context it passes on,
// and without restoring anything. After the panic the goroutine has exactly
// those labels again: in the recovery's CPU samples, and in the next call
// that grpc-go runs on the same stream worker, which no interceptor labels
// (read from a goroutine profile). Restoring the context's labels, as
// pprof.Do does, would leave none; not restoring would leave the k6 ones.
func TestUnaryPanicRestoresLabels(t *testing.T) {
	outer := pprof.WithLabels(context.Background(), pprof.Labels("outer", "kept"))
	var mu sync.Mutex
	var panicked int // the goroutine of the last panicking call, if a stream worker
	recovery := func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (resp any, err error) {
		if string(req.(*testpb.SimpleRequest).GetPayload().GetBody()) != "panic" {
			return h(ctx, req) // touches no label
		}
		pprof.SetGoroutineLabels(outer)
		defer func() {
			if r := recover(); r != nil {
				spinAfterPanic(spin)
				id, worker := goroutineID()
				mu.Lock()
				if panicked = 0; worker {
					panicked = id
				}
				mu.Unlock()
				err = status.Errorf(codes.Internal, "recovered: %v", r)
			}
		}()
		return h(ctx, req)
	}
	c := startServer(t, &testService{}, []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(recovery, k6grpc.LabelsFromBaggageUnaryInterceptor),
		grpc.NumStreamWorkers(1),
	})
	reused := false
	p := profiletest.Record(t, func() {
		// grpc-go hands a call to its worker only if the worker is idle: try
		// a few pairs until both calls of one pair ran on it.
		for range 5 {
			ctx := metadata.AppendToOutgoingContext(context.Background(), "baggage", k6Header)
			_, err := c.UnaryCall(ctx, &testpb.SimpleRequest{Payload: &testpb.Payload{Body: []byte("panic")}})
			if status.Code(err) != codes.Internal {
				t.Fatalf("panicking call returned %v, want the recovered error", err)
			}
			time.Sleep(10 * time.Millisecond) // let the worker go back to waiting: not an assertion
			labels, g, worker := call(t, c, "goroutine")
			mu.Lock()
			same := worker && g == strconv.Itoa(panicked)
			mu.Unlock()
			if same {
				if want := map[string]string{"outer": "kept"}; !reflect.DeepEqual(labels, want) {
					t.Errorf("the next call on the same worker runs with goroutine labels %v, want %v", labels, want)
				}
				reused = true
				break
			}
		}
	})
	if !reused {
		t.Fatal("grpc-go never ran the next call on the worker that panicked: the test proves nothing")
	}
	checkSamples(t, p, "spinAfterPanic", map[string]string{"outer": "kept"})
}

func TestServerStreaming(t *testing.T) {
	c := startServer(t, &testService{}, defaultServerOptions())
	p := profiletest.Record(t, func() {
		ctx := metadata.AppendToOutgoingContext(context.Background(),
			"baggage", "k6.test_run_id=123456, userId=alice", "baggage", "k6.scenario=default",
			"baggage", "k6.name=http://localhost:5000/bike?id=3")
		stream, err := c.StreamingOutputCall(ctx, &testpb.StreamingOutputCallRequest{
			ResponseParameters: make([]*testpb.ResponseParameters, 3),
		})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for {
			resp, err := stream.Recv()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			n++
			if got := decodeLabels(resp.GetPayload().GetBody()); !reflect.DeepEqual(got, k6Labels) {
				t.Errorf("stream.Context() labels %v, want %v", got, k6Labels)
			}
		}
		if n != 3 {
			t.Errorf("got %d responses, want 3", n)
		}
	})
	checkSamples(t, p, "spinStream", k6Labels)
}

func TestBidiStreaming(t *testing.T) {
	c := startServer(t, &testService{}, defaultServerOptions(grpc.NumStreamWorkers(1)))
	bidi := func(ctx context.Context, want map[string]string) {
		stream, err := c.FullDuplexCall(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			if err := stream.Send(&testpb.StreamingOutputCallRequest{}); err != nil {
				t.Fatal(err)
			}
			resp, err := stream.Recv()
			if err != nil {
				t.Fatal(err)
			}
			if got := decodeLabels(resp.GetPayload().GetBody()); !reflect.DeepEqual(got, want) {
				t.Errorf("stream.Context() labels %v, want %v", got, want)
			}
		}
		stream.CloseSend()
		if _, err := stream.Recv(); err != io.EOF {
			t.Errorf("stream ended with %v", err)
		}
	}
	p := profiletest.Record(t, func() {
		bidi(metadata.AppendToOutgoingContext(context.Background(), "baggage", k6Header), k6Labels)
	})
	checkSamples(t, p, "spinBidi", k6Labels)

	// Malformed and non-k6 baggage: the stream is served as it came.
	bidi(metadata.AppendToOutgoingContext(context.Background(), "baggage", "a=1, ;;, =", "baggage", "k6.name="), map[string]string{})
	// A second stream without baggage gets no labels, also on the reused worker.
	p = profiletest.Record(t, func() { bidi(context.Background(), map[string]string{}) })
	checkSamples(t, p, "spinBidi", nil)
}

func TestStreamServerInterceptorOptions(t *testing.T) {
	c := startServer(t, &testService{}, []grpc.ServerOption{
		grpc.StreamInterceptor(k6grpc.StreamServerInterceptor(k6labels.WithMaxLabels(1))),
	})
	ctx := metadata.AppendToOutgoingContext(context.Background(), "baggage", k6Header)
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
	if got := decodeLabels(resp.GetPayload().GetBody()); len(got) != 1 {
		t.Errorf("labels %v, want 1 with WithMaxLabels(1)", got)
	}
}

// TestStreamContextMembers: the stream handler's context carries the
// members for downstream propagation, not only the labels.
func TestStreamContextMembers(t *testing.T) {
	var got string
	handler := func(srv any, ss grpc.ServerStream) error {
		got = k6labels.Baggage(ss.Context())
		return nil
	}
	ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs("baggage", k6Header))
	if err := k6grpc.LabelsFromBaggageStreamInterceptor(nil, &fakeStream{ctx: ctx}, &grpc.StreamServerInfo{}, handler); err != nil {
		t.Fatal(err)
	}
	if want := "k6.name=http://localhost:5000/bike,k6.scenario=default,k6.test_run_id=123456"; got != want {
		t.Errorf("Baggage(stream.Context()) = %q, want %q", got, want)
	}
}

// fakeStream is a grpc.ServerStream with only a context, for calling the
// stream interceptor directly.
type fakeStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *fakeStream) Context() context.Context { return s.ctx }

// TestUnaryWithoutK6PassesContext: a call with no usable k6 member reaches
// the handler with the context it came with, and the interceptor allocates
// nothing, with or without baggage metadata (it reads grpc-go's metadata in
// place instead of taking ValueFromIncomingContext's copy).
func TestUnaryWithoutK6PassesContext(t *testing.T) {
	info := &grpc.UnaryServerInfo{FullMethod: "/grpc.testing.TestService/UnaryCall"}
	for _, tt := range []struct {
		md     metadata.MD
		allocs float64
	}{
		{metadata.Pairs("user-agent", "grpc-go"), 0},
		{metadata.Pairs("baggage", "userId=alice, k6.name=, k6.test_run_id=undefined", "baggage", ";;"), 0},
	} {
		in := metadata.NewIncomingContext(context.Background(), tt.md)
		var got context.Context
		handler := func(ctx context.Context, _ any) (any, error) {
			got = ctx
			return nil, nil
		}
		allocs := testing.AllocsPerRun(100, func() {
			k6grpc.LabelsFromBaggageUnaryInterceptor(in, nil, info, handler)
		})
		if got != in {
			t.Errorf("%v: the handler got another context", tt.md)
		}
		if allocs > tt.allocs {
			t.Errorf("%v: %v allocations per call, want at most %v", tt.md, allocs, tt.allocs)
		}
	}
}
