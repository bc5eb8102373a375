// Command echo serves an Echo application whose handlers run with the k6
// pprof labels of each request, on Echo v5 or, with -v4, on Echo v4, through
// k6Labels: Echo middleware around the net/http middleware that hands the
// labelled request on in the Echo context and puts the original back after.
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
// before: after routing k6Labels puts the route path c.Path() in
// Request.Pattern, so opts k6labels.WithRoutePattern() names each k6 request
// by its route ("/bike/:id"), not by the URL k6 sent.
func newEcho(h echo.HandlerFunc, opts ...k6labels.Option) *echo.Echo {
	e := echo.New()
	e.Use(k6Labels(opts...))
	e.GET("/bike/:id", h)
	e.Group("/api").GET("/car/:id", h)
	return e
}

// k6Labels is Echo middleware doing what k6labels.NewHandler does for
// net/http: the rest of the chain runs with the request's k6 labels, on the
// goroutine and in c.Request().Context(). It puts the route path c.Path() in
// Request.Pattern, where k6labels.WithRoutePattern reads it.
//
// echo.WrapMiddleware(k6labels.Middleware()) is not enough: it leaves the
// labelled copy of the request in c once the chain returns, so a form parsed
// after it (an HTTPErrorHandler calling c.FormValues(), a Pre middleware
// after next) is parsed into the copy after k6labels removed the copy's
// files, and its multipart temp files stay on disk. k6Labels puts the
// request it got back in c when the chain returns or panics, so net/http
// removes them.
func k6Labels(opts ...k6labels.Option) echo.MiddlewareFunc {
	label := k6labels.Middleware(opts...)
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c *echo.Context) (err error) {
			r := c.Request()
			defer c.SetRequest(r)
			r.Pattern = c.Path()
			label(http.HandlerFunc(func(_ http.ResponseWriter, labelled *http.Request) {
				c.SetRequest(labelled)
				err = next(c)
			})).ServeHTTP(c.Response(), r)
			return err
		}
	}
}

func bike(c *echo.Context) error {
	// The labels are in the request's context (and on the goroutine).
	return c.JSON(http.StatusOK, show.Labels(c.Request().Context()))
}
