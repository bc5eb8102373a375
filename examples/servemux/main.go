// Command servemux serves a net/http ServeMux whose handlers run with the k6
// pprof labels of each request, k6_name being the route pattern that matched
// (such as "GET /bike/{id}") rather than the URL k6 sent: one value per route,
// however many ids the load test uses.
//
//	go run ./servemux &
//	curl -H 'baggage: k6.test_run_id=1,k6.scenario=rides,k6.name=http://x/bike/42' 127.0.0.1:8080/bike/42
package main

import (
	"flag"
	"log"
	"net/http"
	"time"

	"github.com/k6labels/k6labels"
	"github.com/k6labels/k6labels/examples/internal/show"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on")
	flag.Parse()
	srv := &http.Server{Addr: *addr, Handler: newMux(), ReadHeaderTimeout: 10 * time.Second}
	log.Printf("listening on %s", *addr)
	log.Fatal(srv.ListenAndServe())
}

// newMux builds the application. The mux sets Request.Pattern while routing,
// so the middleware goes on each registered handler, after routing.
func newMux() *http.ServeMux {
	label := k6labels.Middleware(k6labels.WithRoutePattern())
	mux := http.NewServeMux()
	mux.Handle("GET /bike/{id}", label(http.HandlerFunc(show.Handler)))
	mux.Handle("GET /car/{id}", label(http.HandlerFunc(show.Handler)))
	return mux
}

// newWrappedMux is the same application with the middleware around the whole
// mux, for when it must run before routing. WithServeMux asks the mux which
// pattern will match, which routes each k6 request twice.
func newWrappedMux() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /bike/{id}", show.Handler)
	mux.HandleFunc("GET /car/{id}", show.Handler)
	return k6labels.NewHandler(mux, k6labels.WithServeMux(mux))
}
