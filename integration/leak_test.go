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

// connWork is work the server does on a connection outside any handler: the
// leak check runs it from http.Server.ConnState, which net/http calls on the
// connection's goroutine between requests, where labels leaked from the
// previous request would show.
//
//go:noinline
func connWork(n int) uint64 { return floodWork(n) }

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
			own := ownRegistry()
			p, runID := leakCheck(t, proto == "h2c", pick(2_000, 100_000), func(h http.Handler) http.Handler { return k6labels.NewHandler(h, own) })
			leakSamples(t, p, runID, httpInside, httpServer)
			profiletest.CheckLabels(t, p, k6labels.DefaultMaxValueBytes)
		})
	}
}

// TestLeakCheckCatchesLeak is the control experiment: a middleware that sets
// the goroutine labels and never restores them (the mistake this package
// exists to avoid) must make the profile check fail over HTTP/1.1, where the
// next request runs on the same goroutine.
func TestLeakCheckCatchesLeak(t *testing.T) {
	labeler := k6labels.NewLabeler(ownRegistry())
	leaky := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx := labeler.Context(r.Context(), r.Header["Baggage"])
			pprof.SetGoroutineLabels(ctx)
			next.ServeHTTP(w, r.WithContext(ctx))
		})
	}
	p, runID := leakCheck(t, false, 2_000, leaky)
	rec := &errRecorder{TB: t}
	leakSamples(rec, p, runID, httpInside, httpServer)
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

// httpInside names the frame under which a request is inside the handler
// (middleware included), and httpServer the server's own connection code.
var (
	httpInside = []string{"integration.serveWrapped"}
	httpServer = []string{"net/http.(*conn).serve", "net/http.(*http2serverConn)"}
)

// serveWrapped serves r with h: in a profile, its frame tells the work inside
// the handler and its middleware from the server's own work on the
// connection (reading the next request, finishing the response).
//
//go:noinline
func serveWrapped(h http.Handler, w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }

// Enough samples for the leak check to judge: rounds of requests are
// repeated (at most maxRounds) until the profile holds minSamples in each
// handler and minConnSamples in the server's code outside the handler. A
// leak between requests shows there, where about half the samples follow a
// request with baggage: with 30 samples a leak goes unseen with odds of
// about 2^-15.
const (
	minSamples     = 10
	minConnSamples = 30
	maxRounds      = 20
)

// leakCheck serves rounds of requests that alternate between k6 baggage and
// none on keep-alive connections through wrap(handler) under a CPU profile,
// until the profile holds enough samples to judge (see minServerSamples),
// checks what the handler saw, and returns the profile and the test run id
// sent. requests is the number per round.
func leakCheck(t *testing.T, h2 bool, requests int, wrap func(http.Handler) http.Handler) (*profile.Profile, string) {
	const conns = 4
	// Some 100 µs of work per request in the handler, and 50 µs in the
	// server's connection code at each change of state (active, idle), so
	// that a round adds samples of each kind.
	const work = 80_000
	runID := "leak-" + strconv.Itoa(requests)
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
	wrapped := wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { serveWrapped(wrapped, w, r) })
	srv := startServer(t, h, func(s *http.Server) {
		if h2 {
			s.Protocols = h2cProtocols()
		}
		s.ConnState = func(_ net.Conn, st http.ConnState) {
			switch st {
			case http.StateNew:
				newConns.Add(1)
			case http.StateActive, http.StateIdle:
				sink.Add(connWork(work / 2))
			}
		}
	})

	var failed atomic.Int64
	round := func() *profile.Profile {
		return profiletest.Record(t, func() {
			var wg sync.WaitGroup
			for c := range conns {
				client := newClient(1, h2) // one connection: every request reuses it
				wg.Go(func() {
					defer client.CloseIdleConnections()
					for j, i := 0, c; i < requests; j, i = j+1, i+conns {
						path := "/leak/" + strconv.Itoa(i%10)
						req, _ := http.NewRequest("GET", srv.URL+path, nil)
						if j%2 == 0 { // every other request on this connection
							req.Header.Set("Baggage", "k6.test_run_id="+runID+",k6.scenario=alternate,k6.name="+path)
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
	}
	var profiles []*profile.Profile
	rounds := 0
	for rounds < maxRounds && failed.Load() == 0 {
		profiles = append(profiles, round())
		rounds++
		if plain, labelled, conn := classify(profiles, runID, httpInside, httpServer); min(plain, labelled) >= minSamples && conn >= minConnSamples {
			break
		}
	}
	srv.stop(t)
	p, err := profile.Merge(profiles)
	if err != nil {
		t.Fatal(err)
	}
	requests *= rounds

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
	t.Logf("%d requests in %d rounds over %d connections", requests, rounds, newConns.Load())
	return p, runID
}

// classify returns the number of samples (not sample records, which pprof
// merges by stack and labels) of the profiles in workWithoutBaggage, in
// workWithBaggage, and in the server's own code (a function whose name
// contains one of serverFuncs) outside the handler (no function whose name
// contains one of inside). It calls check, if not nil, with each sample and
// its class.
func classify(ps []*profile.Profile, runID string, inside, serverFuncs []string, check ...func(s *profile.Sample, class string)) (plain, labelled, conn int64) {
	for _, p := range ps {
		for _, s := range p.Sample {
			class := ""
			switch {
			case profiletest.HasFunc(s, "workWithoutBaggage"):
				plain += s.Value[0]
				class = "plain"
			case profiletest.HasFunc(s, "workWithBaggage"):
				labelled += s.Value[0]
				class = "labelled"
			case hasAny(s, inside):
				// The handler's and the middleware's own work: labelled for
				// a request with baggage, not for one without.
			case hasAny(s, serverFuncs):
				conn += s.Value[0]
				class = "conn"
			}
			for _, f := range check {
				if class != "" {
					f(s, class)
				}
			}
		}
	}
	return plain, labelled, conn
}

// leakSamples checks the profile and returns what [classify] counts: no
// sample without baggage and none of the server's code outside the handler
// (reading the next request, finishing a response) carries a k6 label, and
// every sample with baggage carries runID.
func leakSamples(t testing.TB, p *profile.Profile, runID string, inside, serverFuncs []string) (plain, labelled, conn int64) {
	t.Helper()
	hasK6 := func(s *profile.Sample) bool {
		for k := range s.Label {
			if strings.HasPrefix(k, "k6_") {
				return true
			}
		}
		return false
	}
	plain, labelled, conn = classify([]*profile.Profile{p}, runID, inside, serverFuncs, func(s *profile.Sample, class string) {
		switch {
		case class == "plain" && hasK6(s):
			t.Errorf("a sample of a request without baggage carries k6 labels: %v", profiletest.Labels(s))
		case class == "labelled" && profiletest.Labels(s)["k6_test_run_id"] != runID:
			t.Errorf("a sample of a request with baggage has labels %v, want k6_test_run_id=%s", profiletest.Labels(s), runID)
		case class == "conn" && hasK6(s):
			// Labels here would have leaked from a previous request.
			t.Errorf("a sample of the server's connection code outside the handler carries k6 labels: %v", profiletest.Labels(s))
		}
	})
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
