package main

import (
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/k6labels/k6labels/examples/internal/servetest"
)

// TestReportByRoute: the k6labels command's report of a real profile of
// the Gin recipe, with k6's results naming requests by URL, gives CPU per
// request per Gin route ("/bike/:id", "/api/car/:id").
func TestReportByRoute(t *testing.T) {
	base := servetest.Start(t, newNamedEngine(gin.WrapF(servetest.Spin)))
	servetest.CheckReportByRoute(t, base, servetest.RouteLoad{Path: "/bike/%d", Route: "/bike/:id", N: 3},
		servetest.RouteLoad{Path: "/api/car/%d", Route: "/api/car/:id", N: 2})
}
