// Command k6fasthttp serves one request with k6 baggage through the
// k6fasthttp handler on 127.0.0.1 and prints the pprof labels the handler saw.
package main

import (
	"fmt"

	"github.com/k6labels/k6labels/k6fasthttp"
	"github.com/valyala/fasthttp"
)

// baggage is what k6's http-instrumentation-pyroscope 1.0.2 sends.
const baggage = "k6.test_run_id=4242,k6.scenario=rush_hour,k6.name=order bike"

func main() {
	ln := listen()
	seen := make(chan string, 1)
	srv := &fasthttp.Server{Handler: k6fasthttp.NewHandler(func(ctx *fasthttp.RequestCtx) {
		seen <- labels(k6fasthttp.Context(ctx))
	})}
	go srv.Serve(ln)
	defer srv.Shutdown()

	getBaggage("http://"+ln.Addr().String()+"/car", baggage)
	fmt.Println("labels:", <-seen)
}
