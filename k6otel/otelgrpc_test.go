package k6otel

import (
	"context"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/k6labels/k6labels"
	"github.com/k6labels/k6labels/k6grpc"
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/propagation"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/emptypb"
)

// receivedGRPC is what the gRPC service saw of one call.
type receivedGRPC struct {
	lines  []string          // the "baggage" metadata values
	labels map[string]string // the pprof labels of its handler's context
	otel   map[string]string // the OTel baggage otelgrpc extracted
}

// serviceB is a gRPC service with one unary method, described by hand so
// that the test needs no generated code; its messages are emptypb.Empty.
type serviceB struct{ got chan receivedGRPC }

const callB = "/k6otel.test.B/Call"

var serviceBDesc = grpc.ServiceDesc{
	ServiceName: "k6otel.test.B",
	HandlerType: (*any)(nil),
	Methods: []grpc.MethodDesc{{
		MethodName: "Call",
		Handler: func(srv any, ctx context.Context, dec func(any) error, ic grpc.UnaryServerInterceptor) (any, error) {
			in := new(emptypb.Empty)
			if err := dec(in); err != nil {
				return nil, err
			}
			h := func(ctx context.Context, _ any) (any, error) {
				md, _ := metadata.FromIncomingContext(ctx)
				srv.(*serviceB).got <- receivedGRPC{
					lines:  md.Get("baggage"),
					labels: ctxLabels(ctx),
					otel:   otelMembers(baggage.FromContext(ctx)),
				}
				return new(emptypb.Empty), nil
			}
			if ic == nil {
				return h(ctx, in)
			}
			return ic(ctx, in, &grpc.UnaryServerInfo{Server: srv, FullMethod: callB}, h)
		},
	}},
}

// startB serves serviceB on 127.0.0.1 behind otelgrpc's server handler and
// the k6grpc server interceptor, as the next service of a chain would.
func startB(t *testing.T, tr *tracing, p propagation.TextMapPropagator) (addr string, got <-chan receivedGRPC) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(
		grpc.StatsHandler(otelgrpc.NewServerHandler(otelgrpc.WithTracerProvider(tr.tp), otelgrpc.WithPropagators(p))),
		grpc.UnaryInterceptor(k6grpc.UnaryServerInterceptor()))
	b := &serviceB{got: make(chan receivedGRPC, 1)}
	srv.RegisterService(&serviceBDesc, b)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return lis.Addr().String(), b.got
}

// TestDownstreamOverGRPC is TestDownstreamOverHTTP for otelgrpc: a real HTTP
// service A on 127.0.0.1 (k6labels outside otelhttp) gets k6's baggage plus a
// member of the application's own and calls a real gRPC service B through a
// client conn with otelgrpc's client stats handler and the k6grpc client
// interceptor. B runs otelgrpc's server handler and the k6grpc server
// interceptor. B must get each k6 key once and the application's member as
// it was; A's OTel baggage must be the same before and after the call.
//
// otelgrpc's stats handler injects after the client interceptors have run,
// and the W3C baggage propagator replaces the "baggage" metadata with the
// OTel baggage. So with the plain propagator the k6 members the interceptor
// wrote are replaced by OpenTelemetry's, which lack the k6.name with a space
// its parser rejected: B gets no k6.name, and labels without k6_name. That is
// the limitation the README documents, asserted here as it happens.
func TestDownstreamOverGRPC(t *testing.T) {
	const incoming = k6Header + ", tenant=acme"
	wantOTel := otelMembers(baggage.FromContext(w3c.Extract(context.Background(),
		propagation.HeaderCarrier{"Baggage": {incoming}})))
	if _, ok := wantOTel["k6.name"]; ok || len(wantOTel) != 3 {
		t.Fatalf("OpenTelemetry extracted %v; this test assumes it rejects the k6.name with a space", wantOTel)
	}
	wantDown := map[string]string{"k6.test_run_id": "123", "k6.scenario": "checkout", "k6.name": "GET bike", "tenant": "acme"}
	wantLabels := map[string]string{"k6_test_run_id": "123", "k6_scenario": "checkout", "k6_name": "GET bike"}

	for _, c := range []struct {
		name  string
		prop  propagation.TextMapPropagator
		loses string // the k6 key B does not get, "" if none
	}{
		{name: "otelgrpc with Propagator", prop: Propagator(w3c)},
		{name: "otelgrpc with the plain propagator", prop: w3c, loses: "k6.name"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr := newTracing(t)
			addr, got := startB(t, tr, c.prop)
			conn, err := grpc.NewClient(addr,
				grpc.WithTransportCredentials(insecure.NewCredentials()),
				grpc.WithStatsHandler(otelgrpc.NewClientHandler(otelgrpc.WithTracerProvider(tr.tp), otelgrpc.WithPropagators(c.prop))),
				grpc.WithUnaryInterceptor(k6grpc.UnaryClientInterceptor()))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()

			var mu sync.Mutex
			var errs []string
			fail := func(f string, a ...any) {
				mu.Lock()
				errs = append(errs, fmt.Sprintf(f, a...))
				mu.Unlock()
			}
			a := httptest.NewServer(k6labels.NewHandler(tr.handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				ctx := r.Context()
				before := otelMembers(baggage.FromContext(ctx))
				if !maps.Equal(before, wantOTel) {
					fail("service A: OTel baggage %v, want %v", before, wantOTel)
				}
				if err := conn.Invoke(ctx, callB, new(emptypb.Empty), new(emptypb.Empty)); err != nil {
					fail("call B: %v", err)
					return
				}
				if after := otelMembers(baggage.FromContext(ctx)); !maps.Equal(after, before) {
					fail("service A: OTel baggage after the call %v, before %v", after, before)
				}
			}))))
			defer a.Close()

			get(t, a.URL, incoming)
			for _, e := range errs {
				t.Error(e)
			}
			if len(errs) > 0 {
				return
			}
			d := <-got

			want, wantL := wantDown, wantLabels
			if c.loses != "" {
				want, wantL = without(wantDown, c.loses), without(wantLabels, "k6_name")
			}
			if len(d.lines) == 0 {
				t.Fatal("B got no baggage metadata")
			}
			for k, n := range keyCounts(d.lines...) {
				if n != 1 {
					t.Errorf("B got key %s %d times: %q", k, n, d.lines)
				}
			}
			if v := values(d.lines...); !maps.Equal(v, want) {
				t.Errorf("B got %v (%q), want %v", v, d.lines, want)
			}
			if l := pick(d.labels, "k6_"); !maps.Equal(l, wantL) {
				t.Errorf("B's labels %v, want %v", l, wantL)
			}
			// What otelgrpc's server handler extracted: the members B got,
			// now that each is valid W3C baggage.
			if !maps.Equal(d.otel, want) {
				t.Errorf("B's OTel baggage %v, want %v", d.otel, want)
			}
		})
	}
}
