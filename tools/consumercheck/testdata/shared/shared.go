// The part every consumer program shares: consumercheck copies this file
// next to each program's main.go.
package main

import (
	"context"
	"log"
	"net"
	"net/http"
	"runtime/pprof"
	"slices"
	"strings"
)

// labels returns the pprof labels of ctx as sorted "key=value" words.
func labels(ctx context.Context) string {
	var l []string
	pprof.ForLabels(ctx, func(k, v string) bool {
		l = append(l, k+"="+v)
		return true
	})
	slices.Sort(l)
	return strings.Join(l, " ")
}

// listen returns a listener on a free 127.0.0.1 port.
func listen() net.Listener {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	return ln
}

// serve serves h on a free 127.0.0.1 port and returns its base URL.
func serve(h http.Handler) string {
	ln := listen()
	go http.Serve(ln, h)
	return "http://" + ln.Addr().String()
}

// get sends req and discards the answer.
func get(req *http.Request) {
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		log.Fatal(err)
	}
	resp.Body.Close()
}

// getBaggage sends a GET of url with one baggage header line.
func getBaggage(url, baggage string) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		log.Fatal(err)
	}
	req.Header["baggage"] = []string{baggage}
	get(req)
}
