package k6labels

import (
	"context"
	"maps"
	"net/http"
	"net/http/httptest"
	"runtime/pprof"
	"strings"
	"testing"
)

// serve runs r through h and returns the labels its handler saw.
func serveThrough(h func(http.Handler) http.Handler, r *http.Request) map[string]string {
	var got map[string]string
	h(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { got = labelsOf(r.Context()) })).ServeHTTP(httptest.NewRecorder(), r)
	return got
}

func TestWithNameFormatter(t *testing.T) {
	t.Parallel()
	reg := NewRegistry(0)
	var calls []string
	hook := func(r *http.Request, name string) string {
		calls = append(calls, name)
		return r.Header.Get("Route")
	}
	mw := Middleware(WithRegistry(reg), WithNameFormatter(hook))
	req := func(baggage, route string) *http.Request {
		r := httptest.NewRequest("GET", "/bike/7", nil)
		r.Header.Set("Baggage", baggage)
		r.Header.Set("Route", route)
		return r
	}
	if got := serveThrough(mw, req("k6.scenario=s,k6.name=http://h/bike/7?x=1", "/bike/{id}")); !maps.Equal(got, map[string]string{"k6_scenario": "s", "k6_name": "/bike/{id}"}) {
		t.Errorf("labels = %v", got)
	}
	if got := serveThrough(mw, req("k6.scenario=s,k6.name=n", "")); !maps.Equal(got, map[string]string{"k6_scenario": "s"}) {
		t.Errorf("a hook returning \"\" left labels %v", got)
	}
	if got := serveThrough(mw, req("k6.scenario=s", "/never")); !maps.Equal(got, map[string]string{"k6_scenario": "s"}) {
		t.Errorf("a request without k6.name got labels %v", got)
	}
	if want := []string{"http://h/bike/7", "n"}; len(calls) != 2 || calls[0] != want[0] || calls[1] != want[1] {
		t.Errorf("hook called with %q, want %q (cleaned, only with a k6.name)", calls, want)
	}
	// Members and Baggage tell the name the hook gave.
	var bag string
	Middleware(WithRegistry(reg), WithNameFormatter(hook))(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { bag = Baggage(r.Context()) })).
		ServeHTTP(httptest.NewRecorder(), req("k6.name=x", "/route"))
	if bag != "k6.name=/route" {
		t.Errorf("Baggage = %q", bag)
	}
}

// A named request served from the caches costs what an unnamed one does:
// two allocations (the request copy and its context).
func TestNamedRequestAllocations(t *testing.T) {
	reg := NewRegistry(0)
	mux := http.NewServeMux()
	mux.Handle("GET /bike/{id}", NewHandler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}), WithRegistry(reg), WithRoutePattern()))
	w := httptest.NewRecorder()
	var rs []*http.Request
	for _, id := range []string{"1", "2", "3"} {
		r := httptest.NewRequest("GET", "/bike/"+id, nil)
		r.Header.Set("Baggage", "k6.test_run_id=1,k6.scenario=s,k6.name=http://h/bike/"+id+"?q="+id)
		rs = append(rs, r)
		mux.ServeHTTP(w, r)
	}
	bare := http.NewServeMux() // the mux's own allocations (the {id} match)
	bare.HandleFunc("GET /bike/{id}", func(http.ResponseWriter, *http.Request) {})
	i := 0
	base := testing.AllocsPerRun(100, func() { i++; bare.ServeHTTP(w, rs[i%3]) })
	if n := testing.AllocsPerRun(100, func() { i++; mux.ServeHTTP(w, rs[i%3]) }); n-base > 2 {
		t.Errorf("a named request costs %v allocations more than the bare mux, want 2", n-base)
	}
}

func TestWithNameFunc(t *testing.T) {
	t.Parallel()
	reg := NewRegistry(0)
	type routeKey struct{}
	l := NewLabeler(WithRegistry(reg), WithNameFunc(func(ctx context.Context, name string) string {
		r, _ := ctx.Value(routeKey{}).(string)
		return r
	}))
	ctx := context.WithValue(context.Background(), routeKey{}, "/pkg.Svc/Get")
	got := labelsOf(l.Context(ctx, []string{"k6.scenario=s,k6.name=whatever"}))
	if !maps.Equal(got, map[string]string{"k6_scenario": "s", "k6_name": "/pkg.Svc/Get"}) {
		t.Errorf("labels = %v", got)
	}
}

// A CONNECT request that the mux redirects to add a trailing slash is named
// by the pattern it is redirected to, as every other method is.
func TestWithServeMuxConnectRedirect(t *testing.T) {
	t.Parallel()
	reg := NewRegistry(0)
	mux := http.NewServeMux()
	mux.HandleFunc("/tree/{rest...}", func(http.ResponseWriter, *http.Request) {})
	for _, method := range []string{"GET", "CONNECT"} {
		var got string
		h := NewHandler(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
			got, _ = pprof.Label(r.Context(), "k6_name")
		}), WithRegistry(reg), WithServeMux(mux))
		r := httptest.NewRequest(method, "/tree", nil)
		r.Header.Set("Baggage", "k6.name=http://h/tree?id=1")
		h.ServeHTTP(httptest.NewRecorder(), r)
		if got != "/tree/{rest...}" {
			t.Errorf("%s /tree: k6_name = %q, want the pattern /tree/{rest...}", method, got)
		}
	}
}

// A labelled request that passes three nested handlers is counted once, its
// skipped members, overflowed values and truncation too.
func TestStatsCountRequestsOnce(t *testing.T) {
	t.Parallel()
	reg := NewRegistry(0)
	var h http.Handler = http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	for range 3 {
		h = NewHandler(h, WithRegistry(reg), WithMaxValuesPerLabel(1))
	}
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("Baggage", "k6.scenario=s")
	h.ServeHTTP(httptest.NewRecorder(), r)
	// One malformed member, a scenario over the cap, cut at MaxBaggageBytes.
	r.Header.Set("Baggage", "k6.scenario=t,broken,k6.name=n,"+strings.Repeat("x", MaxBaggageBytes))
	h.ServeHTTP(httptest.NewRecorder(), r)
	want := Counters{Labelled: 2, Skipped: 1, Overflowed: 1, Truncated: 1}
	if got := reg.Stats(); got != want {
		t.Errorf("2 requests through 3 handlers: Stats() = %+v, want %+v", got, want)
	}
}

// Labels a naming hook's name leaves out, so that the set fits a baggage
// header, are counted as skipped, as they are when sent.
func TestStatsCountRenameDrops(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("é", 1024)
	line := "k6.scenario=" + strings.Repeat("s", 2048) + ",k6.name="
	for _, tc := range []struct {
		name string
		opts []Option
		line string
	}{
		{"sent", nil, line + big},
		{"named by the hook", []Option{WithNameFunc(func(context.Context, string) string { return big })}, line + "n"},
	} {
		reg := NewRegistry(0)
		l := NewLabeler(append(tc.opts, WithRegistry(reg), WithMaxValueBytes(2048))...)
		for range 2 { // the second from the caches
			if _, ok := labelsOf(l.Context(context.Background(), []string{tc.line}))["k6_scenario"]; ok {
				t.Fatalf("%s: k6_scenario kept; the test needs a set too big for a header", tc.name)
			}
		}
		if got := reg.Stats().Skipped; got != 2 {
			t.Errorf("%s: Skipped = %d after 2 requests that each left a label out, want 2", tc.name, got)
		}
	}
}

// A k6.name URL sent fully percent-encoded (encodeURIComponent) loses its
// query string too; an escaped '?' inside a URL sent as is stays.
func TestEncodedURLName(t *testing.T) {
	t.Parallel()
	reg := NewRegistry(0)
	for line, want := range map[string]string{
		"k6.name=http%3A%2F%2Fh%2Fbike%3Fid%3D3":    "http://h/bike",
		"k6.name=%2Fbike%3Fid%3D3%23top":            "/bike",
		"k6.name=http://h/a%3Fb?id=3":               "http://h/a?b",
		"k6.name=order%3Fbike":                      "order?bike",
		"k6.name=http%3A%2F%2Fh%2Fbike%3Fid%3D3%25": "http://h/bike",
	} {
		if got := contextLabels(NewLabeler(WithRegistry(reg)), line)["k6_name"]; got != want {
			t.Errorf("%s: k6_name = %q, want %q", line, got, want)
		}
	}
	if got := LabelValue("k6.name", "http%3A%2F%2Fh%2Fbike%3Fid%3D3"); got != "http://h/bike" {
		t.Errorf("LabelValue = %q", got)
	}
}

// LabelValue gives a name k6 sends unencoded the label the handler makes of
// the header k6 builds with it, ',' ';' and spaces included.
func TestLabelValueMatchesHeader(t *testing.T) {
	t.Parallel()
	l := NewLabeler(WithRegistry(NewRegistry(0)))
	for _, name := range []string{
		"cart, step 2",
		"http://127.0.0.1:18080/car;jsessionid=A1B2?vehicle_id=7",
		" order bike ",
		"a;b,c",
		"GET /bike?id=1",
	} {
		got := labelsOf(l.Context(context.Background(), []string{"k6.scenario=s,k6.name=" + name}))["k6_name"]
		if want := LabelValue("k6.name", name); got != want {
			t.Errorf("k6 name %q: the handler labels k6_name=%q, LabelValue gives %q", name, got, want)
		}
	}
}

// A request an outer handler labelled is counted once, also when an inner
// handler's naming hook leaves it no label.
func TestStatsCountOnceWhenInnerHookDropsAll(t *testing.T) {
	t.Parallel()
	reg := NewRegistry(0)
	inner := NewHandler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}),
		WithRegistry(reg), WithNameFormatter(func(*http.Request, string) string { return "" }))
	outer := NewHandler(inner, WithRegistry(reg))
	r := httptest.NewRequest("GET", "/", nil)
	// One malformed member, cut at MaxBaggageBytes.
	r.Header.Set("Baggage", "k6.name=n,broken,"+strings.Repeat("x", MaxBaggageBytes))
	outer.ServeHTTP(httptest.NewRecorder(), r)
	want := Counters{Labelled: 1, Skipped: 1, Truncated: 1}
	if got := reg.Stats(); got != want {
		t.Errorf("1 labelled request through 2 handlers: Stats() = %+v, want %+v", got, want)
	}
}
