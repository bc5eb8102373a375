// Command gorillamux serves a gorilla/mux router whose handlers run with the
// k6 pprof labels of each request: k6labels.Middleware is a mux.MiddlewareFunc.
//
//	go run ./gorillamux &
//	curl -H 'baggage: k6.test_run_id=1,k6.scenario=rides,k6.name=bike' 127.0.0.1:8082/bike/42
package main

import (
	"flag"
	"log"
	"net/http"
	"time"

	"github.com/gorilla/mux"

	"github.com/k6labels/k6labels"
	"github.com/k6labels/k6labels/examples/internal/show"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8082", "address to listen on")
	flag.Parse()
	srv := &http.Server{Addr: *addr, Handler: newRouter(), ReadHeaderTimeout: 10 * time.Second}
	log.Printf("listening on %s", *addr)
	log.Fatal(srv.ListenAndServe())
}

// newRouter builds the application. gorilla/mux runs middleware only for
// requests that match a route, after routing.
func newRouter() *mux.Router {
	r := mux.NewRouter()
	r.Use(k6labels.Middleware())
	r.HandleFunc("/bike/{id}", show.Handler).Methods(http.MethodGet)
	return r
}
