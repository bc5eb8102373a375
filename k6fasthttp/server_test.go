package k6fasthttp_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"runtime"
	"runtime/pprof"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
	"go.uber.org/goleak"

	"github.com/k6labels/k6labels"
	"github.com/k6labels/k6labels/internal/profiletest"
	"github.com/k6labels/k6labels/k6fasthttp"
)

func TestMain(m *testing.M) {
	// fasthttp's server date updater runs once per process, for good.
	goleak.VerifyTestMain(m,
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.updateServerDate.func1"),
		// The worker pool's cleaner sleeps MaxIdleWorkerDuration before it
		// sees that the server stopped.
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*workerPool).Start.func2"))
}

// serve runs h on a real fasthttp server on 127.0.0.1 with a small pool of
// workers that are kept, so that connections and requests share goroutines.
// It returns the address.
func serve(t *testing.T, h fasthttp.RequestHandler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &fasthttp.Server{
		Handler:               h,
		Concurrency:           16, // 3 clients, plus connections closing
		MaxIdleWorkerDuration: time.Hour,
		ReadTimeout:           30 * time.Second,
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	t.Cleanup(func() {
		_ = srv.Shutdown()
		<-done
	})
	return ln.Addr().String()
}

// conn is one keep-alive client connection that writes raw HTTP/1.1.
type conn struct {
	t *testing.T
	c net.Conn
	r *bufio.Reader
}

func dial(t *testing.T, addr string) *conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	return &conn{t: t, c: c, r: bufio.NewReader(c)}
}

// get sends GET path with the given baggage lines and returns the body.
func (c *conn) get(path string, baggage ...string) string {
	header := make([]string, len(baggage))
	for i, l := range baggage {
		header[i] = "Baggage: " + l
	}
	return c.getWith(path, header...)
}

// getWith sends GET path with the given header lines and returns the body.
func (c *conn) getWith(path string, header ...string) string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "GET %s HTTP/1.1\r\nHost: test\r\n", path)
	for _, l := range header {
		b.WriteString(l + "\r\n")
	}
	b.WriteString("\r\n")
	if _, err := c.c.Write(b.Bytes()); err != nil {
		c.t.Error(err)
		return ""
	}
	resp, err := http.ReadResponse(c.r, nil)
	if err != nil {
		c.t.Error(err)
		return ""
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		c.t.Errorf("GET %s: %s %s", path, resp.Status, body)
	}
	return string(body)
}

func (c *conn) close() { _ = c.c.Close() }

// goid returns the current goroutine's id, to tell which worker served.
func goid() string {
	var buf [64]byte
	s := buf[:runtime.Stack(buf[:], false)]
	s = bytes.TrimPrefix(s, []byte("goroutine "))
	return string(s[:bytes.IndexByte(s, ' ')])
}

// labels formats the pprof labels of ctx as a sorted "k=v,k=v" string.
func labels(ctx context.Context) string {
	m := map[string]string{}
	pprof.ForLabels(ctx, func(k, v string) bool { m[k] = v; return true })
	return fmt.Sprint(m)
}

// Work functions, one per kind of request, so that the profile tells their
// samples apart by function name.
//
//go:noinline
func workPlain() { profiletest.Burn(12_000_000) }

//go:noinline
func workA() { profiletest.Burn(12_000_000) }

//go:noinline
func workB() { profiletest.Burn(12_000_000) }

const (
	baggageA = "k6.test_run_id=123456,k6.scenario=a,k6.name=http://shop/cart?id=1"
	baggageB = "tenant=acme,k6.test_run_id=123456,k6.scenario=b,k6.name=http://shop/pay"
)

var (
	wantA = map[string]string{"k6_test_run_id": "123456", "k6_scenario": "a", "k6_name": "http://shop/cart"}
	wantB = map[string]string{"k6_test_run_id": "123456", "k6_scenario": "b", "k6_name": "http://shop/pay"}
)

func work(ctx *fasthttp.RequestCtx) {
	switch string(ctx.Path()) {
	case "/a":
		workA()
	case "/b":
		workB()
	default:
		workPlain()
	}
	ctx.SetBodyString(labels(k6fasthttp.Context(ctx)))
}

// tally is what runAlternating found in the profile.
type tally struct {
	plain, plainLabelled int // samples of requests without k6 baggage
	k6, k6Right          int // samples of requests with k6 baggage
}

// runAlternating serves work wrapped by wrap and, under the CPU profiler,
// sends from 3 clients over 8 connections each 6 requests per connection,
// alternating with and without k6 baggage (and a non-k6 line).
func runAlternating(t *testing.T, wrap func(fasthttp.RequestHandler) fasthttp.RequestHandler) tally {
	addr := serve(t, wrap(work))
	p := profiletest.Record(t, func() {
		var wg sync.WaitGroup
		for client := range 3 {
			wg.Go(func() {
				for range 8 {
					c := dial(t, addr)
					for i := range 6 {
						switch (client + i) % 4 {
						case 0:
							c.get("/a", baggageA)
						case 1:
							c.get("/plain")
						case 2:
							c.get("/b", baggageB)
						case 3:
							c.get("/plain", "tenant=acme,userId=alice")
						}
					}
					c.close()
				}
			})
		}
		wg.Wait()
	})
	var n tally
	for _, s := range p.Sample {
		got := profiletest.Labels(s)
		count := int(s.Value[0]) // one entry per stack and label set
		switch {
		case profiletest.HasFunc(s, "k6fasthttp_test.workPlain"):
			n.plain += count
			if len(got) > 0 {
				n.plainLabelled += count
			}
		case profiletest.HasFunc(s, "k6fasthttp_test.workA"):
			n.k6 += count
			if maps.Equal(got, wantA) {
				n.k6Right += count
			}
		case profiletest.HasFunc(s, "k6fasthttp_test.workB"):
			n.k6 += count
			if maps.Equal(got, wantB) {
				n.k6Right += count
			}
		}
	}
	profiletest.CheckLabels(t, p, 2048)
	t.Logf("%+v", n)
	if n.plain == 0 || n.k6 == 0 {
		t.Fatalf("too few samples: %+v", n)
	}
	return n
}

func TestProfileReusedWorkers(t *testing.T) {
	n := runAlternating(t, func(h fasthttp.RequestHandler) fasthttp.RequestHandler {
		return k6fasthttp.NewHandler(h)
	})
	if n.plainLabelled > 0 {
		t.Errorf("%d of %d samples of requests without k6 baggage carry labels", n.plainLabelled, n.plain)
	}
	if n.k6Right*100 < n.k6*99 {
		t.Errorf("only %d of %d samples of k6 requests carry their labels", n.k6Right, n.k6)
	}
}

// leaky is a wrapper that sets the labels and never restores them: the
// control experiment that shows runAlternating can see a leak.
func leaky(h fasthttp.RequestHandler) fasthttp.RequestHandler {
	l := k6labels.NewLabeler()
	return func(ctx *fasthttp.RequestCtx) {
		if lctx, ok := k6fasthttp.Labels(l, ctx); ok {
			pprof.SetGoroutineLabels(lctx)
		}
		h(ctx)
	}
}

func TestProfileControlLeaks(t *testing.T) {
	if n := runAlternating(t, leaky); n.plainLabelled == 0 {
		t.Errorf("the control wrapper, which does not restore, leaked no labels: %+v", n)
	}
}

// fiberLike does what the Fiber v2 middleware in the docs does, with
// fasthttp types: c.Context() is ctx, c.SetUserContext is userCtx, c.Next()
// is next.
func fiberLike(h fasthttp.RequestHandler) fasthttp.RequestHandler {
	l := k6labels.NewLabeler()
	return func(ctx *fasthttp.RequestCtx) {
		next := func() error { h(ctx); return nil }
		lctx, ok := k6fasthttp.Labels(l, ctx)
		if !ok {
			_ = next()
			return
		}
		ctx.SetUserValue(userCtxKey{}, lctx) // c.SetUserContext(lctx)
		var err error
		k6labels.Do(lctx, func(context.Context) { err = next() })
		_ = err
	}
}

type userCtxKey struct{}

func TestProfileFiberLike(t *testing.T) {
	n := runAlternating(t, func(h fasthttp.RequestHandler) fasthttp.RequestHandler {
		return fiberLike(func(ctx *fasthttp.RequestCtx) {
			uc, _ := ctx.UserValue(userCtxKey{}).(context.Context)
			if uc != nil && k6labels.Baggage(uc) == "" {
				t.Error("user context without k6 members")
			}
			h(ctx)
		})
	})
	if n.plainLabelled > 0 || n.k6Right*100 < n.k6*99 {
		t.Errorf("labels wrong: %+v", n)
	}
}

func TestContextNotSeenByNextRequest(t *testing.T) {
	addr := serve(t, k6fasthttp.NewHandler(func(ctx *fasthttp.RequestCtx) {
		c := k6fasthttp.Context(ctx)
		ctx.SetBodyString(labels(c) + " " + k6labels.Baggage(c) + " " + goid())
	}))
	c := dial(t, addr)
	defer c.close()
	first := c.get("/", baggageA)
	want := fmt.Sprint(wantA) + " k6.name=http://shop/cart,k6.scenario=a,k6.test_run_id=123456 "
	if first[:len(first)-len(lastField(first))] != want {
		t.Errorf("first request: %q, want prefix %q", first, want)
	}
	for range 3 {
		next := c.get("/")
		if next != "map[]  "+lastField(first) {
			t.Errorf("next request on the same worker: %q, want no labels on goroutine %s", next, lastField(first))
		}
	}
}

func lastField(s string) string {
	i := bytes.LastIndexByte([]byte(s), ' ')
	return s[i+1:]
}

// TestPanicRestores panics in a labelled handler, recovers outside the
// wrapper (fasthttp itself does not recover), and checks from a CPU profile
// that the next request, on the same worker goroutine, carries no labels.
func TestPanicRestores(t *testing.T) {
	for _, tc := range []struct {
		name  string
		wrap  func(fasthttp.RequestHandler) fasthttp.RequestHandler
		leaks bool
	}{
		{"NewHandler", func(h fasthttp.RequestHandler) fasthttp.RequestHandler { return k6fasthttp.NewHandler(h) }, false},
		{"control", leaky, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inner := tc.wrap(func(ctx *fasthttp.RequestCtx) {
				if string(ctx.Path()) == "/panic" {
					panic("handler failed")
				}
				for range 8 { // ~100ms of CPU, ~10 samples
					workPlain()
				}
			})
			addr := serve(t, func(ctx *fasthttp.RequestCtx) {
				defer func() {
					if recover() != nil {
						ctx.Response.Reset()
					}
					ctx.SetBodyString(goid())
				}()
				inner(ctx)
			})
			c := dial(t, addr)
			defer c.close()
			var panicked, next string
			p := profiletest.Record(t, func() {
				panicked = c.get("/panic", baggageA)
				next = c.get("/plain")
			})
			if panicked == "" || panicked != next {
				t.Fatalf("requests ran on goroutines %q and %q, want the same worker", panicked, next)
			}
			samples := profiletest.Samples(p, "k6fasthttp_test.workPlain")
			if len(samples) == 0 {
				t.Fatal("no samples of the next request")
			}
			labelled := 0
			for _, s := range samples {
				if len(s.Label) > 0 {
					labelled += int(s.Value[0])
				}
			}
			if leaked := labelled > 0; leaked != tc.leaks {
				t.Errorf("%d of %d samples of the next request labelled, want leak %v", labelled, len(samples), tc.leaks)
			}
		})
	}
}

// TestMembersOutliveHeader checks that what the Labeler keeps does not point
// into fasthttp's header buffers, which are reused by the next request.
func TestMembersOutliveHeader(t *testing.T) {
	l := k6labels.NewLabeler()
	var ctx fasthttp.RequestCtx
	ctx.Request.Header.Add("Baggage", "k6.scenario=first,k6.name=one")
	lctx, ok := k6fasthttp.Labels(l, &ctx)
	if !ok {
		t.Fatal("not labelled")
	}
	want := fmt.Sprint(k6labels.Members(lctx))
	for _, b := range ctx.Request.Header.PeekAll("Baggage") {
		for i := range b {
			b[i] = 'x'
		}
	}
	for i := range 200 {
		ctx.Request.Reset()
		ctx.Request.Header.Add("Baggage", "k6.scenario=s"+strconv.Itoa(i)+",k6.name=n"+strconv.Itoa(i))
		if _, ok := k6fasthttp.Labels(l, &ctx); !ok {
			t.Fatal("not labelled")
		}
	}
	if got := fmt.Sprint(k6labels.Members(lctx)); got != want {
		t.Errorf("members changed with the header buffer: %s, want %s", got, want)
	}
}

// A server that keeps header names as sent (DisableHeaderNamesNormalizing,
// Fiber's DisableHeaderNormalizing) behind a proxy that lowercases them, as
// every HTTP/2 hop does, gets "baggage": its requests are labelled too.
// Other cases ("BAGGAGE") are not read on such a server.
func TestHeaderNamesNotNormalized(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &fasthttp.Server{
		DisableHeaderNamesNormalizing: true,
		Handler: k6fasthttp.NewHandler(func(ctx *fasthttp.RequestCtx) {
			ctx.SetBodyString(labels(k6fasthttp.Context(ctx)))
		}),
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Shutdown(); <-done })
	c := dial(t, ln.Addr().String())
	defer c.close()
	for _, name := range []string{"Baggage", "baggage"} {
		if got := c.getWith("/a", name+": "+baggageA); got != fmt.Sprint(wantA) {
			t.Errorf("header %q: labels %s, want %v", name, got, wantA)
		}
	}
	if got := c.getWith("/a", "baggage: a=1"); got != fmt.Sprint(map[string]string{}) {
		t.Errorf("without k6 members: labels %s, want none", got)
	}
}

// A connection hijacked with Hijack (a WebSocket session) runs with the
// request's labels; with ctx.Hijack it runs unlabelled, which shows that the
// profile tells the two apart.
func TestHijack(t *testing.T) {
	for _, tc := range []struct {
		name   string
		hijack func(*fasthttp.RequestCtx, fasthttp.HijackHandler)
		want   map[string]string
	}{
		{"k6fasthttp.Hijack", k6fasthttp.Hijack, wantA},
		{"ctx.Hijack", (*fasthttp.RequestCtx).Hijack, map[string]string{}},
	} {
		addr := serve(t, k6fasthttp.NewHandler(func(ctx *fasthttp.RequestCtx) {
			ctx.HijackSetNoResponse(true)
			tc.hijack(ctx, func(c net.Conn) {
				for range 4 {
					workA()
				}
				_, _ = c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"))
			})
		}))
		c := dial(t, addr)
		p := profiletest.Record(t, func() { c.get("/a", baggageA) })
		c.close()
		samples := profiletest.Samples(p, "k6fasthttp_test.workA")
		if len(samples) == 0 {
			t.Fatalf("%s: no samples of the hijacked connection", tc.name)
		}
		for _, s := range samples {
			if got := profiletest.Labels(s); !maps.Equal(got, tc.want) {
				t.Errorf("%s: a sample of the hijacked connection has labels %v, want %v", tc.name, got, tc.want)
				break
			}
		}
	}
}
