// Package connroots_test tests, on real profiles, the connection goroutines
// of clients the command's module does not depend on.
package connroots_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"golang.org/x/net/http2"

	"github.com/k6labels/k6labels/examples/internal/conntest"
	"github.com/k6labels/k6labels/examples/internal/servetest"
	"github.com/k6labels/k6labels/internal/profiletest"
)

// xnetRoots are the root functions of golang.org/x/net/http2's client
// connection reader (v0.60), found here independently of the command's
// list: its own before Go 1.27, net/http's from Go 1.27, which it then
// wraps.
var xnetRoots = []string{
	"golang.org/x/net/http2.(*ClientConn).readLoop", "golang.org/x/net/http2.(*clientConnReadLoop).run",
	"net/http/internal/http2.(*ClientConn).readLoop", "net/http/internal/http2.(*clientConnReadLoop).run",
}

// TestConnectionGoroutinesXNetHTTP2: a labelled handler makes the first
// call of a shared client whose transport is golang.org/x/net/http2's, to
// an HTTP/2 backend over TLS, so the connection's read loop starts in that
// request and keeps its labels. Later unlabelled downloads on that
// connection burn CPU in the read loop (TLS decryption, frames). The
// report counts it in the connection row, in no k6 row; without x/net's
// read loop in the command's list it would not.
func TestConnectionGoroutinesXNetHTTP2(t *testing.T) {
	var (
		p          *profile.Profile
		k6         string
		conn, work time.Duration
	)
	for try := range 3 {
		p, k6 = recordXNet(t)
		conn, work, _ = conntest.Truth(p, xnetRoots, nil)
		if conn >= 50*time.Millisecond && work > 0 { // with no request work, no k6 row to report
			break
		}
		t.Logf("try %d: only %s of labelled CPU in the connection's read loop", try+1, conn)
	}
	if conn < 50*time.Millisecond {
		t.Fatalf("only %s of labelled CPU in the connection's read loop: the profile shows nothing to test", conn)
	}
	r := servetest.ReportByName(t, "x/net http2 profile", p, k6)
	conntest.CheckCPU(t, r, conn, work, "the connection's read loop")
	if !slices.ContainsFunc(r.Notes, func(n string) bool { return strings.Contains(n, "k6labels.NewTransport") }) {
		t.Errorf("no note names k6labels.NewTransport: %q", r.Notes)
	}
	t.Logf("connection goroutines %s, request work %s", conn, work)
}

// recordXNet records the run that TestConnectionGoroutinesXNetHTTP2
// describes and returns its profile and k6 results.
func recordXNet(t *testing.T) (*profile.Profile, string) {
	t.Helper()
	big := bytes.Repeat([]byte("x"), 1<<20)
	backend := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor != 2 {
			http.Error(w, "not HTTP/2: "+r.Proto, http.StatusHTTPVersionNotSupported)
			return
		}
		if r.URL.Path == "/big" {
			w.Write(big)
		}
	}))
	backend.EnableHTTP2 = true
	backend.StartTLS()
	defer backend.Close()
	// x/net's own Transport, deprecated for net/http's, is what is tested.
	tr := &http2.Transport{TLSClientConfig: backend.Client().Transport.(*http.Transport).TLSClientConfig} //nolint:staticcheck // see above
	defer tr.CloseIdleConnections()                                                                       //nolint:staticcheck // see above
	shared := &http.Client{Transport: tr}
	get := func(path string) error {
		resp, err := shared.Get(backend.URL + path)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s: %s", path, resp.Status)
		}
		return nil
	}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		profiletest.Burn(5_000_000)
		if err := get("/stock"); err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
		}
	})
	return conntest.Record(t, "xnet-conn", handler, func(checkout func()) {
		// The first checkout dials the shared connection inside a labelled
		// request; the downloads after it are unlabelled.
		checkout()
		for i := range 500 {
			if err := get("/big"); err != nil {
				t.Fatal(err)
			}
			if i%50 == 0 {
				checkout()
			}
		}
	})
}
