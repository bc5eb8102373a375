package integration

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"runtime/pprof"
	"sync/atomic"
	"testing"

	"github.com/k6labels/k6labels"
	"github.com/k6labels/k6labels/internal/profiletest"
)

//go:noinline
func keepAliveWithBaggage() { profiletest.Burn(240_000_000) }

//go:noinline
func keepAliveWithout() { profiletest.Burn(240_000_000) }

// TestKeepAliveNoLeak sends, on one HTTP/1.1 keep-alive connection, a
// request with k6 baggage and then one without. Both are served by the same
// connection goroutine; the CPU profile must show the first request's
// labels on its samples and none on the second's.
//
// The server also carries labels of its own, to pin down what is restored:
// "service" in the server's BaseContext (so in every request context) and
// "origin" only on the goroutine that runs Serve, which the connection
// goroutines inherit. The second request's samples carry "origin": the
// goroutine got back exactly the labels it had. (x/k6 would have reset it
// to the request context's labels, "service" only.)
func TestKeepAliveNoLeak(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/with", func(w http.ResponseWriter, r *http.Request) { keepAliveWithBaggage() })
	mux.HandleFunc("/without", func(w http.ResponseWriter, r *http.Request) { keepAliveWithout() })

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns atomic.Int32
	base := pprof.WithLabels(context.Background(), pprof.Labels("service", "api"))
	srv := &http.Server{
		Handler:     k6labels.LabelsFromBaggageHandler(mux),
		BaseContext: func(net.Listener) context.Context { return base },
		ConnState: func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				conns.Add(1)
			}
		},
	}
	served := make(chan struct{})
	go pprof.Do(context.Background(), pprof.Labels("origin", "goroutine"), func(context.Context) {
		defer close(served)
		_ = srv.Serve(ln)
	})
	defer func() {
		_ = srv.Close()
		<-served
	}()

	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1}}
	defer client.CloseIdleConnections()
	get := func(path, baggage string) (reused bool) {
		trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused }}
		req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace),
			"GET", "http://"+ln.Addr().String()+path, nil)
		if baggage != "" {
			req.Header.Set("Baggage", baggage)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		return reused
	}

	var reused bool
	p := profiletest.Record(t, func() {
		get("/with", "k6.test_run_id=run42, k6.scenario=checkout, k6.name=named-get")
		reused = get("/without", "")
	})
	if !reused || conns.Load() != 1 {
		t.Fatalf("the requests did not share one connection (reused=%v, connections=%d)", reused, conns.Load())
	}

	want := map[string]map[string]string{
		"keepAliveWithBaggage": {"service": "api", "k6_test_run_id": "run42", "k6_scenario": "checkout", "k6_name": "named-get"},
		"keepAliveWithout":     {"origin": "goroutine"},
	}
	for fn, labels := range want {
		samples := profiletest.Samples(p, fn)
		if len(samples) == 0 {
			t.Fatalf("%s: no samples", fn)
		}
		for _, s := range samples {
			got := profiletest.Labels(s)
			if len(got) != len(labels) {
				t.Fatalf("%s: sample labels %v, want %v", fn, got, labels)
			}
			for k, v := range labels {
				if got[k] != v {
					t.Fatalf("%s: sample labels %v, want %v", fn, got, labels)
				}
			}
		}
	}
	profiletest.CheckLabels(t, p, k6labels.DefaultMaxValueBytes)
}
