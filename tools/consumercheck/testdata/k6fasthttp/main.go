// Command k6fasthttp serves one request with k6 baggage through the
// k6fasthttp handler on 127.0.0.1 and prints the pprof labels the handler saw.
package main

import (
	"fmt"
	"log"
	"net"
	"net/http"

	"github.com/k6labels/k6labels/k6fasthttp"
	"github.com/valyala/fasthttp"
)

// baggage is what k6's http-instrumentation-pyroscope 1.0.2 sends.
const baggage = "k6.test_run_id=4242,k6.scenario=rush_hour,k6.name=order bike"

func main() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	seen := make(chan string, 1)
	srv := &fasthttp.Server{Handler: k6fasthttp.NewHandler(func(ctx *fasthttp.RequestCtx) {
		seen <- labels(k6fasthttp.Context(ctx))
	})}
	go srv.Serve(ln)
	defer srv.Shutdown()

	req, err := http.NewRequest(http.MethodGet, "http://"+ln.Addr().String()+"/car", nil)
	if err != nil {
		log.Fatal(err)
	}
	req.Header["Baggage"] = []string{baggage}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		log.Fatal(err)
	}
	resp.Body.Close()
	fmt.Println("labels:", <-seen)
}
