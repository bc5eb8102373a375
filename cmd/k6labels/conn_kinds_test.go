package main

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/k6labels/k6labels"
)

// connCase is one run of a client whose connection goroutines start in a
// labelled request: handler serves the k6 requests, traffic makes the
// other requests, calling checkout now and then for a labelled one, and
// close frees what the case holds.
type connCase struct {
	handler http.HandlerFunc
	traffic func(t *testing.T, checkout func(i int))
	close   func()
}

// recordConnCase records a real CPU profile of a case that newCase makes
// (a new one for each try): k6-style requests with baggage reach the case's
// handler through k6labels.LabelsFromBaggageHandler. The ground truth is
// counted from the profile: labelled samples of goroutines whose bottom
// three frames hold one of roots are the connection's, the other labelled
// ones are request work. It tries up to three times to get 50ms of CPU in
// the connection's goroutines, which a loaded machine may not give.
func recordConnCase(t *testing.T, roots []string, newCase func(t *testing.T) connCase) connRun {
	t.Helper()
	var run connRun
	for try := range 3 {
		run = recordConnOnce(t, roots, newCase(t))
		if run.conn >= 50*time.Millisecond && run.work > 0 { // with no request work, no k6 row to report
			return run
		}
		t.Logf("try %d: only %s of labelled CPU in the connection's goroutines", try+1, run.conn)
	}
	t.Fatalf("only %s of labelled CPU in the connection's goroutines: the profile shows nothing to test", run.conn)
	return run
}

func recordConnOnce(t *testing.T, roots []string, c connCase) connRun {
	t.Helper()
	defer c.close()
	front := httptest.NewServer(k6labels.LabelsFromBaggageHandler(c.handler))
	defer front.Close()
	var buf bytes.Buffer
	if err := pprof.StartCPUProfile(&buf); err != nil {
		t.Fatal(err)
	}
	var k6 strings.Builder
	checkout := func(i int) {
		u := fmt.Sprintf("%s/checkout?id=%d", front.URL, i)
		req, _ := http.NewRequest(http.MethodGet, u, nil)
		req.Header.Set("Baggage", "k6.test_run_id=conn,k6.scenario=shop,k6.name="+u)
		fmt.Fprintf(&k6, `{"metric":"http_reqs","type":"Point","data":{"time":%q,"value":1,"tags":{"method":"GET","name":%q,"scenario":"shop"}}}`+"\n",
			time.Now().UTC().Format(time.RFC3339Nano), u)
		resp, err := front.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("checkout: %s: %s", resp.Status, body)
		}
	}
	func() {
		defer pprof.StopCPUProfile()
		c.traffic(t, checkout)
	}()
	p, err := profile.ParseData(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	conn, work := connTruth(p, roots)
	return connRun{profile: buf.Bytes(), k6: k6.String(), conn: conn, work: work}
}

// connTruth returns the CPU of p's k6-labelled samples whose bottom three
// frames hold one of roots (or a function that roots' ".func" prefix
// begins), and that of the other k6-labelled samples.
func connTruth(p *profile.Profile, roots []string) (conn, work time.Duration) {
	for _, s := range p.Sample {
		if len(s.Label["k6_name"]) == 0 {
			continue
		}
		var frames []string
		for _, loc := range s.Location {
			for _, ln := range loc.Line {
				frames = append(frames, ln.Function.Name)
			}
		}
		bottom := frames[max(0, len(frames)-3):]
		if slices.ContainsFunc(bottom, func(f string) bool {
			return slices.ContainsFunc(roots, func(r string) bool {
				return f == r || strings.HasSuffix(r, ".func") && strings.HasPrefix(f, r)
			})
		}) {
			conn += time.Duration(s.Value[1])
		} else {
			work += time.Duration(s.Value[1])
		}
	}
	return conn, work
}

// checkConnCase runs the command on run's profile and k6 results and
// checks the report (checkConnReport), whose note, the CPU being no
// gRPC's, does not send to k6grpc.
func checkConnCase(t *testing.T, run connRun) {
	t.Helper()
	dir := t.TempDir()
	cpu := filepath.Join(dir, "cpu.pb.gz")
	if err := os.WriteFile(cpu, run.profile, 0o644); err != nil {
		t.Fatal(err)
	}
	k6file := filepath.Join(dir, "run.json")
	if err := os.WriteFile(k6file, []byte(run.k6), 0o644); err != nil {
		t.Fatal(err)
	}
	checkConnReport(t, run, "report", "--k6", k6file, "--by", "name", cpu)
	if _, out, _ := runCLI(t, "report", "--format", "json", "--k6", k6file, "--by", "name", cpu); strings.Contains(out, "k6grpc") {
		t.Errorf("the report of connection goroutines that are not gRPC's names k6grpc:\n%s", out)
	}
}

// TestConnectionGoroutinesHTTP2: a labelled handler makes the first call
// of a shared client to an HTTP/2 backend over TLS, so the HTTP/2
// connection's read loop starts in that request and keeps its labels.
// Later unlabelled downloads on that connection burn CPU in the read loop
// (TLS decryption, frames). The report counts it in the connection row, in
// no k6 row; it would miss it without net/http's HTTP/2 read loop in
// connRoots (under Go 1.26 the bundled http2ClientConn's, under Go 1.27
// that of net/http/internal/http2).
func TestConnectionGoroutinesHTTP2(t *testing.T) {
	roots := []string{
		"net/http.(*http2ClientConn).readLoop", "net/http.(*http2clientConnReadLoop).run", // Go 1.26
		"net/http/internal/http2.(*ClientConn).readLoop", "net/http/internal/http2.(*clientConnReadLoop).run", // Go 1.27
	}
	run := recordConnCase(t, roots, func(t *testing.T) connCase {
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
		shared := backend.Client()
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
				return errors.New(resp.Status)
			}
			return nil
		}
		var sink uint64
		return connCase{
			handler: func(w http.ResponseWriter, r *http.Request) {
				sink += burnUnits(2, uint64(len(r.URL.RawQuery)))
				if err := get("/stock"); err != nil {
					http.Error(w, err.Error(), http.StatusBadGateway)
				}
			},
			traffic: func(t *testing.T, checkout func(int)) {
				checkout(0) // dials the shared connection inside a labelled request
				for i := range 300 {
					if err := get("/big"); err != nil {
						t.Fatal(err)
					}
					if i%10 == 0 {
						checkout(i + 1)
					}
				}
			},
			close: func() {
				shared.CloseIdleConnections()
				backend.Close()
			},
		}
	})
	checkConnCase(t, run)
}

// TestConnectionGoroutinesSQL: a handler opens its database/sql DB on
// first use, so the DB's connectionOpener goroutine starts in that request
// and keeps its labels. Later unlabelled queries, more at once than the
// pool's one connection, each leave their connection bad: the opener opens
// the next ones for the waiting queries, and a driver connection costs CPU
// to open (as a handshake does). The report counts it in the connection
// row, in no k6 row; it would miss it without database/sql's
// connectionOpener in connRoots.
func TestConnectionGoroutinesSQL(t *testing.T) {
	run := recordConnCase(t, []string{"database/sql.(*DB).connectionOpener"}, func(t *testing.T) connCase {
		var (
			once sync.Once
			db   *sql.DB
			sink uint64
		)
		lazy := func() *sql.DB {
			once.Do(func() {
				db = sql.OpenDB(handshakeConnector{})
				db.SetMaxOpenConns(1)
			})
			return db
		}
		return connCase{
			handler: func(w http.ResponseWriter, r *http.Request) {
				sink += burnUnits(2, uint64(len(r.URL.RawQuery)))
				if _, err := lazy().ExecContext(r.Context(), "reserve"); err != nil {
					http.Error(w, err.Error(), http.StatusBadGateway)
				}
			},
			traffic: func(t *testing.T, checkout func(int)) {
				checkout(0) // opens the DB inside a labelled request
				var wg sync.WaitGroup
				errs := make(chan error, 4)
				for range 4 {
					wg.Go(func() {
						for range 40 {
							if _, err := db.Exec("restock"); err != nil {
								errs <- err
								return
							}
						}
					})
				}
				for i := range 10 {
					checkout(i + 1)
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					t.Fatal(err)
				}
			},
			close: func() {
				if db != nil {
					db.Close()
				}
			},
		}
	})
	checkConnCase(t, run)
}

// handshakeConnector is a database/sql driver whose connections cost about
// a millisecond of CPU to open and serve one statement each.
type handshakeConnector struct{}

func (handshakeConnector) Connect(context.Context) (driver.Conn, error) {
	return &oneUseConn{handshake: burnUnits(1, 7)}, nil
}

func (c handshakeConnector) Driver() driver.Driver { return c }

func (c handshakeConnector) Open(string) (driver.Conn, error) { return c.Connect(context.Background()) }

// oneUseConn is a connection that is no longer valid once used.
type oneUseConn struct {
	handshake uint64
	used      bool
}

func (c *oneUseConn) ExecContext(context.Context, string, []driver.NamedValue) (driver.Result, error) {
	c.used = true
	return driver.RowsAffected(1), nil
}

func (c *oneUseConn) IsValid() bool { return !c.used }

func (c *oneUseConn) Prepare(string) (driver.Stmt, error) { return nil, errors.ErrUnsupported }

func (c *oneUseConn) Close() error { return nil }

func (c *oneUseConn) Begin() (driver.Tx, error) { return nil, errors.ErrUnsupported }
