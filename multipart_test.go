package k6labels

import (
	"bytes"
	"io"
	"log"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"
)

// upload posts a multipart form with one file of size bytes to url.
func upload(t *testing.T, url string, baggage string, size int) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, err := mw.CreateFormFile("file", "big.bin")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fw.Write(bytes.Repeat([]byte{'x'}, size)); err != nil {
		t.Fatal(err)
	}
	mw.Close()
	req, err := http.NewRequest("POST", url, &body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	if baggage != "" {
		req.Header.Set("Baggage", baggage)
	}
	resp, err := http.DefaultClient.Do(req)
	if err == nil { // a panicking handler closes the connection: an error is what it gives
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

// emptyDir waits (net/http removes the form of the request it handed out
// after writing the response) until dir holds no file, and fails if files
// stay.
func emptyDir(t *testing.T, dir, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d multipart files left in the temp dir", what, len(entries))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

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
				upload(t, srv.URL+"/upload", baggage, 4<<20)
				if n := <-parsed; n == 0 {
					t.Fatal("the upload made no temp file: the test proves nothing")
				}
				emptyDir(t, dir, "baggage "+baggage)
			}
		})
	}
}
