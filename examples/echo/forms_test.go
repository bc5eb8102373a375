package main

import (
	"net/http"
	"os"
	"testing"

	echo4 "github.com/labstack/echo/v4"
	"github.com/labstack/echo/v5"

	"github.com/k6labels/k6labels/examples/internal/servetest"
	"github.com/k6labels/k6labels/internal/uploadtest"
)

// formApp is an application that rejects every upload with 401 before
// reading it, and parses the form afterwards, outside the k6 middleware:
// in Echo's HTTPErrorHandler (errorHandler) or in a Pre middleware after
// next (errorHandler false). Each parse sends the number of files in dir
// on parsed.
type formApp struct {
	name string
	size int // bytes uploaded: more than the app keeps in memory
	app  func(dir string, errorHandler bool, parsed chan<- int) http.Handler
}

var formApps = []formApp{
	{"v5", 256 << 10, func(dir string, errorHandler bool, parsed chan<- int) http.Handler {
		e := echo.NewWithConfig(echo.Config{FormParseMaxMemory: 1 << 10})
		parse := func(c *echo.Context) {
			_, _ = c.FormValues()
			parsed <- countFiles(dir)
		}
		if errorHandler {
			e.HTTPErrorHandler = func(c *echo.Context, err error) {
				parse(c)
				_ = c.NoContent(http.StatusUnauthorized)
			}
		} else {
			e.Pre(func(next echo.HandlerFunc) echo.HandlerFunc {
				return func(c *echo.Context) error {
					err := next(c)
					parse(c)
					return err
				}
			})
		}
		e.Use(k6Labels())
		e.POST("/upload", func(*echo.Context) error { return echo.ErrUnauthorized })
		return e
	}},
	// Echo v4 parses with a fixed 32 MB in memory: a 33 MiB upload spills.
	{"v4", 33 << 20, func(dir string, errorHandler bool, parsed chan<- int) http.Handler {
		e := echo4.New()
		parse := func(c echo4.Context) {
			_, _ = c.FormParams()
			parsed <- countFiles(dir)
		}
		if errorHandler {
			e.HTTPErrorHandler = func(err error, c echo4.Context) {
				parse(c)
				_ = c.NoContent(http.StatusUnauthorized)
			}
		} else {
			e.Pre(func(next echo4.HandlerFunc) echo4.HandlerFunc {
				return func(c echo4.Context) error {
					err := next(c)
					parse(c)
					return err
				}
			})
		}
		e.Use(k6LabelsV4())
		e.POST("/upload", func(echo4.Context) error { return echo4.ErrUnauthorized })
		return e
	}},
}

func countFiles(dir string) int {
	entries, _ := os.ReadDir(dir)
	return len(entries)
}

// Forms parsed after the k6 middleware returned, by Echo's HTTPErrorHandler
// or by a Pre middleware, leave no multipart temp file, with k6 baggage and
// without: k6Labels puts the original request back in the Echo context, the
// one whose form net/http removes. With echo.WrapMiddleware, each upload with
// k6 baggage left its file behind.
func TestFormsParsedAfterTheChainLeaveNoFiles(t *testing.T) {
	for _, a := range formApps {
		for _, errorHandler := range []bool{true, false} {
			where := map[bool]string{true: "HTTPErrorHandler", false: "Pre"}[errorHandler]
			t.Run(a.name+"/"+where, func(t *testing.T) {
				dir := t.TempDir()
				t.Setenv("TMPDIR", dir) // where multipart puts what is over maxMemory
				parsed := make(chan int, 1)
				base := servetest.Start(t, a.app(dir, errorHandler, parsed))
				for _, baggage := range []string{servetest.Baggage, ""} {
					uploadtest.Upload(t, base+"/upload", baggage, a.size)
					if n := <-parsed; n == 0 {
						t.Fatal("the form made no temp file: the test proves nothing")
					}
					uploadtest.WaitEmpty(t, dir, "baggage "+baggage)
				}
			})
		}
	}
}
