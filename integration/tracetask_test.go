package integration

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	rtrace "runtime/trace"
	"strings"
	"testing"

	"github.com/k6labels/k6labels"
	"github.com/k6labels/k6labels/k6grpc"
	xtrace "golang.org/x/exp/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
)

// traceTasks is what an execution trace says of k6labels' request tasks.
type traceTasks struct {
	begun, ended int
	logs         []string // the messages of TraceLogCategory logs, in order
	unended      int      // begun and never ended
}

func readTasks(t *testing.T, data []byte) traceTasks {
	t.Helper()
	r, err := xtrace.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var out traceTasks
	open := map[xtrace.TaskID]bool{}
	for {
		ev, err := r.ReadEvent()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Kind() {
		case xtrace.EventTaskBegin:
			if ev.Task().Type == k6labels.TraceTaskType {
				out.begun++
				open[ev.Task().ID] = true
			}
		case xtrace.EventTaskEnd:
			if open[ev.Task().ID] {
				out.ended++
				delete(open, ev.Task().ID)
			}
		case xtrace.EventLog:
			if l := ev.Log(); l.Category == k6labels.TraceLogCategory {
				if !open[l.Task] {
					t.Errorf("a k6labels log outside a request task: %q", l.Message)
				}
				out.logs = append(out.logs, l.Message)
			}
		}
	}
	out.unended = len(open)
	return out
}

// traceWith runs f with the execution tracer on and returns its tasks.
func traceWith(t *testing.T, f func()) traceTasks {
	t.Helper()
	var buf bytes.Buffer
	if err := rtrace.Start(&buf); err != nil {
		t.Skip("the execution tracer is busy:", err)
	}
	f()
	rtrace.Stop()
	return readTasks(t, buf.Bytes())
}

// TestTraceTasksHTTP: over 127.0.0.1, every labelled request is one task of
// k6labels' type with one log of its members, which decode to what was
// sent (a "," in a value is escaped); a request without k6 baggage makes
// none; a handler that panics still ends its task (net/http recovers the
// panic).
func TestTraceTasksHTTP(t *testing.T) {
	srv := httptest.NewUnstartedServer(k6labels.NewHandler(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/panic" {
			panic(http.ErrAbortHandler)
		}
	})))
	srv.Config.ErrorLog = nil
	srv.Start()
	defer srv.Close()
	c := &http.Client{Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	// The panic closes the connection; a client retries a GET on a reused
	// connection that closes, so it gets a connection of its own.
	once := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	send := func(path, baggage string) {
		c := c
		if path == "/panic" {
			c = once
		}
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		if baggage != "" {
			req.Header.Set("Baggage", baggage)
		}
		resp, err := c.Do(req)
		if err == nil {
			resp.Body.Close()
		}
	}
	got := traceWith(t, func() {
		send("/a", "k6.test_run_id=1,k6.scenario=s,k6.name=a%2Cb%3Dc")
		send("/b", "userId=alice")
		send("/panic", "k6.test_run_id=1,k6.scenario=s,k6.name=panic")
		send("/a", "k6.test_run_id=1,k6.scenario=s,k6.name=a%2Cb%3Dc")
	})
	if got.begun != 3 || got.ended != 3 || got.unended != 0 {
		t.Errorf("tasks: %d begun, %d ended, %d left open; want 3, 3, 0", got.begun, got.ended, got.unended)
	}
	// W3C baggage values may hold '=': a member is cut at its first one.
	want := []string{"k6.name=a%2Cb=c,k6.scenario=s,k6.test_run_id=1", "k6.name=panic,k6.scenario=s,k6.test_run_id=1", "k6.name=a%2Cb=c,k6.scenario=s,k6.test_run_id=1"}
	if strings.Join(got.logs, "\n") != strings.Join(want, "\n") {
		t.Errorf("logs %q, want %q", got.logs, want)
	}
}

type traceGRPCService struct {
	testpb.UnimplementedTestServiceServer
}

func (traceGRPCService) UnaryCall(context.Context, *testpb.SimpleRequest) (*testpb.SimpleResponse, error) {
	return &testpb.SimpleResponse{}, nil
}

// TestTraceTasksGRPC: a unary call with k6 baggage, through the server
// interceptor over 127.0.0.1, is one request task with its members logged;
// one without is none.
func TestTraceTasksGRPC(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(grpc.UnaryInterceptor(k6grpc.LabelsFromBaggageUnaryInterceptor))
	testpb.RegisterTestServiceServer(srv, traceGRPCService{})
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	defer func() {
		srv.Stop()
		<-served
	}()
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := testpb.NewTestServiceClient(conn)
	// Connect before tracing, so that the trace holds only the calls.
	if _, err := client.UnaryCall(context.Background(), &testpb.SimpleRequest{}); err != nil {
		t.Fatal(err)
	}
	got := traceWith(t, func() {
		ctx := metadata.AppendToOutgoingContext(context.Background(), "baggage", "k6.test_run_id=9,k6.scenario=grpc,k6.name=unary")
		if _, err := client.UnaryCall(ctx, &testpb.SimpleRequest{}); err != nil {
			t.Error(err)
		}
		if _, err := client.UnaryCall(context.Background(), &testpb.SimpleRequest{}); err != nil {
			t.Error(err)
		}
	})
	if got.begun != 1 || got.ended != 1 || len(got.logs) != 1 || got.logs[0] != "k6.name=unary,k6.scenario=grpc,k6.test_run_id=9" {
		t.Errorf("tasks %+v, want one with logs [k6.name=unary,k6.scenario=grpc,k6.test_run_id=9]", got)
	}
}
