package bench

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/k6labels/k6labels"
	"google.golang.org/grpc"
)

// batch is how many requests each side of a pair serves in a row.
const batch = 256

// pairRun times two servers of the same traffic in alternating batches and
// reports the second one's time as a percentage of the first one's
// ("%of-base") and each one's time per request. On a busy machine both sides
// see the same load within milliseconds of each other, so the ratio is
// steadier than the ratio of two benchmarks that ran seconds apart.
func pairRun(b *testing.B, base, other func(i int)) {
	b.Helper()
	var tBase, tOther time.Duration
	i, j := 0, 0
	side := func(f func(int), k *int) time.Duration {
		t := time.Now()
		for range batch {
			f(*k)
			*k++
		}
		return time.Since(t)
	}
	n := 0
	for b.Loop() {
		if n%2 == 0 { // alternate which side goes first
			tBase += side(base, &i)
			tOther += side(other, &j)
		} else {
			tOther += side(other, &j)
			tBase += side(base, &i)
		}
		n++
	}
	reqs := float64(n * batch)
	b.ReportMetric(100*float64(tOther)/float64(tBase), "%of-base")
	b.ReportMetric(float64(tBase.Nanoseconds())/reqs, "base-ns/req")
	b.ReportMetric(float64(tOther.Nanoseconds())/reqs, "ns/req")
}

// servePair runs pairRun over rs (warmed once through each handler).
func servePair(b *testing.B, base, other http.Handler, rs []*http.Request) {
	w := httptest.NewRecorder()
	pairServe(b, base, other, len(rs), func(h http.Handler, i int) { h.ServeHTTP(w, rs[i%len(rs)]) })
}

// servePairReused is servePair for one request object whose baggage line
// is set to lines[i] in turn: as in a server, where each request was just
// parsed and is still in the CPU caches, unlike servePair's prebuilt ones.
func servePairReused(b *testing.B, base, other http.Handler, lines []string) {
	w := httptest.NewRecorder()
	r := httptest.NewRequest("GET", "/bike?id=3", nil)
	line := make([]string, 1)
	r.Header["Baggage"] = line
	pairServe(b, base, other, len(lines), func(h http.Handler, i int) {
		line[0] = lines[i%len(lines)]
		h.ServeHTTP(w, r)
	})
}

// pairServe runs pairRun with serve(h, i) as the i-th request to h, after
// serving the first n through each handler once.
func pairServe(b *testing.B, base, other http.Handler, n int, serve func(h http.Handler, i int)) {
	for i := range n {
		serve(base, i)
		serve(other, i)
	}
	pairRun(b, func(i int) { serve(base, i) }, func(i int) { serve(other, i) })
}

func newK6labels(h http.Handler, opts ...k6labels.Option) http.Handler {
	return k6labels.NewHandler(h, append(opts, k6labels.WithRegistry(k6labels.NewRegistry(0)))...)
}

// BenchmarkRatio: the targets as ratios measured side by side.
// "vs=baseline" rows are k6labels over the x/k6-like baseline; "vs=unnamed"
// rows are a naming option over the same handler without one.
func BenchmarkRatio(b *testing.B) {
	for _, tr := range k6Traffics {
		rs := requests("/bike?id=3", tr.lines)
		b.Run("vs=baseline/http="+tr.name, func(b *testing.B) {
			servePair(b, BaselineHandler(null), newK6labels(null), rs)
		})
	}
	// jslib-new-id again, each line served through one reused request.
	var newIDs []string
	for _, l := range newIDTraffic.lines {
		newIDs = append(newIDs, l[0])
	}
	b.Run("vs=baseline/http=jslib-new-id/request=reused", func(b *testing.B) {
		servePairReused(b, BaselineHandler(null), newK6labels(null), newIDs)
	})
	info := &grpc.UnaryServerInfo{FullMethod: "/grpc.testing.TestService/UnaryCall"}
	handler := func(context.Context, any) (any, error) { return nil, nil }
	for _, tr := range k6Traffics {
		ctxs := incoming(tr.lines)
		b.Run("vs=baseline/unary="+tr.name, func(b *testing.B) {
			k6 := k6grpcUnary()
			for _, ctx := range ctxs {
				BaselineUnary(ctx, nil, info, handler)
				k6(ctx, nil, info, handler)
			}
			pairRun(b,
				func(i int) { BaselineUnary(ctxs[i%len(ctxs)], nil, info, handler) },
				func(i int) { k6(ctxs[i%len(ctxs)], nil, info, handler) })
		})
	}
	for _, tr := range muxTraffics() {
		mux := newMux(same)
		unnamed := newK6labels(mux)
		b.Run("vs=unnamed/mux="+tr.name+"/name=servemux", func(b *testing.B) {
			servePair(b, unnamed, newK6labels(mux, k6labels.WithServeMux(mux)), tr.rs)
		})
		b.Run("vs=unnamed/mux="+tr.name+"/name=formatter", func(b *testing.B) {
			servePair(b, unnamed, newK6labels(mux, k6labels.WithNameFormatter(func(r *http.Request, name string) string {
				return vehicleRoute(r.URL.Path, name)
			})), tr.rs)
		})
		b.Run("vs=unnamed/mux="+tr.name+"/name=route", func(b *testing.B) {
			// Per-route handlers, named or not, each set sharing a Registry.
			regA, regB := k6labels.WithRegistry(k6labels.NewRegistry(0)), k6labels.WithRegistry(k6labels.NewRegistry(0))
			plain := newMux(func(h http.Handler) http.Handler { return k6labels.NewHandler(h, regA) })
			named := newMux(func(h http.Handler) http.Handler {
				return k6labels.NewHandler(h, regB, k6labels.WithRoutePattern())
			})
			servePair(b, plain, named, tr.rs)
		})
	}
}

func k6grpcUnary() grpc.UnaryServerInterceptor { return unaryImpls[1].new() }
