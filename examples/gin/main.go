// Command gin serves a Gin application whose handlers run with the k6 pprof
// labels of each request, through a small Gin middleware built on
// k6labels.Labeler.Labels and k6labels.Do.
//
//	go run ./gin &
//	curl -H 'baggage: k6.test_run_id=1,k6.scenario=rides,k6.name=bike' 127.0.0.1:8084/bike/42
package main

import (
	"context"
	"flag"
	"log"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/k6labels/k6labels"
	"github.com/k6labels/k6labels/examples/internal/show"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8084", "address to listen on")
	flag.Parse()
	gin.SetMode(gin.ReleaseMode)
	log.Printf("listening on %s", *addr)
	log.Fatal(newEngine().Run(*addr))
}

// k6Labels is Gin middleware doing what k6labels.NewHandler does for
// net/http. Wrapping with gin.WrapH would not do: a Gin middleware must call
// c.Next() to run the rest of the chain, inside the labels, and must hand the
// labelled context on in c.Request, where Gin's handlers find it.
//
// When the chain returns or panics, c.Request is the request the middleware
// got again, and multipart files parsed into a copy of it are removed:
// net/http removes only those of the request it handed out, and none when a
// panic reaches it (golang/go#58809).
func k6Labels(opts ...k6labels.Option) gin.HandlerFunc {
	l := k6labels.NewLabeler(opts...)
	return func(c *gin.Context) {
		r := c.Request
		var labelled *http.Request
		done := false
		defer func() {
			removeForms(r, done, labelled, c.Request)
			c.Request = r
		}()
		if ctx, ok := l.Labels(r.Context(), r.Header["Baggage"]); ok {
			k6labels.Do(ctx, func(ctx context.Context) {
				labelled = r.WithContext(ctx)
				c.Request = labelled
				c.Next()
			})
		} else {
			c.Next()
		}
		done = true
	}
}

// removeForms removes the multipart files of the copies of r (nil for none),
// and after a panic (done false) those of r too. A form the copies share with
// r is r's, which net/http removes once the chain returns.
func removeForms(r *http.Request, done bool, copies ...*http.Request) {
	for _, c := range copies {
		if c != nil && c.MultipartForm != nil && c.MultipartForm != r.MultipartForm {
			_ = c.MultipartForm.RemoveAll()
		}
	}
	if r.MultipartForm != nil && !done {
		_ = r.MultipartForm.RemoveAll()
	}
}

// newEngine builds the application. ContextWithFallback makes the gin.Context
// itself answer with the request context's values, pprof labels included, so
// that handlers may pass c wherever a context.Context is wanted.
func newEngine() *gin.Engine {
	r := gin.New()
	r.ContextWithFallback = true
	r.Use(gin.Recovery(), k6Labels())
	r.GET("/bike/:id", bike)
	return r
}

func bike(c *gin.Context) {
	c.JSON(http.StatusOK, show.Labels(c)) // c: the labels through Gin's context
}
