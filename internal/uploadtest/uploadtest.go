// Package uploadtest posts multipart uploads and watches the temp dir they
// spill into, for the tests that check no upload leaves a file behind.
package uploadtest

import (
	"bytes"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"testing"
	"time"
)

// Upload posts a multipart form with one file of size bytes to url, with
// one baggage line unless baggage is "", and waits for the answer (or the
// closed connection of a panicking handler).
func Upload(t testing.TB, url, baggage string, size int) {
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
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, url, &body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	if baggage != "" {
		req.Header.Set("Baggage", baggage)
	}
	resp, err := http.DefaultClient.Do(req)
	if err == nil { // a panicking handler closes the connection instead
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

// WaitEmpty fails unless dir becomes empty within 10 s. It waits because
// net/http removes the form of the request it handed out after the handler
// returns, which may be after the client has its answer.
func WaitEmpty(t testing.TB, dir, what string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
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
	}
}
