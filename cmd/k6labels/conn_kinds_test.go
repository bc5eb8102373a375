package main

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

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
