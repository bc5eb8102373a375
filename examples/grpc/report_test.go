package main

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/k6labels/k6labels"
	"github.com/k6labels/k6labels/cmd/k6labels/report"
	"github.com/k6labels/k6labels/examples/internal/servetest"
	"github.com/k6labels/k6labels/internal/profiletest"
	"github.com/k6labels/k6labels/k6grpc"
)

// TestReportByMethod: a real gRPC server on 127.0.0.1 whose calls are
// named by their full method (k6grpc with WithNameFunc and grpc.Method),
// two methods of 1 and 3 units of CPU, profiled while k6-style calls hit
// it; k6's results of them are grpc_req_duration points named by the full
// method, as k6/net/grpc writes them. The k6labels report gives each method
// its calls exactly and CPU per call in about the 1:3 ratio.
func TestReportByMethod(t *testing.T) {
	const light, heavy = "/k6labels.examples.v1.Cost/Light", "/k6labels.examples.v1.Cost/Heavy"
	burn := func(units int) grpc.MethodHandler {
		return func(_ any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
			if err := dec(new(emptypb.Empty)); err != nil {
				return nil, err
			}
			h := func(context.Context, any) (any, error) {
				profiletest.Burn(units * 2_000_000)
				return &emptypb.Empty{}, nil
			}
			method := light
			if units > 1 {
				method = heavy
			}
			return interceptor(ctx, nil, &grpc.UnaryServerInfo{FullMethod: method}, h)
		}
	}
	byMethod := k6labels.WithNameFunc(func(ctx context.Context, name string) string {
		if m, ok := grpc.Method(ctx); ok {
			return m
		}
		return name
	})
	s := grpc.NewServer(grpc.UnaryInterceptor(k6grpc.UnaryServerInterceptor(byMethod)))
	s.RegisterService(&grpc.ServiceDesc{
		ServiceName: "k6labels.examples.v1.Cost",
		HandlerType: (*any)(nil),
		Methods:     []grpc.MethodDesc{{MethodName: "Light", Handler: burn(1)}, {MethodName: "Heavy", Handler: burn(3)}},
	}, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = s.Serve(ln) }()
	defer s.Stop()
	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	calls := []struct {
		method string
		n      int
	}{{light, 120}, {heavy, 40}}
	var k6 strings.Builder
	p := profiletest.Record(t, func() {
		for _, c := range calls {
			for range c.n {
				// k6.name is what the script sent; the service names calls by method.
				ctx := withBaggage("k6.test_run_id=grpc-run,k6.scenario=calls,k6.name=" + c.method)
				if err := conn.Invoke(ctx, c.method, &emptypb.Empty{}, new(emptypb.Empty)); err != nil {
					t.Fatal(err)
				}
				fmt.Fprintf(&k6, `{"metric":"grpc_req_duration","type":"Point","data":{"time":%q,"value":3.1,"tags":{"group":"","method":%q,"name":%q,"proto":"HTTP/2","scenario":"calls","status":"0","url":%q}}}`+"\n",
					time.Now().UTC().Format(time.RFC3339Nano), c.method[strings.LastIndexByte(c.method, '/')+1:], c.method, ln.Addr().String()+c.method)
			}
		}
	})
	r := servetest.ReportByName(t, "grpc profile", p, k6.String())
	rows := map[string]*report.Row{}
	for _, c := range calls {
		row := r.Row(report.ByName, c.method)
		if row == nil || row.Requests != int64(c.n) || row.CPU == 0 {
			t.Fatalf("method %s: row %+v, want %d calls with their CPU", c.method, row, c.n)
		}
		rows[c.method] = row
	}
	if len(r.Unmatched) > 0 {
		t.Errorf("k6 names matched to no method: %v", r.Unmatched)
	}
	ratio := float64(rows[heavy].PerRequest.Est) / float64(rows[light].PerRequest.Est)
	t.Logf("CPU per call: %v light, %v heavy (%.2f×)", rows[light].PerRequest.Est, rows[heavy].PerRequest.Est, ratio)
	if ratio < 1.5 || ratio > 6 {
		t.Errorf("heavy/light CPU per call %.2f, want about 3", ratio)
	}
}
