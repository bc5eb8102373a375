package main

import (
	"net/http"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/k6labels/k6labels/examples/internal/servetest"
)

// Uploads of several MB parsed with a small maxMemory by an Echo handler
// under the wrapped middleware leave no temp file, with and without k6
// baggage, also when the handler panics with no recovery middleware: the
// net/http handler inside echo.WrapMiddleware removes the files of the
// request copy it handed on.
func TestMultipartFilesRemoved(t *testing.T) {
	servetest.CheckUploadsLeaveNoFiles(t, func(route http.Handler) http.Handler {
		e := newEcho()
		e.POST("/upload", echo.WrapHandler(route))
		return e
	})
}
