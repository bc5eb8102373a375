package k6labels

import (
	"context"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/k6labels/k6labels/internal/uploadtest"
)

// Uploads parsed under the middleware leave no temp file behind: with and
// without k6 baggage, with a naming hook, and when the handler panics.
func TestMultipartFilesRemoved(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir) // where multipart puts files over maxMemory
	for _, c := range []struct {
		name  string
		opts  []Option
		panic bool
	}{
		{"default", nil, false},
		{"default, panic", nil, true},
		{"naming hook", []Option{WithRoutePattern()}, false},
		{"naming hook, panic", []Option{WithNameFormatter(func(*http.Request, string) string { return "n" })}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			parsed := make(chan int, 1)
			h := NewHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if err := r.ParseMultipartForm(1 << 10); err != nil {
					t.Errorf("ParseMultipartForm: %v", err)
				}
				f, _, err := r.FormFile("file")
				if err != nil {
					t.Errorf("FormFile: %v", err)
				} else {
					f.Close()
				}
				entries, _ := os.ReadDir(dir)
				parsed <- len(entries)
				if c.panic {
					panic(http.ErrAbortHandler) // the panic net/http does not log
				}
			}), c.opts...)
			srv := httptest.NewUnstartedServer(h)
			srv.Config.ErrorLog = log.New(io.Discard, "", 0)
			srv.Start()
			defer srv.Close()
			for _, baggage := range []string{"k6.test_run_id=1,k6.scenario=s,k6.name=http://h/upload", "", "other=1"} {
				uploadtest.Upload(t, srv.URL+"/upload", baggage, 4<<20)
				if n := <-parsed; n == 0 {
					t.Fatal("the upload made no temp file: the test proves nothing")
				}
				uploadtest.WaitEmpty(t, dir, "baggage "+baggage)
			}
		})
	}
}

// A context the handler keeps after it returns (a background job's, made
// with context.WithoutCancel) does not keep the request alive, nor the form
// parsed into it, which holds uploaded files in memory: as without k6labels.
func TestKeptContextDoesNotKeepRequest(t *testing.T) {
	for _, baggage := range []string{"", "k6.test_run_id=1,k6.scenario=s,k6.name=upload"} {
		collected := make(chan struct{}, 4)
		var kept []context.Context
		h := NewHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if _, _, err := r.FormFile("file"); err != nil { // parsed in memory (32 MB)
				t.Error(err)
				return
			}
			runtime.AddCleanup(r.MultipartForm, func(chan struct{}) { collected <- struct{}{} }, collected)
			kept = append(kept, context.WithoutCancel(r.Context()))
		}), WithRegistry(NewRegistry(0)))
		srv := httptest.NewServer(h)
		const n = 3
		for range n {
			uploadtest.Upload(t, srv.URL+"/upload", baggage, 1<<20)
		}
		srv.Close()
		freed := 0
		for deadline := time.Now().Add(5 * time.Second); freed < n && time.Now().Before(deadline); {
			runtime.GC()
			select {
			case <-collected:
				freed++
			case <-time.After(20 * time.Millisecond):
			}
		}
		if freed < n {
			t.Errorf("baggage %q: %d of %d parsed forms kept alive by the contexts the handler kept", baggage, n-freed, n)
		}
		runtime.KeepAlive(kept)
	}
}
