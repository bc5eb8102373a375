// Command root serves one request with k6 baggage through the k6labels
// handler on 127.0.0.1 and prints the pprof labels the handler saw.
package main

import (
	"fmt"
	"net/http"

	"github.com/k6labels/k6labels"
)

// baggage is what k6's http-instrumentation-pyroscope 1.0.2 sends.
const baggage = "k6.test_run_id=4242,k6.scenario=rush_hour,k6.name=order bike"

func main() {
	seen := make(chan string, 1)
	url := serve(k6labels.NewHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- labels(r.Context())
	})))
	getBaggage(url+"/car", baggage)
	fmt.Println("labels:", <-seen)
}
