package report_test

import (
	"bytes"
	"context"
	"fmt"
	"runtime/pprof"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/k6labels/k6labels"
	"github.com/k6labels/k6labels/cmd/k6labels/pprofsource"
	"github.com/k6labels/k6labels/cmd/k6labels/report"
)

// methodKey holds a call's full method in the test's context, as
// grpc.Method does in a gRPC server's.
type methodKey struct{}

// spin burns units of CPU (a fixed number of xorshift rounds each).
//
//go:noinline
func spin(units int) uint64 {
	x := uint64(88172645463325252)
	for range units << 20 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

// TestGRPCReport: a service labelled as k6grpc labels it by method
// (WithNameFunc with the call's full method, the labeler and DoRequest its
// interceptor runs), profiled for real in this process, and k6's
// grpc_req_duration points of the same calls: the report gives each full
// method its calls and CPU per call, /RecordRoute about 3 times /GetFeature.
func TestGRPCReport(t *testing.T) {
	byMethod := k6labels.NewLabeler(k6labels.WithNameFunc(func(ctx context.Context, name string) string {
		if m, ok := ctx.Value(methodKey{}).(string); ok {
			return m
		}
		return name
	}))
	calls := []struct {
		method, scenario string
		units, n         int
	}{
		{"/main.RouteGuide/GetFeature", "lookups", 1, 120},
		{"/main.RouteGuide/RecordRoute", "uploads", 3, 40},
	}
	var buf bytes.Buffer
	if err := pprof.StartCPUProfile(&buf); err != nil {
		t.Skip("CPU profiler busy:", err)
	}
	var sink uint64
	var k6 strings.Builder
	for _, c := range calls {
		for range c.n {
			ctx := context.WithValue(t.Context(), methodKey{}, c.method)
			lctx, ok := byMethod.Labels(ctx, []string{"k6.test_run_id=grpc-1,k6.scenario=" + c.scenario + ",k6.name=" + c.method})
			if !ok {
				t.Fatal("baggage not read")
			}
			k6labels.DoRequest(lctx, func(context.Context) { sink += spin(c.units) })
			fmt.Fprintf(&k6, `{"metric":"grpc_req_duration","type":"Point","data":{"time":"2026-12-02T18:02:45Z","value":2.5,"tags":{"group":"","method":"%s","name":"%s","proto":"HTTP/2","scenario":"%s","service":"main.RouteGuide","status":"0","url":"127.0.0.1:10000%s"}}}`+"\n",
				c.method[strings.LastIndexByte(c.method, '/')+1:], c.method, c.scenario, c.method)
		}
	}
	pprof.StopCPUProfile()
	p, err := profile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	src, err := pprofsource.New("grpc.pb.gz", p)
	if err != nil {
		t.Fatal(err)
	}
	r, err := report.New(t.Context(), src, report.Options{K6: readK6(t, k6.String())})
	if err != nil {
		t.Fatalf("report: %v (sink %x)", err, sink)
	}
	get, rec := r.Row(report.ByName, calls[0].method), r.Row(report.ByName, calls[1].method)
	if get == nil || rec == nil || get.Requests != 120 || rec.Requests != 40 {
		t.Fatalf("rows %+v, %+v; want 120 and 40 calls", get, rec)
	}
	if get.Samples < 10 || rec.Samples < 10 {
		t.Skipf("too few samples to compare (%d, %d): the machine is too busy", get.Samples, rec.Samples)
	}
	if ratio := float64(rec.PerRequest.Est) / float64(get.PerRequest.Est); ratio < 1.5 || ratio > 6 {
		t.Errorf("CPU per call %v and %v: ratio %.2f, want about 3", rec.PerRequest.Est, get.PerRequest.Est, ratio)
	}
}
