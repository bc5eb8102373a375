package main

import (
	"net/http"
	"testing"

	"github.com/k6labels/k6labels/examples/internal/servetest"
)

// TestReportByRoute: the k6labels command's report of a real profile of
// the Echo recipes, with k6's results naming requests by URL, gives CPU
// per request per Echo route ("/bike/:id", "/api/car/:id").
func TestReportByRoute(t *testing.T) {
	for _, v := range versions {
		t.Run(v.name, func(t *testing.T) {
			base := servetest.Start(t, v.app(http.HandlerFunc(servetest.Spin), true))
			servetest.CheckReportByRoute(t, base, servetest.RouteLoad{Path: "/bike/%d", Route: "/bike/:id", N: 3},
				servetest.RouteLoad{Path: "/api/car/%d", Route: "/api/car/:id", N: 2})
		})
	}
}
