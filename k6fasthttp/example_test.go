package k6fasthttp_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/k6labels/k6labels"
	"github.com/k6labels/k6labels/k6fasthttp"
)

func ExampleLabelsFromBaggageHandler() {
	h := k6fasthttp.LabelsFromBaggageHandler(func(ctx *fasthttp.RequestCtx) {
		// Pass k6fasthttp.Context(ctx) on to code that takes a context:
		// goroutines started with it, and span profilers, keep the labels.
		fmt.Println(k6labels.Members(k6fasthttp.Context(ctx)))
	})

	var ctx fasthttp.RequestCtx // a served request, here made by hand
	ctx.Request.Header.Set("Baggage", "k6.test_run_id=123456,k6.scenario=checkout,k6.name=http://shop/cart?id=7")
	h(&ctx)
	// Output: [{k6.name http://shop/cart} {k6.scenario checkout} {k6.test_run_id 123456}]
}

// WithNameFunc gets the *fasthttp.RequestCtx being labelled: here k6_name
// becomes the method and the route instead of the URL k6 sent.
func ExampleNewHandler() {
	routes := []string{"/cart", "/pay"}
	name := k6labels.WithNameFunc(func(c context.Context, name string) string {
		ctx, ok := c.(*fasthttp.RequestCtx)
		if !ok {
			return name
		}
		for _, r := range routes {
			if strings.HasPrefix(string(ctx.Path()), r) {
				return string(ctx.Method()) + " " + r
			}
		}
		return "other"
	})
	h := k6fasthttp.NewHandler(func(ctx *fasthttp.RequestCtx) {
		fmt.Println(k6labels.Baggage(k6fasthttp.Context(ctx)))
	}, name)

	var ctx fasthttp.RequestCtx
	ctx.Request.SetRequestURI("/cart/42")
	ctx.Request.Header.Set("Baggage", "k6.scenario=checkout,k6.name=http://shop/cart/42")
	h(&ctx)
	// Output: k6.name=GET%20/cart,k6.scenario=checkout
}

// Serve is the core of middleware for frameworks on fasthttp: one Labeler
// made up front, and the rest of the chain run inside the labels.
func ExampleServe() {
	l := k6labels.NewLabeler()
	middleware := func(next fasthttp.RequestHandler) fasthttp.RequestHandler {
		return func(ctx *fasthttp.RequestCtx) { k6fasthttp.Serve(l, ctx, next) }
	}
	h := middleware(func(ctx *fasthttp.RequestCtx) {
		fmt.Println(k6labels.Baggage(k6fasthttp.Context(ctx)) != "")
	})

	var ctx fasthttp.RequestCtx
	ctx.Request.Header.Set("Baggage", "k6.scenario=checkout")
	h(&ctx)
	// Output: true
}

// A handler that upgrades the connection (a WebSocket, say) runs the session
// with the request's labels through Hijack.
func ExampleHijack() {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	srv := &fasthttp.Server{Handler: k6fasthttp.NewHandler(func(ctx *fasthttp.RequestCtx) {
		ctx.HijackSetNoResponse(true)
		k6fasthttp.Hijack(ctx, func(c net.Conn) {
			// The session's CPU is labelled with the request's k6 labels.
			fmt.Fprint(c, "HTTP/1.1 200 OK\r\nContent-Length: 7\r\nConnection: close\r\n\r\nsession")
		})
	})}
	go func() { _ = srv.Serve(ln) }()
	defer func() { _ = srv.Shutdown() }()

	c, _ := net.Dial("tcp", ln.Addr().String())
	defer c.Close()
	fmt.Fprint(c, "GET /ws HTTP/1.1\r\nHost: shop\r\nBaggage: k6.scenario=checkout\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(string(body))
	// Output: session
}
