package main

import (
	"net/http"
	"testing"

	echo4 "github.com/labstack/echo/v4"
	"github.com/labstack/echo/v5"

	"github.com/k6labels/k6labels"
	"github.com/k6labels/k6labels/examples/internal/servetest"
)

// versions builds the application on each Echo major version, every route
// (and POST /upload) served by the net/http handler h: named names k6
// requests by route path; pre puts that naming middleware in e.Pre instead.
var versions = []struct {
	name string
	app  func(h http.Handler, named bool) http.Handler
	pre  func(h http.Handler) http.Handler
}{
	{
		"v5",
		func(h http.Handler, named bool) http.Handler {
			newApp := newEcho
			if named {
				newApp = newNamedEcho
			}
			e := newApp(echo.WrapHandler(h))
			e.POST("/upload", echo.WrapHandler(h))
			return e
		},
		func(h http.Handler) http.Handler {
			e := echo.New()
			e.Pre(echo.WrapMiddleware(k6labels.Middleware(k6labels.WithRoutePattern())))
			e.GET("/bike/:id", echo.WrapHandler(h))
			return e
		},
	},
	{
		"v4",
		func(h http.Handler, named bool) http.Handler {
			newApp := newEchoV4
			if named {
				newApp = newNamedEchoV4
			}
			e := newApp(echo4.WrapHandler(h))
			e.POST("/upload", echo4.WrapHandler(h))
			return e
		},
		func(h http.Handler) http.Handler {
			e := echo4.New()
			e.Pre(routeLabelsV4())
			e.GET("/bike/:id", echo4.WrapHandler(h))
			return e
		},
	},
}

// The handlers of main (bike, bikeV4) see the k6 labels.
func TestLabels(t *testing.T) {
	servetest.CheckLabels(t, servetest.Start(t, newEcho(bike))+"/bike/42")
	servetest.CheckLabels(t, servetest.Start(t, newEchoV4(bikeV4))+"/bike/42")
}

func TestProfile(t *testing.T) {
	for _, v := range versions {
		t.Run(v.name, func(t *testing.T) {
			servetest.CheckProfile(t, servetest.Start(t, v.app(http.HandlerFunc(servetest.Spin), false))+"/bike/1")
		})
	}
}

// Uploads of several MB parsed with a small maxMemory by an Echo handler
// under the wrapped middleware leave no temp file, with and without k6
// baggage, also when the handler panics with no recovery middleware: the
// net/http handler inside echo.WrapMiddleware removes the files of the
// request copy it handed on.
func TestMultipartFilesRemoved(t *testing.T) {
	for _, v := range versions {
		t.Run(v.name, func(t *testing.T) {
			servetest.CheckUploadsLeaveNoFiles(t, func(route http.Handler) http.Handler { return v.app(route, false) })
		})
	}
}
