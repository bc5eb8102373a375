// Package servetest runs an example's handler on a real TCP listener on
// 127.0.0.1 and checks, from the outside, that requests carrying k6 baggage
// are served with the k6 labels: through the labels the handler reports from
// its context, and through a real CPU profile of the handler's goroutine.
package servetest

import (
	"encoding/json"
	"maps"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/k6labels/k6labels/examples/internal/show"
	"github.com/k6labels/k6labels/internal/profiletest"
	"github.com/k6labels/k6labels/internal/uploadtest"
)

// Baggage is the header k6's http-instrumentation-pyroscope 1.0.2 sends for a
// request to http://localhost/bike/42?id=42 in scenario "rides": "," between
// members, nothing encoded.
const Baggage = "k6.test_run_id=123456,k6.scenario=rides,k6.name=http://localhost/bike/42?id=42"

// Want returns the labels a handler must see for [Baggage]: the query string
// is dropped from k6_name by default.
func Want() map[string]string {
	return map[string]string{
		"k6_test_run_id": "123456",
		"k6_scenario":    "rides",
		"k6_name":        "http://localhost/bike/42",
	}
}

// Start serves h on 127.0.0.1 at a free port, over HTTP/1.1 and unencrypted
// HTTP/2 (for gRPC through Connect), until the test ends. It returns the base
// URL.
func Start(t testing.TB, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, Protocols: Protocols(), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln) // returns http.ErrServerClosed after Close
	}()
	t.Cleanup(func() {
		_ = srv.Close()
		<-done
	})
	return "http://" + ln.Addr().String()
}

// Protocols is HTTP/1.1 plus unencrypted HTTP/2, which gRPC clients use.
func Protocols() *http.Protocols {
	p := new(http.Protocols)
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	return p
}

// Get sends a GET for url with the given baggage header lines and returns
// the labels the handler reported.
func Get(t testing.TB, url string, baggage ...string) map[string]string {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range baggage {
		req.Header.Add("Baggage", b)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	var got map[string]string
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatalf("GET %s: decode labels: %v", url, err)
	}
	return got
}

// CheckLabels sends requests to url, which must be served by a handler that
// answers with [show.Write], and fails t unless a request with k6 baggage is
// labelled with exactly [Want], and requests without k6 members (sent on the
// same keep-alive connection afterwards) are not labelled at all.
func CheckLabels(t testing.TB, url string) {
	t.Helper()
	for range 2 { // twice: the second round reuses the connections
		if got := Get(t, url, Baggage); !maps.Equal(got, Want()) {
			t.Errorf("with k6 baggage: labels %v, want %v", got, Want())
		}
		if got := Get(t, url); len(got) != 0 {
			t.Errorf("without baggage: labels %v, want none", got)
		}
		if got := Get(t, url, "userId=alice", "k6.name="); len(got) != 0 {
			t.Errorf("without k6 members: labels %v, want none", got)
		}
	}
	// Helper 1.0.1 joined the members with ", ".
	if got := Get(t, url, "k6.test_run_id=123456, k6.scenario=rides, k6.name=http://localhost/bike/42?id=42"); !maps.Equal(got, Want()) {
		t.Errorf("with k6 baggage joined by \", \": labels %v, want %v", got, Want())
	}
	// The baggage may come in several header lines, with other members.
	if got := Get(t, url, "userId=alice, k6.test_run_id=123456", "k6.scenario=rides, k6.name=http://localhost/bike/42?id=42"); !maps.Equal(got, Want()) {
		t.Errorf("with k6 baggage in two lines: labels %v, want %v", got, Want())
	}
}

// Spin is a handler that does [Work] in a function named spinWork, then
// answers like [show.Handler]. Register it on the example's router to look at
// its CPU profile with [CheckProfile].
func Spin(w http.ResponseWriter, r *http.Request) {
	spinWork()
	show.Write(r.Context(), w)
}

//go:noinline
func spinWork() { Work() }

// Work burns about 200ms of CPU: a fixed amount of work, not of time, so
// that the profile gets its ~20 samples however loaded the machine is.
//
//go:noinline
func Work() { profiletest.Burn(160_000_000) }

// CheckProfile records a CPU profile while it sends one request with k6
// baggage to url, served by [Spin], and fails t unless the handler's samples
// exist and each carries exactly the labels of [Want]: the labels are on the
// goroutine, where the profiler reads them, not only in the context.
func CheckProfile(t testing.TB, url string) {
	t.Helper()
	var got map[string]string
	p := profiletest.Record(t, func() { got = Get(t, url, Baggage) })
	if !maps.Equal(got, Want()) {
		t.Errorf("context labels %v, want %v", got, Want())
	}
	samples := profiletest.Samples(p, "servetest.spinWork")
	if len(samples) == 0 {
		t.Fatal("no CPU samples in the handler")
	}
	for _, s := range samples {
		if l := profiletest.Labels(s); !maps.Equal(l, Want()) {
			t.Errorf("sample labels %v, want %v", l, Want())
		}
	}
	profiletest.CheckLabels(t, p, 256)
}

// CheckUploadsLeaveNoFiles serves route, a handler that parses a multipart
// form with a small maxMemory (and panics after it if asked), through the
// app that mount returns, and fails unless 4 MB uploads with k6 baggage,
// other baggage and none leave no file in the temp dir, with and without
// the panic.
func CheckUploadsLeaveNoFiles(t *testing.T, mount func(route http.Handler) http.Handler) {
	for _, panics := range []bool{false, true} {
		t.Run(map[bool]string{false: "no panic", true: "panic"}[panics], func(t *testing.T) {
			dir := t.TempDir()
			t.Setenv("TMPDIR", dir) // where multipart puts what is over maxMemory
			parsed := make(chan int, 1)
			route := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if err := r.ParseMultipartForm(1 << 10); err != nil {
					t.Errorf("ParseMultipartForm: %v", err)
				}
				entries, _ := os.ReadDir(dir)
				parsed <- len(entries)
				if panics {
					panic(http.ErrAbortHandler) // the panic net/http does not log
				}
				w.WriteHeader(http.StatusNoContent)
			})
			base := Start(t, mount(route))
			for _, baggage := range []string{Baggage, "", "userId=alice"} {
				uploadtest.Upload(t, base+"/upload", baggage, 4<<20)
				if n := <-parsed; n == 0 {
					t.Fatal("the upload made no temp file: the test proves nothing")
				}
				uploadtest.WaitEmpty(t, dir, "baggage "+baggage)
			}
		})
	}
}
