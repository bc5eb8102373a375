package integration

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/k6labels/k6labels"
	"github.com/k6labels/k6labels/internal/profiletest"
)

// transferBytes is how much each unlabelled request downloads and uploads:
// enough TLS work on the connection goroutines for the CPU profile to catch
// them many times at 100 Hz.
const transferBytes = 16 << 20

// burningBody is a request body whose Read costs a fixed amount of CPU, as a
// body produced while it is sent does. The transport calls Read on the
// goroutine that writes the request: the connection's write loop for
// HTTP/1.1, a writer goroutine per request for HTTP/2.
type burningBody struct {
	r *bytes.Reader
}

func (b burningBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	produceBody(n * 8)
	return n, err
}

//go:noinline
func produceBody(steps int) { profiletest.Burn(steps) }

// TestTransportConnectionsStartUnlabelled is the connection-goroutine check
// of NewTransport and UnlabelledTransport over TLS on loopback, HTTP/1.1 and
// HTTP/2. A handler labelled with k6 baggage makes the first call through a
// shared client, so the client's connection is dialled from a labelled
// goroutine. Then requests without baggage download and upload through the
// same connection. No CPU sample of that traffic may carry a k6 label: with
// a plain http.Transport the connection's read loop (HTTP/2) and write loop
// (HTTP/1.1) would keep the first request's labels, as
// TestTransportLeakCheckCatchesLeak shows.
func TestTransportConnectionsStartUnlabelled(t *testing.T) {
	wrappers := map[string]func(http.RoundTripper) http.RoundTripper{
		"NewTransport":        k6labels.NewTransport,
		"UnlabelledTransport": k6labels.UnlabelledTransport,
	}
	for _, h2 := range []bool{false, true} {
		for name, wrap := range wrappers {
			t.Run(protoName(h2)+"/"+name, func(t *testing.T) {
				p := transportLeak(t, h2, wrap)
				if n, total := k6Samples(p); n > 0 {
					t.Errorf("%d of %d CPU samples of requests without baggage carry k6 labels", n, total)
				}
			})
		}
	}
}

// TestTransportLeakCheckCatchesLeak shows that the check above can fail: a
// plain http.Transport, dialled from the labelled handler, leaves k6 labels
// on the unlabelled traffic of its connection.
func TestTransportLeakCheckCatchesLeak(t *testing.T) {
	for _, h2 := range []bool{false, true} {
		t.Run(protoName(h2), func(t *testing.T) {
			// A loaded machine may leave the connection's loops few samples:
			// the leak must show in one of three profiles.
			var n, total int
			for try := 0; try < 3 && n == 0; try++ {
				n, total = k6Samples(transportLeak(t, h2, func(rt http.RoundTripper) http.RoundTripper { return rt }))
				t.Logf("without the fix: %d of %d samples carry k6 labels", n, total)
			}
			if n == 0 {
				t.Errorf("no CPU sample of three profiles carries k6 labels: the check would not see a leak")
			}
		})
	}
}

func protoName(h2 bool) string {
	if h2 {
		return "HTTP2"
	}
	return "HTTP1"
}

// transportLeak runs the scenario of TestTransportConnectionsStartUnlabelled
// with the client transport wrapped by wrap, and returns the CPU profile of
// the unlabelled traffic.
func transportLeak(t *testing.T, h2 bool, wrap func(http.RoundTripper) http.RoundTripper) *profile.Profile {
	runID := "transport-leak"

	data := bytes.Repeat([]byte("k6labels"), transferBytes/8)
	backend := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			_, _ = io.Copy(io.Discard, r.Body)
			return
		}
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		w.Header().Set("Content-Length", strconv.Itoa(n))
		_, _ = w.Write(data[:n])
	}))
	backend.EnableHTTP2 = h2
	backend.StartTLS()
	defer backend.Close()

	base := backend.Client().Transport.(*http.Transport).Clone()
	base.MaxConnsPerHost = 1 // every request reuses the connection the first call dialled
	base.DisableCompression = true
	base.ForceAttemptHTTP2 = h2
	client := &http.Client{Transport: wrap(base)}
	defer base.CloseIdleConnections()

	// The labelled handler makes the first call through the shared client.
	front := httptest.NewServer(k6labels.NewHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v, _ := pprof.Label(r.Context(), "k6_test_run_id"); v != runID {
			t.Error("the front handler is not labelled")
		}
		if err := get(r.Context(), client, backend.URL+"/?n=1"); err != nil {
			t.Error(err)
		}
	}), ownRegistry()))
	defer front.Close()
	req, _ := http.NewRequest("GET", front.URL, nil)
	req.Header.Set("Baggage", "k6.test_run_id="+runID+",k6.scenario=default,k6.name=first-call")
	resp, err := front.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	front.Client().CloseIdleConnections()

	return profiletest.Record(t, func() {
		for range pick(2, 6) { // the control test below shows that 2 rounds catch a leak
			if err := get(context.Background(), client, backend.URL+"/?n="+strconv.Itoa(transferBytes)); err != nil {
				t.Fatal(err)
			}
			req, _ := http.NewRequest("POST", backend.URL+"/", burningBody{bytes.NewReader(data)})
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			if resp.ProtoMajor != protoMajor(h2) {
				t.Fatalf("the backend answered with %s", resp.Proto)
			}
		}
	})
}

func protoMajor(h2 bool) int {
	if h2 {
		return 2
	}
	return 1
}

// get downloads url's body with ctx and discards it.
func get(ctx context.Context, client *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return err
}

// k6Samples returns how many samples of p carry a k6 label, and how many
// samples p has.
func k6Samples(p *profile.Profile) (k6, total int) {
	for _, s := range p.Sample {
		total++
		for k := range s.Label {
			if strings.HasPrefix(k, "k6_") {
				k6++
				break
			}
		}
	}
	return k6, total
}
