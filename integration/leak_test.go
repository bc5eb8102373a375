package integration

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/k6labels/k6labels"
	"github.com/k6labels/k6labels/internal/profiletest"
)

// The handler work of the leak check: two functions, so that the CPU profile
// tells requests with and without baggage apart by their stacks.

//go:noinline
func workWithBaggage(n int) uint64 { return floodWork(n) }

//go:noinline
func workWithoutBaggage(n int) uint64 { return floodWork(n) }

// TestNoLabelLeakAtScale sends keep-alive requests that alternate between
// k6 baggage and none on the same connections, over HTTP/1.1 (where one
// goroutine serves every request of a connection) and unencrypted HTTP/2,
// under a CPU profile. No sample of a request without baggage may carry a k6
// label, and no sample of the server's connection goroutines outside the
// labelled handler either.
//
// CI: 4,000 requests per protocol; -soak: 100,000 per protocol.
func TestNoLabelLeakAtScale(t *testing.T) {
	for _, proto := range []string{"HTTP/1.1", "h2c"} {
		t.Run(strings.ReplaceAll(proto, "/", ""), func(t *testing.T) {
			p, runID := leakCheck(t, proto == "h2c", pick(4_000, 100_000), k6labels.LabelsFromBaggageHandler)
			leakSamples(t, p, runID, "net/http.(*conn).serve", "net/http.(*http2serverConn)")
			profiletest.CheckLabels(t, p, k6labels.DefaultMaxValueBytes)
		})
	}
}

// TestLeakCheckCatchesLeak is the control experiment: a middleware that sets
// the goroutine labels and never restores them (the mistake this package
// exists to avoid) must make the profile check fail over HTTP/1.1, where the
// next request runs on the same goroutine.
func TestLeakCheckCatchesLeak(t *testing.T) {
	labeler := k6labels.NewLabeler()
	leaky := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx := labeler.Context(r.Context(), r.Header["Baggage"])
			pprof.SetGoroutineLabels(ctx)
			next.ServeHTTP(w, r.WithContext(ctx))
		})
	}
	p, runID := leakCheck(t, false, 2_000, leaky)
	rec := &errRecorder{TB: t}
	leakSamples(rec, p, runID, "net/http.(*conn).serve")
	if rec.errors == 0 {
		t.Error("the profile check did not notice labels leaking from one keep-alive request into the next")
	}
}

// errRecorder counts the errors reported to it instead of failing the test.
type errRecorder struct {
	testing.TB
	errors int
}

func (r *errRecorder) Errorf(string, ...any) { r.errors++ }

// leakCheck serves requests that alternate between k6 baggage and none on
// keep-alive connections through wrap(handler) under a CPU profile, checks
// what the handler saw, and returns the profile and the test run id sent.
func leakCheck(t *testing.T, h2 bool, requests int, wrap func(http.Handler) http.Handler) (*profile.Profile, string) {
	const conns = 4
	// Some 50-200 µs of work per request, so that the profile holds enough
	// samples of both kinds (fewer iterations in the longer soak run).
	work := pick(200_000, 50_000)
	runID := "leak-" + strconv.Itoa(requests)
	for i := range 10 {
		admit(runID, "alternate", "/leak/"+strconv.Itoa(i))
	}
	var (
		plainLabelled atomic.Int64 // requests without baggage whose context had k6 labels
		k6Missing     atomic.Int64 // requests with baggage without the right labels
		wrongProto    atomic.Int64
		newConns      atomic.Int64
		sink          atomic.Uint64
	)
	wantMajor := 1
	if h2 {
		wantMajor = 2
	}
	h := wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor != wantMajor {
			wrongProto.Add(1)
		}
		if r.Header.Get("Baggage") == "" {
			pprof.ForLabels(r.Context(), func(string, string) bool {
				plainLabelled.Add(1)
				return false
			})
			sink.Add(workWithoutBaggage(work))
			return
		}
		if v, _ := pprof.Label(r.Context(), "k6_test_run_id"); v != runID {
			k6Missing.Add(1)
		}
		if v, _ := pprof.Label(r.Context(), "k6_name"); v != r.URL.Path {
			k6Missing.Add(1)
		}
		sink.Add(workWithBaggage(work))
	}))
	srv := startServer(t, h, func(s *http.Server) {
		if h2 {
			s.Protocols = h2cProtocols()
		}
		s.ConnState = func(_ net.Conn, st http.ConnState) {
			if st == http.StateNew {
				newConns.Add(1)
			}

		}
	})

	var failed atomic.Int64
	p := profiletest.Record(t, func() {
		var wg sync.WaitGroup
		for c := range conns {
			client := newClient(1, h2) // one connection: every request reuses it
			wg.Go(func() {
				defer client.CloseIdleConnections()
				for j, i := 0, c; i < requests; j, i = j+1, i+conns {
					path := "/leak/" + strconv.Itoa(i%10)
					req, _ := http.NewRequest("GET", srv.URL+path, nil)
					if j%2 == 0 { // every other request on this connection
						req.Header.Set("Baggage", "k6.test_run_id="+runID+", k6.scenario=alternate, k6.name="+path)
					}
					resp, err := client.Do(req)
					if err == nil {
						_, err = io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						if err == nil && resp.StatusCode != http.StatusOK {
							err = fmt.Errorf("status %s", resp.Status)
						}
					}
					if err != nil {
						if failed.Add(1) <= 5 {
							t.Errorf("request %d: %v", i, err)
						}
						return
					}
				}
			})
		}
		wg.Wait()
	})
	srv.stop(t)

	// Each client has one connection at a time. net/http may now and then
	// replace one, but the requests must have shared a few long-lived
	// connections, or this test would not exercise goroutine reuse.
	if n := newConns.Load(); n < conns || n > int64(requests/100) {
		t.Errorf("%d connections opened for %d requests from %d clients: keep-alive was not used", n, requests, conns)
	}
	if n := wrongProto.Load(); n > 0 {
		t.Errorf("%d requests were served over HTTP/%d.x instead of HTTP/%d", n, 3-wantMajor, wantMajor)
	}
	if n := plainLabelled.Load(); n > 0 {
		t.Errorf("%d requests without baggage had pprof labels in their context", n)
	}
	if n := k6Missing.Load(); n > 0 {
		t.Errorf("%d label checks failed for requests with baggage", n)
	}
	t.Logf("%d requests over %d connections", requests, newConns.Load())
	return p, runID
}

// leakSamples checks the profile and returns the number of samples (not
// sample records, which pprof merges by stack and labels) in
// workWithoutBaggage, in workWithBaggage and in the server's own code (any
// function whose name contains one of serverFuncs) outside the labelled
// handler.
func leakSamples(t testing.TB, p *profile.Profile, runID string, serverFuncs ...string) (plain, labelled, conn int64) {
	t.Helper()
	hasK6 := func(s *profile.Sample) bool {
		for k := range s.Label {
			if strings.HasPrefix(k, "k6_") {
				return true
			}
		}
		return false
	}
	for _, s := range p.Sample {
		switch {
		case profiletest.HasFunc(s, "workWithoutBaggage"):
			plain += s.Value[0]
			if hasK6(s) {
				t.Errorf("a sample of a request without baggage carries k6 labels: %v", profiletest.Labels(s))
			}
		case profiletest.HasFunc(s, "workWithBaggage"):
			labelled += s.Value[0]
			if profiletest.Labels(s)["k6_test_run_id"] != runID {
				t.Errorf("a sample of a request with baggage has labels %v, want k6_test_run_id=%s", profiletest.Labels(s), runID)
			}
		case hasAny(s, serverFuncs):
			// The server's own work on a connection (reading the next
			// request, writing a response) happens outside k6labels.Do:
			// labels there would have leaked from a previous request.
			conn += s.Value[0]
			if hasK6(s) && !profiletest.HasFunc(s, "k6labels.Do") {
				t.Errorf("a sample of the server's connection code outside the handler carries k6 labels: %v", profiletest.Labels(s))
			}
		}
	}
	if plain == 0 || labelled == 0 {
		t.Fatalf("profile too thin to judge: %d samples without baggage, %d with", plain, labelled)
	}
	t.Logf("profile: %d samples without baggage, %d with baggage, %d in the server's connection code: checked", plain, labelled, conn)
	return plain, labelled, conn
}

func hasAny(s *profile.Sample, funcs []string) bool {
	for _, f := range funcs {
		if profiletest.HasFunc(s, f) {
			return true
		}
	}
	return false
}
