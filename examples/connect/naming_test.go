package main

import (
	"net/http"
	"testing"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/k6labels/k6labels"
	"github.com/k6labels/k6labels/examples/internal/servetest"
)

// TestNamedByProcedure: a Connect handler registered on a ServeMux and
// wrapped with WithRoutePattern is named by its procedure, whatever name k6
// sent.
func TestNamedByProcedure(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle(labelsProcedure, k6labels.NewHandler(connect.NewUnaryHandler(labelsProcedure, labels), k6labels.WithRoutePattern()))
	base := servetest.Start(t, mux)
	client := connect.NewClient[emptypb.Empty, structpb.Struct](http.DefaultClient, base+labelsProcedure)
	got := call(t, client, "k6.test_run_id=1,k6.scenario=s,k6.name="+base+labelsProcedure+"?id=42")
	if got["k6_name"] != labelsProcedure {
		t.Errorf("k6_name = %q, want the procedure %q", got["k6_name"], labelsProcedure)
	}
}
