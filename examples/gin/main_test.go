package main

import (
	"context"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"runtime/pprof"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/k6labels/k6labels"
	"github.com/k6labels/k6labels/examples/internal/servetest"
	"github.com/k6labels/k6labels/examples/internal/show"
	"github.com/k6labels/k6labels/internal/profiletest"
)

func init() { gin.SetMode(gin.TestMode) }

func TestLabels(t *testing.T) {
	base := servetest.Start(t, newEngine())
	servetest.CheckLabels(t, base+"/bike/42")
}

func TestProfile(t *testing.T) {
	r := newEngine()
	r.GET("/spin", gin.WrapF(servetest.Spin))
	servetest.CheckProfile(t, servetest.Start(t, r)+"/spin")
}

// Gin's own context keeps working inside the middleware: values set with
// c.Set before it are still there, the request context carries the labels,
// and a later middleware's changes to c are seen by the handler.
func TestGinContext(t *testing.T) {
	r := gin.New()
	r.ContextWithFallback = true
	r.Use(func(c *gin.Context) { c.Set("user", "alice"); c.Next() }, k6Labels())
	r.Use(func(c *gin.Context) { c.Set("after", "yes"); c.Next() })
	var user, after any
	var fromGin, fromRequest map[string]string
	r.GET("/bike/:id", func(c *gin.Context) {
		user, _ = c.Get("user")
		after, _ = c.Get("after")
		fromGin, fromRequest = show.Labels(c), show.Labels(c.Request.Context())
		if v, _ := pprof.Label(c, "k6_scenario"); v != "rides" {
			t.Errorf("pprof.Label(c, k6_scenario) = %q, want rides", v)
		}
		c.Status(http.StatusNoContent)
	})
	req := httptest.NewRequest(http.MethodGet, "/bike/42", nil)
	req.Header.Set("Baggage", servetest.Baggage)
	w := httptest.NewRecorder()
	r.ServeHTTP(w, req)
	if w.Code != http.StatusNoContent {
		t.Fatalf("status %d", w.Code)
	}
	if user != "alice" || after != "yes" {
		t.Errorf("gin values: user=%v after=%v", user, after)
	}
	if !maps.Equal(fromGin, servetest.Want()) || !maps.Equal(fromRequest, servetest.Want()) {
		t.Errorf("labels via gin.Context %v, via request %v; want %v", fromGin, fromRequest, servetest.Want())
	}
}

// When a handler panics, the goroutine gets its labels back before the panic
// reaches the middleware outside (here gin.Recovery and one that works after
// the chain): CPU time spent there is not charged to the k6 request.
func TestGinPanic(t *testing.T) {
	r := gin.New()
	done := make(chan struct{})
	r.Use(func(c *gin.Context) {
		c.Next()
		afterWork()
		close(done)
	}, gin.RecoveryWithWriter(io.Discard), k6Labels())
	r.GET("/panic", func(*gin.Context) { panic("boom") })
	base := servetest.Start(t, r)
	req, err := http.NewRequest(http.MethodGet, base+"/panic", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Baggage", servetest.Baggage)
	p := profiletest.Record(t, func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusInternalServerError {
			t.Errorf("status %s, want 500 from gin.Recovery", resp.Status)
		}
		<-done // the response is sent before afterWork runs
	})
	samples := profiletest.Samples(p, "gin.afterWork")
	if len(samples) == 0 {
		t.Fatal("no CPU samples after the chain")
	}
	for _, s := range samples {
		if l := profiletest.Labels(s); len(l) != 0 {
			t.Errorf("sample after the panic has labels %v, want none", l)
		}
	}
}

//go:noinline
func afterWork() { servetest.Work() }

// funcContext is a context type that cannot be compared with ==, as some
// tracing libraries' are: the adapter must not compare contexts.
type funcContext struct {
	context.Context
	hook func()
}

func TestGinNonComparableContext(t *testing.T) {
	r := gin.New()
	r.Use(func(c *gin.Context) {
		c.Request = c.Request.WithContext(funcContext{c.Request.Context(), func() {}})
		c.Next()
	}, k6Labels(k6labels.WithMaxValueBytes(64))) // options pass through to the Labeler
	var got map[string]string
	r.GET("/bike/:id", func(c *gin.Context) {
		got = show.Labels(c.Request.Context())
		c.Status(http.StatusNoContent)
	})
	for _, baggage := range []string{"", "userId=alice", servetest.Baggage} {
		req := httptest.NewRequest(http.MethodGet, "/bike/42", nil)
		if baggage != "" {
			req.Header.Set("Baggage", baggage)
		}
		got = nil
		r.ServeHTTP(httptest.NewRecorder(), req) // panicked when the adapter compared contexts
		want := map[string]string{}
		if baggage == servetest.Baggage {
			want = servetest.Want()
		}
		if !maps.Equal(got, want) {
			t.Errorf("baggage %q: labels %v, want %v", baggage, got, want)
		}
	}
}

// Uploads of several MB parsed with a small maxMemory under the middleware
// leave no temp file, with and without k6 baggage, when the handler panics,
// with gin.Recovery outside the middleware or no recovery at all, and when a
// later middleware copies the request again.
func TestMultipartFilesRemoved(t *testing.T) {
	for _, c := range []struct {
		name             string
		recovery, recopy bool
	}{
		{name: "no recovery"},
		{name: "gin.Recovery", recovery: true},
		{name: "request copied again", recopy: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			servetest.CheckUploadsLeaveNoFiles(t, func(route http.Handler) http.Handler {
				r := gin.New()
				if c.recovery {
					r.Use(gin.RecoveryWithWriter(io.Discard))
				}
				r.Use(k6Labels())
				if c.recopy {
					r.Use(func(c *gin.Context) {
						c.Request = c.Request.WithContext(c.Request.Context())
						c.Next()
					})
				}
				r.POST("/upload", gin.WrapH(route))
				return r
			})
		})
	}
}
