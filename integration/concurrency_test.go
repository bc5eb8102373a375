package integration

import (
	"fmt"
	"io"
	"net/http"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/k6labels/k6labels"
	"go.uber.org/goleak"
)

// TestConcurrentClients runs 64 clients at once against one server, half
// over HTTP/1.1 and half over unencrypted HTTP/2, each with its own k6
// scenario and a mix of plain, k6 and garbage baggage. Every request must see
// exactly its own labels (no cross-talk between concurrent requests), the
// run must be clean under -race, and once the server is shut down and the
// clients closed, no goroutine may be left (goleak).
func TestConcurrentClients(t *testing.T) {
	const clients = 64
	perClient := pick(60, 1500)
	const runID = "concurrency"
	// Whatever the tests before left running is not this test's business;
	// goroutines started from here on must all be gone at the end.
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())

	var wrong, served atomic.Int64
	report := func(format string, args ...any) {
		if wrong.Add(1) <= 10 {
			t.Errorf(format, args...)
		}
	}
	h := k6labels.NewHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		// The path says what the client sent: /c/<client>/<n>/<kind>.
		parts := strings.Split(r.URL.Path, "/")
		if len(parts) != 5 {
			report("bad path %q", r.URL.Path)
			return
		}
		got := map[string]string{}
		pprof.ForLabels(r.Context(), func(k, v string) bool {
			got[k] = v
			return true
		})
		want := map[string]string{}
		switch kind := parts[4]; kind {
		case "k6", "garbage":
			want["k6_test_run_id"] = runID
			want["k6_scenario"] = "client" + parts[2]
			want["k6_name"] = "/c/" + parts[2] + "/" + parts[3]
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			report("%s %s: labels %v, want %v", r.Proto, r.URL.Path, got, want)
		}
		// A goroutine started by the handler inherits its labels; let one
		// run to completion inside the request.
		done := make(chan struct{})
		go func() {
			defer close(done)
			if v, _ := pprof.Label(r.Context(), "k6_scenario"); v != want["k6_scenario"] {
				report("child goroutine of %s: k6_scenario %q", r.URL.Path, v)
			}
		}()
		<-done
	}), ownRegistry())
	srv := startServer(t, h, func(s *http.Server) { s.Protocols = h2cProtocols() })

	var wg sync.WaitGroup
	for c := range clients {
		client := newClient(1, c%2 == 1)
		wg.Go(func() {
			defer client.CloseIdleConnections()
			for i := range perClient {
				n := strconv.Itoa(i % 5)
				path := "/c/" + strconv.Itoa(c) + "/" + n
				base := "k6.test_run_id=" + runID + ", k6.scenario=client" + strconv.Itoa(c) + ", k6.name=" + path
				var kind string
				var baggage []string
				switch i % 3 {
				case 0:
					kind = "plain"
					if i%2 == 0 {
						baggage = []string{"userId=alice,serverNode=DF%2028"} // not k6: no labels
					}
				case 1:
					kind, baggage = "k6", []string{base}
				default:
					// Valid k6 members first, then garbage that must not
					// disturb them: malformed members, bad escapes, a long
					// tail beyond the limits, other lines.
					kind = "garbage"
					baggage = []string{
						base + ", =x, k6.bad%zz, noequals, k6.=v, ;;;, other=%E2%82",
						strings.Repeat("junk=1, ", 2000),
					}
				}
				req, _ := http.NewRequest("GET", srv.URL+path+"/"+kind, nil)
				if baggage != nil {
					req.Header["Baggage"] = baggage
				}
				resp, err := client.Do(req)
				if err != nil {
					report("client %d: %v", c, err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					report("client %d: status %s", c, resp.Status)
					return
				}
			}
		})
	}
	wg.Wait()
	srv.stop(t)
	t.Logf("%d clients, %d requests served", clients, served.Load())
	if got, want := served.Load(), int64(clients*perClient); got != want {
		t.Errorf("served %d requests, want %d", got, want)
	}
}
