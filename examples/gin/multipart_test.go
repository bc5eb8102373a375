package main

import (
	"io"
	"net/http"
	"os"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/k6labels/k6labels/examples/internal/servetest"
	"github.com/k6labels/k6labels/internal/uploadtest"
)

// Uploads of several MB parsed with a small maxMemory under the middleware
// leave no temp file, with and without k6 baggage, when the handler panics,
// with gin.Recovery outside the middleware or no recovery at all, and when a
// later middleware copies the request again.
func TestMultipartFilesRemoved(t *testing.T) {
	for _, c := range []struct {
		name             string
		recovery, recopy bool
		panic            bool
	}{
		{name: "no panic"},
		{name: "panic, no recovery", panic: true},
		{name: "panic, gin.Recovery", recovery: true, panic: true},
		{name: "request copied again", recopy: true},
		{name: "request copied again, panic", recopy: true, panic: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			t.Setenv("TMPDIR", dir) // where multipart puts what is over maxMemory
			r := gin.New()
			r.MaxMultipartMemory = 1 << 10
			if c.recovery {
				r.Use(gin.RecoveryWithWriter(io.Discard))
			}
			r.Use(k6Labels())
			if c.recopy {
				r.Use(func(c *gin.Context) {
					c.Request = c.Request.WithContext(c.Request.Context())
					c.Next()
				})
			}
			parsed := make(chan int, 1)
			r.POST("/upload", func(g *gin.Context) {
				if _, err := g.FormFile("file"); err != nil {
					t.Errorf("FormFile: %v", err)
				}
				entries, _ := os.ReadDir(dir)
				parsed <- len(entries)
				if c.panic {
					panic(http.ErrAbortHandler) // the panic net/http does not log
				}
				g.Status(http.StatusNoContent)
			})
			base := servetest.Start(t, r)
			for _, baggage := range []string{servetest.Baggage, "", "userId=alice"} {
				uploadtest.Upload(t, base+"/upload", baggage, 4<<20)
				if n := <-parsed; n == 0 {
					t.Fatal("the upload made no temp file: the test proves nothing")
				}
				uploadtest.WaitEmpty(t, dir, "baggage "+baggage)
			}
		})
	}
}
