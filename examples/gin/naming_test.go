package main

import (
	"context"
	"maps"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/k6labels/k6labels"
	"github.com/k6labels/k6labels/examples/internal/servetest"
)

// routeLabels is the Gin adapter k6Labels (main.go) with k6_name the route's
// full path c.FullPath() ("/bike/:id"), not the URL k6 sent. Gin runs
// middleware after routing, so the path is known; the adapter's naming hook
// sees only the request context, so routeLabels keeps one adapter per route,
// made on the route's first request, whose hook returns that route. A
// request that matches no route gets the adapter without a hook.
func routeLabels(opts ...k6labels.Option) gin.HandlerFunc {
	plain := k6Labels(opts...)
	var mu sync.Mutex                                      // held while adding a route
	var byRoute atomic.Pointer[map[string]gin.HandlerFunc] // replaced whole, read without a lock
	byRoute.Store(&map[string]gin.HandlerFunc{})
	return func(c *gin.Context) {
		route := c.FullPath()
		if route == "" {
			plain(c)
			return
		}
		h, ok := (*byRoute.Load())[route]
		if !ok {
			mu.Lock()
			m := *byRoute.Load()
			if h, ok = m[route]; !ok {
				h = k6Labels(append(opts[:len(opts):len(opts)],
					k6labels.WithNameFunc(func(context.Context, string) string { return route }))...)
				next := maps.Clone(m)
				next[route] = h
				byRoute.Store(&next)
			}
			mu.Unlock()
		}
		h(c)
	}
}

// newNamedEngine is the application, h serving each route, with every k6
// request named by its route's full path.
func newNamedEngine(h gin.HandlerFunc) *gin.Engine {
	r := gin.New()
	r.ContextWithFallback = true
	r.Use(gin.Recovery(), routeLabels())
	r.GET("/bike/:id", h)
	r.Group("/api").GET("/car/:id", h)
	return r
}

// k6 requests are named by the route's full path, a group's prefix
// included, whatever ids the URL carries.
func TestNamedByFullPath(t *testing.T) {
	base := servetest.Start(t, newNamedEngine(bike))
	servetest.CheckNamed(t, base, "/bike/%d", "/bike/:id")
	servetest.CheckNamed(t, base, "/api/car/%d", "/api/car/:id")
}

// The labels of the named request are on the handler's goroutine: every CPU
// sample of its work carries the route.
func TestNamedProfile(t *testing.T) {
	base := servetest.Start(t, newNamedEngine(gin.WrapF(servetest.Spin)))
	servetest.CheckNamedProfile(t, base+"/api/car/7?x=1", "/api/car/:id")
}

// A request that matches no route (here one that NoRoute serves) keeps the
// name k6 sent.
func TestNamedNoRoute(t *testing.T) {
	r := newNamedEngine(bike)
	r.NoRoute(bike)
	base := servetest.Start(t, r)
	url := base + "/nowhere/7?x=1"
	if got := servetest.Get(t, url, servetest.NamedBaggage(url))["k6_name"]; got != base+"/nowhere/7" {
		t.Errorf("k6_name %q, want the URL k6 sent, without its query", got)
	}
}

// BenchmarkNaming compares a k6 request named by its route's full path with
// an unnamed one (k6_name the URL k6 sent), through the whole engine, for
// the URLs with ids that k6 sends by default. The ratio is read with
// benchstat; see docs/frameworks.md.
func BenchmarkNaming(b *testing.B) {
	nop := func(*gin.Context) {}
	unnamed := gin.New()
	unnamed.Use(k6Labels())
	unnamed.GET("/bike/:id", nop)
	named := gin.New()
	named.Use(routeLabels())
	named.GET("/bike/:id", nop)
	servetest.BenchNaming(b, "http://127.0.0.1:8084",
		servetest.Variant{Name: "unnamed", Handler: unnamed},
		servetest.Variant{Name: "named", Handler: named})
}
