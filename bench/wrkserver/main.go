// Command wrkserver serves a null handler on a loopback address for wrk.sh:
// bare, or wrapped by the k6labels middleware or by the x/k6-like baseline.
// It prints the address it listens on, then serves until killed.
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"

	"github.com/k6labels/k6labels"
	"github.com/k6labels/k6labels/bench"
)

func main() {
	mode := flag.String("mode", "bare", "bare, k6labels or baseline")
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on (loopback only)")
	flag.Parse()
	var h http.Handler = http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	switch *mode {
	case "bare":
	case "k6labels":
		h = k6labels.NewHandler(h)
	case "baseline":
		h = bench.BaselineHandler(h)
	default:
		fmt.Fprintf(os.Stderr, "wrkserver: unknown -mode %q: use bare, k6labels or baseline\n", *mode)
		os.Exit(2)
	}
	lis, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	if ip := lis.Addr().(*net.TCPAddr).IP; !ip.IsLoopback() {
		log.Fatalf("wrkserver: %s is not a loopback address", lis.Addr())
	}
	fmt.Println(lis.Addr())
	log.Fatal(http.Serve(lis, h))
}
