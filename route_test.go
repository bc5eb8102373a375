package k6labels

import (
	"context"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"runtime/pprof"
	"strings"
	"testing"
	"unicode/utf8"
)

// routeHeader is the k6 header for a request whose name is a raw URL with an id.
const routeHeader = "k6.test_run_id=route-1, k6.scenario=routes, k6.name=http://localhost:5000/bike/42?x=y"

// routeLabels returns the pprof labels of ctx.
func routeLabels(ctx context.Context) map[string]string {
	m := map[string]string{}
	pprof.ForLabels(ctx, func(k, v string) bool {
		m[k] = v
		return true
	})
	return m
}

// serve sends one request for path with the given baggage lines through h
// and returns the labels the innermost handler saw on its context.
func serveRoute(t *testing.T, h func(inner http.Handler) http.Handler, method, path string, baggage ...string) map[string]string {
	t.Helper()
	var got map[string]string
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = routeLabels(r.Context())
	})
	r := httptest.NewRequest(method, path, nil)
	if len(baggage) > 0 {
		r.Header["Baggage"] = baggage
	}
	h(inner).ServeHTTP(httptest.NewRecorder(), r)
	if got == nil {
		t.Fatalf("%s %s: inner handler not called", method, path)
	}
	return got
}

func TestWithRoutePattern(t *testing.T) {
	tests := []struct {
		name, method, path string
		baggage            []string
		opts               []Option
		wrapMux            bool // wrap the mux, not the registered handler
		want               map[string]string
	}{{
		name: "pattern replaces the URL", method: "GET", path: "/bike/42?x=y",
		baggage: []string{routeHeader}, opts: []Option{WithRoutePattern()},
		want: map[string]string{"k6_test_run_id": "route-1", "k6_scenario": "routes", "k6_name": "GET /bike/{id}"},
	}, {
		name: "off by default", method: "GET", path: "/bike/42",
		baggage: []string{routeHeader},
		want:    map[string]string{"k6_test_run_id": "route-1", "k6_scenario": "routes", "k6_name": "http://localhost:5000/bike/42"},
	}, {
		name: "pattern without method", method: "POST", path: "/static/css/site.css",
		baggage: []string{"k6.scenario=s, k6.name=css"}, opts: []Option{WithRoutePattern()},
		want: map[string]string{"k6_scenario": "s", "k6_name": "/static/"},
	}, {
		name: "no k6.name member: none added", method: "GET", path: "/bike/42",
		baggage: []string{"k6.scenario=s"}, opts: []Option{WithRoutePattern()},
		want: map[string]string{"k6_scenario": "s"},
	}, {
		name: "empty k6.name stays unlabelled", method: "GET", path: "/bike/42",
		baggage: []string{"k6.scenario=s, k6.name="}, opts: []Option{WithRoutePattern()},
		want: map[string]string{"k6_scenario": "s"},
	}, {
		name: "no baggage: no labels", method: "GET", path: "/bike/42",
		opts: []Option{WithRoutePattern()},
		want: map[string]string{},
	}, {
		name: "around the mux: no pattern yet, k6 name kept", method: "GET", path: "/bike/42",
		baggage: []string{routeHeader}, opts: []Option{WithRoutePattern()}, wrapMux: true,
		want: map[string]string{"k6_test_run_id": "route-1", "k6_scenario": "routes", "k6_name": "http://localhost:5000/bike/42"},
	}, {
		name: "around the mux with WithServeMux", method: "GET", path: "/bike/42",
		baggage: []string{routeHeader}, wrapMux: true, // WithServeMux added below
		want: map[string]string{"k6_test_run_id": "route-1", "k6_scenario": "routes", "k6_name": "GET /bike/{id}"},
	}, {
		name: "WithServeMux, catch-all route", method: "DELETE", path: "/nowhere",
		baggage: []string{routeHeader}, wrapMux: true,
		want: map[string]string{"k6_test_run_id": "route-1", "k6_scenario": "routes", "k6_name": "/"},
	}, {
		name: "WithServeMux(nil) is WithRoutePattern", method: "GET", path: "/bike/42",
		baggage: []string{routeHeader}, opts: []Option{WithServeMux(nil)},
		want: map[string]string{"k6_test_run_id": "route-1", "k6_scenario": "routes", "k6_name": "GET /bike/{id}"},
	}, {
		// The value cap applies to the pattern too; below 16 bytes it is
		// raised to 16, which this pattern fits.
		name: "value cap applies to the pattern", method: "GET", path: "/bike/42",
		baggage: []string{routeHeader}, opts: []Option{WithRoutePattern(), WithMaxValueBytes(5)},
		want: map[string]string{"k6_test_run_id": "route-1", "k6_scenario": "routes", "k6_name": "GET /bike/{id}"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			reg := NewRegistry(0)
			var probe http.Handler
			mux := http.NewServeMux()
			// The probe is looked up at serve time so that it can be the
			// test's inner handler.
			route := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { probe.ServeHTTP(w, r) })
			opts := tt.opts
			if tt.wrapMux && opts == nil {
				opts = []Option{WithServeMux(mux)}
			}
			var wrap func(http.Handler) http.Handler
			if tt.wrapMux {
				mux.Handle("GET /bike/{id}", route)
				mux.Handle("/static/", route)
				mux.Handle("/", route)
				wrap = func(inner http.Handler) http.Handler {
					probe = inner
					return NewHandler(mux, append([]Option{WithRegistry(reg)}, opts...)...)
				}
			} else {
				wrap = func(inner http.Handler) http.Handler {
					probe = inner
					m := Middleware(append([]Option{WithRegistry(reg)}, opts...)...)
					mux.Handle("GET /bike/{id}", m(route))
					mux.Handle("/static/", m(route))
					mux.Handle("/", m(route))
					return mux
				}
			}
			got := serveRoute(t, wrap, tt.method, tt.path, tt.baggage...)
			if !maps.Equal(got, tt.want) {
				t.Errorf("labels = %v, want %v", got, tt.want)
			}
		})
	}
}

// The pattern also feeds Members and Baggage: one label core for all views.
func TestWithRoutePatternMembers(t *testing.T) {
	t.Parallel()
	reg := NewRegistry(0)
	mux := http.NewServeMux()
	var members []Member
	var baggage string
	mux.Handle("GET /bike/{id}", NewHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		members, baggage = Members(r.Context()), Baggage(r.Context())
	}), WithRegistry(reg), WithRoutePattern()))
	r := httptest.NewRequest("GET", "/bike/7", nil)
	r.Header.Set("Baggage", "k6.scenario=m, k6.name=http://x/bike/7")
	mux.ServeHTTP(httptest.NewRecorder(), r)
	want := []Member{{"k6.name", "GET /bike/{id}"}, {"k6.scenario", "m"}}
	if len(members) != len(want) || members[0] != want[0] || members[1] != want[1] {
		t.Errorf("Members = %v, want %v", members, want)
	}
	if wantB := "k6.name=GET%20/bike/{id},k6.scenario=m"; baggage != wantB {
		t.Errorf("Baggage = %q, want %q", baggage, wantB)
	}
	if got := ParseBaggage(baggage); len(got) != 2 || got[0] != want[0] {
		t.Errorf("ParseBaggage(Baggage) = %v, want %v", got, want)
	}
}

// A Labeler used directly sees no request, so the option would change
// nothing: NewLabeler refuses it (see TestHTTPOnlyOptionsRejected).
func TestWithRoutePatternLabeler(t *testing.T) {
	t.Parallel()
	defer func() {
		if recover() == nil {
			t.Error("NewLabeler(WithRoutePattern()) did not panic")
		}
	}()
	NewLabeler(WithRegistry(NewRegistry(0)), WithRoutePattern())
}

// A pattern is program text, so it is not percent-decoded, but it must still
// make a valid label value: bad UTF-8 and control characters become U+FFFD,
// and the cap cuts on a character boundary.
func TestCleanValue(t *testing.T) {
	tests := []struct {
		in   string
		max  int
		want string
	}{
		{"GET /bike/{id}", 256, "GET /bike/{id}"},
		{"/a%2Fb", 256, "/a%2Fb"},
		{"/caf\u00e9/{x}", 256, "/caf\u00e9/{x}"},
		{"/caf\u00e9", 5, "/caf"}, // é is 2 bytes: not cut in half
		{"/\xff\x00/x", 256, "/\uFFFD\uFFFD/x"},
		{"/\u0085", 256, "/\uFFFD"},
		{"", 256, ""},
		{strings.Repeat("x", 300), 256, strings.Repeat("x", 256)},
	}
	for _, tt := range tests {
		got := cleanValue(tt.in, tt.max)
		if got != tt.want {
			t.Errorf("cleanValue(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
		}
		if !utf8.ValidString(got) || len(got) > tt.max {
			t.Errorf("cleanValue(%q, %d) = %q: invalid label value", tt.in, tt.max, got)
		}
	}
}

// A pattern with bytes that are not UTF-8 still gives valid labels end to end.
func TestWithRoutePatternInvalidPattern(t *testing.T) {
	t.Parallel()
	reg := NewRegistry(0)
	mux := http.NewServeMux()
	var got map[string]string
	mux.Handle("/\xff/", NewHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = routeLabels(r.Context())
	}), WithRegistry(reg), WithRoutePattern()))
	r := httptest.NewRequest("GET", "/%FF/a", nil)
	r.Header.Set("Baggage", "k6.name=n")
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, r)
	if got == nil {
		body, _ := io.ReadAll(w.Result().Body)
		t.Fatalf("handler not reached: %d %s", w.Code, body)
	}
	if got["k6_name"] != "/\uFFFD/" {
		t.Errorf("k6_name = %q, want %q", got["k6_name"], "/\uFFFD/")
	}
}

// One Middleware (one Labeler) on several routes: the same header line must
// give each route its own pattern, so results cannot be cached by line alone.
func TestWithRoutePatternSharedLabeler(t *testing.T) {
	t.Parallel()
	reg := NewRegistry(0)
	use := Middleware(WithRegistry(reg), WithRoutePattern())
	var got string
	probe := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = pprof.Label(r.Context(), "k6_name")
	})
	mux := http.NewServeMux()
	mux.Handle("GET /bike/{id}", use(probe))
	mux.Handle("GET /car/{id}", use(probe))
	for range 2 {
		for _, tt := range []struct{ path, want string }{{"/bike/1", "GET /bike/{id}"}, {"/car/1", "GET /car/{id}"}} {
			r := httptest.NewRequest("GET", tt.path, nil)
			r.Header.Set("Baggage", "k6.scenario=s, k6.name=api")
			got = ""
			mux.ServeHTTP(httptest.NewRecorder(), r)
			if got != tt.want {
				t.Errorf("GET %s: k6_name = %q, want %q", tt.path, got, tt.want)
			}
		}
	}
}

// BenchmarkRoutePattern compares the places the route pattern option can go
// with the plain handler around the mux, for a k6 request.
func BenchmarkRoutePattern(b *testing.B) {
	app := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	routes := []string{"GET /bike/{id}", "GET /car/{id}", "POST /ride", "GET /driver/{id}/rating", "/"}
	build := map[string]func() http.Handler{
		"AroundMux": func() http.Handler {
			mux := http.NewServeMux()
			for _, p := range routes {
				mux.Handle(p, app)
			}
			return NewHandler(mux)
		},
		"PerHandler": func() http.Handler {
			mux := http.NewServeMux()
			use := Middleware(WithRoutePattern())
			for _, p := range routes {
				mux.Handle(p, use(app))
			}
			return mux
		},
		"WithServeMux": func() http.Handler {
			mux := http.NewServeMux()
			for _, p := range routes {
				mux.Handle(p, app)
			}
			return NewHandler(mux, WithServeMux(mux))
		},
	}
	for _, name := range []string{"AroundMux", "PerHandler", "WithServeMux"} {
		b.Run(name, func(b *testing.B) {
			h := build[name]()
			r := httptest.NewRequest(http.MethodGet, "/driver/42/rating", nil)
			r.Header.Set("Baggage", "k6.test_run_id=1, k6.scenario=s, k6.name=http://localhost/driver/42/rating")
			w := httptest.NewRecorder()
			b.ReportAllocs()
			for b.Loop() {
				h.ServeHTTP(w, r)
			}
		})
	}
}

// Middleware around the handler reads the route that a ServeMux inside it
// matched, after it returns, as it does for requests without k6 baggage.
func TestOuterMiddlewareSeesRoute(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /bike/{id}/{rest...}", func(http.ResponseWriter, *http.Request) {})
	mux.HandleFunc("GET /car/{$}", func(http.ResponseWriter, *http.Request) {})
	for _, opts := range [][]Option{nil, {WithServeMux(mux)}} {
		h := NewHandler(mux, append(opts, WithRegistry(NewRegistry(0)))...)
		for _, baggage := range []string{"", "k6.scenario=s,k6.name=n"} {
			for _, tc := range []struct{ path, pattern, id, rest string }{
				{"/bike/3/a/b", "GET /bike/{id}/{rest...}", "3", "a/b"},
				{"/car/", "GET /car/{$}", "", ""},
			} {
				r := httptest.NewRequest("GET", tc.path, nil)
				r.Header.Set("Baggage", baggage)
				h.ServeHTTP(httptest.NewRecorder(), r)
				if r.Pattern != tc.pattern || r.PathValue("id") != tc.id || r.PathValue("rest") != tc.rest {
					t.Errorf("options %d, baggage %q, %s: the middleware around saw pattern %q, id %q, rest %q; want %q, %q, %q",
						len(opts), baggage, tc.path, r.Pattern, r.PathValue("id"), r.PathValue("rest"), tc.pattern, tc.id, tc.rest)
				}
			}
		}
	}
}

// Middleware around an outer ServeMux, which hands the request to the
// handler around an inner one, sees the same route and path values with k6
// baggage as without: the outer mux's wildcards read "" afterwards.
func TestNestedMuxesRoute(t *testing.T) {
	t.Parallel()
	inner := http.NewServeMux()
	inner.HandleFunc("GET /shop/{shop}/item/{id}", func(http.ResponseWriter, *http.Request) {})
	outer := http.NewServeMux()
	outer.Handle("/{tenant}/", NewHandler(inner, WithRegistry(NewRegistry(0))))
	type seen struct{ pattern, tenant, shop, id string }
	var got [2]seen
	for i, baggage := range []string{"", "k6.scenario=s,k6.name=n"} {
		r := httptest.NewRequest("GET", "/shop/7/item/9", nil)
		if baggage != "" {
			r.Header.Set("Baggage", baggage)
		}
		outer.ServeHTTP(httptest.NewRecorder(), r)
		got[i] = seen{r.Pattern, r.PathValue("tenant"), r.PathValue("shop"), r.PathValue("id")}
	}
	if got[0] != got[1] {
		t.Errorf("middleware around saw %+v without baggage, %+v with", got[0], got[1])
	}
}
