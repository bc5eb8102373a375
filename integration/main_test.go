package integration

import (
	"context"
	"errors"
	"flag"
	"net"
	"net/http"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/k6labels/k6labels"
	"go.uber.org/goleak"
)

// soakFlag selects the full figures of the README instead of the CI variant:
// `go test -soak` or K6LABELS_SOAK=1 (`make soak` sets both ways).
var soakFlag = flag.Bool("soak", false, "run the full soak figures (10^6 flood requests, 10^5 keep-alive requests)")

func soak() bool {
	if *soakFlag {
		return true
	}
	v, _ := strconv.ParseBool(os.Getenv("K6LABELS_SOAK"))
	return v
}

// pick returns full under -soak and ci otherwise.
func pick(ci, full int) int {
	if soak() {
		return full
	}
	return ci
}

func TestMain(m *testing.M) {
	// No goroutine may outlive the tests: servers and clients are shut down.
	goleak.VerifyTestMain(m)
}

// ownRegistry gives a handler or Labeler a Registry of its own, so that its
// caps and caches do not depend on what other tests sent before: only the
// tests of the x/k6-compatible entry points use the process-wide one (and
// the flood runs in a child process, see flood_test.go).
func ownRegistry() k6labels.Option {
	return k6labels.WithRegistry(k6labels.NewRegistry(0))
}

// admit records values for k6_test_run_id, k6_scenario and k6_name in the
// process-wide cardinality registry, with a cap high enough that they are
// admitted whatever other tests have recorded before. Values seen once are
// never replaced by the overflow value afterwards, so tests that check exact
// label values stay independent of test order.
func admit(runID, scenario, name string) {
	l := k6labels.NewLabeler(k6labels.WithMaxValuesPerLabel(1 << 20))
	l.Context(context.Background(), []string{
		"k6.test_run_id=" + runID + ", k6.scenario=" + scenario + ", k6.name=" + name,
	})
}

// server is a real HTTP server on a loopback port.
type server struct {
	*http.Server
	URL  string // http://127.0.0.1:port
	Addr string // 127.0.0.1:port
	done chan error
}

// startServer serves h on 127.0.0.1 with a fresh port. h2c enables
// unencrypted HTTP/2 next to HTTP/1.1. The server is shut down when the test
// ends (or earlier by calling stop).
func startServer(t testing.TB, h http.Handler, configure func(*http.Server)) *server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &server{
		Server: &http.Server{Handler: h, ReadHeaderTimeout: 30 * time.Second},
		Addr:   ln.Addr().String(),
		done:   make(chan error, 1),
	}
	s.URL = "http://" + s.Addr
	if configure != nil {
		configure(s.Server)
	}
	go func() { s.done <- s.Serve(ln) }()
	t.Cleanup(func() { s.stop(t) })
	return s
}

// stop shuts the server down and waits for Serve to return. It is safe to
// call more than once.
func (s *server) stop(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Errorf("shutdown: %v", err)
	}
	if s.done == nil {
		return
	}
	if err := <-s.done; !errors.Is(err, http.ErrServerClosed) {
		t.Errorf("serve: %v", err)
	}
	s.done = nil
}

// h2cProtocols serves HTTP/1.1 and unencrypted HTTP/2 (prior knowledge).
func h2cProtocols() *http.Protocols {
	p := new(http.Protocols)
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	return p
}

// newClient returns a keep-alive client for conns connections. h2 makes it
// speak unencrypted HTTP/2 with prior knowledge.
func newClient(conns int, h2 bool) *http.Client {
	tr := &http.Transport{
		MaxIdleConns:        conns,
		MaxIdleConnsPerHost: conns,
		MaxConnsPerHost:     conns,
		DisableCompression:  true,
	}
	if h2 {
		p := new(http.Protocols)
		p.SetUnencryptedHTTP2(true)
		tr.Protocols = p
	}
	return &http.Client{Transport: tr, Timeout: 60 * time.Second}
}
