package main

import (
	"testing"

	"github.com/k6labels/k6labels/examples/internal/servetest"
)

// TestReportByRoute: the k6labels command's report of a real profile of
// the gorilla/mux recipe, with k6's results naming requests by URL, gives
// CPU per request per path template ("/bike/{id}", "/api/car/{id}").
func TestReportByRoute(t *testing.T) {
	base := servetest.Start(t, newNamedRouter(servetest.Spin))
	servetest.CheckReportByRoute(t, base, servetest.RouteLoad{Path: "/bike/%d", Route: "/bike/{id}", N: 3},
		servetest.RouteLoad{Path: "/api/car/%d", Route: "/api/car/{id}", N: 2})
}
