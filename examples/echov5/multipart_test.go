package main

import (
	"net/http"
	"os"
	"testing"

	"github.com/labstack/echo/v5"

	"github.com/k6labels/k6labels/examples/internal/servetest"
)

// Uploads of several MB parsed with a small maxMemory by an Echo handler
// under the wrapped middleware leave no temp file, with and without k6
// baggage, also when the handler panics with no recovery middleware: the
// net/http handler inside echo.WrapMiddleware removes the files of the
// request copy it handed on.
func TestMultipartFilesRemoved(t *testing.T) {
	for _, panics := range []bool{false, true} {
		t.Run(map[bool]string{false: "no panic", true: "panic"}[panics], func(t *testing.T) {
			dir := t.TempDir()
			t.Setenv("TMPDIR", dir) // where multipart puts what is over maxMemory
			e := newEcho()
			parsed := make(chan int, 1)
			e.POST("/upload", func(c *echo.Context) error {
				if err := c.Request().ParseMultipartForm(1 << 10); err != nil {
					t.Errorf("ParseMultipartForm: %v", err)
				}
				entries, _ := os.ReadDir(dir)
				parsed <- len(entries)
				if panics {
					panic(http.ErrAbortHandler) // the panic net/http does not log
				}
				return c.NoContent(http.StatusNoContent)
			})
			base := servetest.Start(t, e)
			for _, baggage := range []string{servetest.Baggage, "", "userId=alice"} {
				servetest.Upload(t, base+"/upload", baggage, 4<<20)
				if n := <-parsed; n == 0 {
					t.Fatal("the upload made no temp file: the test proves nothing")
				}
				servetest.WaitEmpty(t, dir, "baggage "+baggage)
			}
		})
	}
}
