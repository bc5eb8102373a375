// Command echo serves an Echo application whose handlers run with the k6
// pprof labels of each request, on Echo v5 or, with -v4, on Echo v4:
// echo.WrapMiddleware turns the net/http middleware into Echo middleware, and
// hands the labelled request on in the Echo context.
//
//	go run ./echo &    # or go run ./echo -v4 &
//	curl -H 'baggage: k6.test_run_id=1,k6.scenario=rides,k6.name=bike' 127.0.0.1:8083/bike/42
package main

import (
	"context"
	"flag"
	"log"
	"net/http"

	"github.com/labstack/echo/v5"

	"github.com/k6labels/k6labels"
	"github.com/k6labels/k6labels/examples/internal/show"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8083", "address to listen on")
	v4 := flag.Bool("v4", false, "serve the application on Echo v4")
	flag.Parse()
	if *v4 {
		log.Fatal(startV4(*addr))
	}
	sc := echo.StartConfig{Address: *addr, HideBanner: true}
	log.Fatal(sc.Start(context.Background(), newEcho(bike)))
}

// newEcho builds the application on Echo v5, h serving /bike/:id and
// /api/car/:id. e.Use runs the middleware after routing, e.Pre would run it
// before: after routing Echo v5 has put the route path c.Path() in
// Request.Pattern, so opts k6labels.WithRoutePattern() names each k6 request
// by its route ("/bike/:id"), not by the URL k6 sent.
func newEcho(h echo.HandlerFunc, opts ...k6labels.Option) *echo.Echo {
	e := echo.New()
	e.Use(echo.WrapMiddleware(k6labels.Middleware(opts...)))
	e.GET("/bike/:id", h)
	e.Group("/api").GET("/car/:id", h)
	return e
}

func bike(c *echo.Context) error {
	// The labels are in the request's context (and on the goroutine).
	return c.JSON(http.StatusOK, show.Labels(c.Request().Context()))
}
