// Command connect serves a Connect RPC whose handler runs with the k6 pprof
// labels of each call. A Connect handler is an http.Handler, so
// k6labels.NewHandler covers the Connect, gRPC and gRPC-Web protocols it
// serves. The service needs no generated code: its messages are protobuf
// well-known types.
//
//	go run ./connect &
//	curl -H 'baggage: k6.test_run_id=1,k6.scenario=rides,k6.name=labels' \
//	     -H 'content-type: application/json' -d '{}' \
//	     127.0.0.1:8085/k6labels.examples.v1.LabelService/Labels
package main

import (
	"context"
	"flag"
	"log"
	"net/http"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/k6labels/k6labels"
	"github.com/k6labels/k6labels/examples/internal/show"
)

// labelsProcedure is the RPC's path: /package.Service/Method.
const labelsProcedure = "/k6labels.examples.v1.LabelService/Labels"

func main() {
	addr := flag.String("addr", "127.0.0.1:8085", "address to listen on")
	flag.Parse()
	// gRPC clients speak HTTP/2; without TLS that is h2c.
	protocols := new(http.Protocols)
	protocols.SetHTTP1(true)
	protocols.SetUnencryptedHTTP2(true)
	srv := &http.Server{Addr: *addr, Handler: newMux(), Protocols: protocols, ReadHeaderTimeout: 10 * time.Second}
	log.Printf("listening on %s", *addr)
	log.Fatal(srv.ListenAndServe())
}

// newMux builds the application: each Connect handler is wrapped with
// NewHandler (wrapping the whole mux would do as well).
func newMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle(labelsProcedure, k6labels.NewHandler(connect.NewUnaryHandler(labelsProcedure, labels)))
	return mux
}

// labels answers with the pprof labels of the call's context.
func labels(ctx context.Context, _ *connect.Request[emptypb.Empty]) (*connect.Response[structpb.Struct], error) {
	fields := map[string]any{}
	for k, v := range show.Labels(ctx) {
		fields[k] = v
	}
	s, err := structpb.NewStruct(fields)
	if err != nil {
		return nil, connect.NewError(connect.CodeInternal, err)
	}
	return connect.NewResponse(s), nil
}
