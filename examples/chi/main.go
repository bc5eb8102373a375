// Command chi serves a chi router whose handlers run with the k6 pprof labels
// of each request: k6labels.Middleware is chi middleware as it is.
//
//	go run ./chi &
//	curl -H 'baggage: k6.test_run_id=1,k6.scenario=rides,k6.name=bike' 127.0.0.1:8081/bike/42
package main

import (
	"flag"
	"log"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/k6labels/k6labels"
	"github.com/k6labels/k6labels/examples/internal/show"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8081", "address to listen on")
	flag.Parse()
	srv := &http.Server{Addr: *addr, Handler: newRouter(), ReadHeaderTimeout: 10 * time.Second}
	log.Printf("listening on %s", *addr)
	log.Fatal(srv.ListenAndServe())
}

// newRouter builds the application. The middleware goes first, so that every
// route (and every later middleware) runs with the labels.
func newRouter() *chi.Mux {
	r := chi.NewRouter()
	r.Use(k6labels.Middleware())
	r.Get("/bike/{id}", show.Handler)
	return r
}
