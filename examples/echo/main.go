// Command echo serves an Echo (v4) application whose handlers run with the k6
// pprof labels of each request: echo.WrapMiddleware turns the net/http
// middleware into Echo middleware, and hands the labelled request on in the
// echo.Context.
//
//	go run ./echo &
//	curl -H 'baggage: k6.test_run_id=1,k6.scenario=rides,k6.name=bike' 127.0.0.1:8083/bike/42
package main

import (
	"flag"
	"log"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/k6labels/k6labels"
	"github.com/k6labels/k6labels/examples/internal/show"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8083", "address to listen on")
	flag.Parse()
	e := newEcho()
	e.HideBanner = true
	log.Fatal(e.Start(*addr))
}

// newEcho builds the application. e.Use runs the middleware after routing;
// e.Pre would run it before.
func newEcho() *echo.Echo {
	e := echo.New()
	e.Use(echo.WrapMiddleware(k6labels.Middleware()))
	e.GET("/bike/:id", bike)
	return e
}

func bike(c echo.Context) error {
	// The labels are in the request's context (and on the goroutine).
	return c.JSON(http.StatusOK, show.Labels(c.Request().Context()))
}
