package bench

import (
	"net/http"
	"net/http/httptest"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/k6labels/k6labels"
)

// jslib is the header k6's http-instrumentation-pyroscope 1.0.2 sends for an
// untagged request: members joined by "," and the full URL as k6.name.
func jslib(url string) string {
	return "k6.test_run_id=123456,k6.scenario=default,k6.name=" + url
}

// traffic is one row of the tables: the Baggage lines of each request, used
// in turn (one set of lines for a repeated header).
type traffic struct {
	name  string
	lines [][]string
}

// varyingIDs is how many distinct ?id= URLs the varying-URL row cycles
// through: far more than any cache of lines could hold, so every header
// k6labels sees is, for its line cache, one it may never have seen.
const varyingIDs = 1 << 14

func repeated(lines ...string) [][]string { return [][]string{lines} }

func each(n int, line func(i int) string) [][]string {
	out := make([][]string, n)
	for i := range out {
		out[i] = []string{line(i)}
	}
	return out
}

// The rows the issue sets targets for.
var (
	jslibTraffic = traffic{"jslib", repeated(jslib("http://localhost:5000/bike?id=3"))}
	newIDTraffic = traffic{"jslib-new-id", each(varyingIDs, func(i int) string {
		return jslib("http://localhost:5000/bike?id=" + strconv.Itoa(i))
	})}
	names1000Traffic = traffic{"names1000", each(1000, func(i int) string {
		return jslib("http://localhost:5000/bike/" + strconv.Itoa(i))
	})}
	k6Traffics = []traffic{jslibTraffic, newIDTraffic, names1000Traffic}
)

// traffics are the rows of the handler table.
var traffics = []traffic{
	{"none", [][]string{nil}},
	{"non-k6", repeated("userId=alice,serverNode=DF%2028,isProduction=false")},
	jslibTraffic, newIDTraffic, names1000Traffic,
	{"members64", repeated(members64())},
}

func members64() string {
	m := make([]string, 64)
	for i := range m {
		m[i] = "k6.m" + strconv.Itoa(i) + "=value" + strconv.Itoa(i)
	}
	return strings.Join(m, ",")
}

// impls wrap a handler. Each k6labels handler gets a Registry of its own, so
// that no row's label values count against another row's cardinality cap
// (1000 names is the default cap: names1000 fits exactly).
var impls = []struct {
	name string
	wrap func(http.Handler) http.Handler
}{
	{"bare", func(h http.Handler) http.Handler { return h }},
	{"baseline", BaselineHandler},
	{"k6labels", func(h http.Handler) http.Handler {
		return k6labels.NewHandler(h, k6labels.WithRegistry(k6labels.NewRegistry(0)))
	}},
}

var null = http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})

// requests returns one request to target per set of lines.
func requests(target string, lines [][]string) []*http.Request {
	rs := make([]*http.Request, len(lines))
	for i, l := range lines {
		rs[i] = httptest.NewRequest("GET", target, nil)
		if l != nil {
			rs[i].Header["Baggage"] = l
		}
	}
	return rs
}

// cycle calls f(0), ..., f(n-1) in turn until the benchmark is done. The
// first round, untimed, warms the caches, as a server's first second of
// traffic does.
func cycle(b *testing.B, n int, f func(i int)) {
	for i := range n {
		f(i)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		f(i)
		if i++; i == n {
			i = 0
		}
	}
}

// serve runs the requests through h in turn until the benchmark is done.
func serve(b *testing.B, h http.Handler, rs []*http.Request) {
	w := httptest.NewRecorder()
	cycle(b, len(rs), func(i int) { h.ServeHTTP(w, rs[i]) })
}

func BenchmarkHandler(b *testing.B) {
	for _, tr := range traffics {
		rs := requests("/bike?id=3", tr.lines)
		for _, impl := range impls {
			b.Run("header="+tr.name+"/impl="+impl.name, func(b *testing.B) {
				serve(b, impl.wrap(null), rs)
			})
		}
	}
}

// BenchmarkMux is the naming table: a ServeMux with a route per vehicle
// kind, the k6labels handler around it (or around the route's handler) with
// and without a name from the route. "repeated" sends one jslib header;
// "ids1000" sends k6's default name for 1000 ids in the path, which the
// route pattern turns into one name.
// newMux returns a ServeMux with a route per vehicle kind, each route's
// handler null wrapped by wrapRoute.
func newMux(wrapRoute func(http.Handler) http.Handler) *http.ServeMux {
	mux := http.NewServeMux()
	for _, p := range []string{"GET /bike/{id}", "GET /scooter/{id}", "GET /car/{id}", "GET /{$}"} {
		mux.Handle(p, wrapRoute(null))
	}
	return mux
}

func same(h http.Handler) http.Handler { return h }

type muxTraffic struct {
	name string
	rs   []*http.Request
}

// muxTraffics are the naming table's traffic: "repeated" sends one jslib
// header; "ids1000" sends k6's default name for 1000 ids in the path, which
// a route name turns into one name.
func muxTraffics() []muxTraffic {
	ids := make([]*http.Request, 1000)
	for i := range ids {
		p := "/bike/" + strconv.Itoa(i)
		ids[i] = requests(p, repeated(jslib("http://localhost:5000"+p)))[0]
	}
	return []muxTraffic{
		{"repeated", requests("/bike/3", repeated(jslib("http://localhost:5000/bike/3")))},
		{"ids1000", ids},
	}
}

// BenchmarkMux is the naming table: the k6labels handler around the mux (or
// around each route's handler) with and without a name from the route.
func BenchmarkMux(b *testing.B) {
	reg := func() k6labels.Option { return k6labels.WithRegistry(k6labels.NewRegistry(0)) }
	setups := []struct {
		name string
		h    func() http.Handler
	}{
		{"bare", func() http.Handler { return newMux(same) }},
		{"baseline", func() http.Handler { return BaselineHandler(newMux(same)) }},
		{"k6labels", func() http.Handler { return k6labels.NewHandler(newMux(same), reg()) }},
		{"k6labels-servemux", func() http.Handler {
			mux := newMux(same)
			return k6labels.NewHandler(mux, reg(), k6labels.WithServeMux(mux))
		}},
		{"k6labels-route", func() http.Handler {
			r := reg() // one Registry for the routes' handlers, as a server has
			return newMux(func(h http.Handler) http.Handler { return k6labels.NewHandler(h, r, k6labels.WithRoutePattern()) })
		}},
		{"k6labels-formatter", func() http.Handler {
			mux := newMux(same)
			return k6labels.NewHandler(mux, reg(), k6labels.WithNameFormatter(func(r *http.Request, name string) string {
				return vehicleRoute(r.URL.Path, name)
			}))
		}},
	}
	for _, tr := range muxTraffics() {
		for _, s := range setups {
			b.Run("traffic="+tr.name+"/impl="+s.name, func(b *testing.B) { serve(b, s.h(), tr.rs) })
		}
	}
}

// vehicleRoute names a request by its first path segment, as a hook for a
// router without patterns might: no allocation, one name per route.
func vehicleRoute(path, name string) string {
	switch {
	case strings.HasPrefix(path, "/bike/"):
		return "/bike/{id}"
	case strings.HasPrefix(path, "/scooter/"):
		return "/scooter/{id}"
	case strings.HasPrefix(path, "/car/"):
		return "/car/{id}"
	}
	return name
}

// BenchmarkParallel serves from every P at once (run with -cpu 1,2,4,8):
// the line cache, label-set cache and counters are shared by all of them.
func BenchmarkParallel(b *testing.B) {
	for _, tr := range k6Traffics {
		rs := requests("/bike?id=3", tr.lines)
		for _, impl := range impls[1:] {
			b.Run("header="+tr.name+"/impl="+impl.name, func(b *testing.B) {
				h := impl.wrap(null)
				w := httptest.NewRecorder()
				for _, r := range rs {
					h.ServeHTTP(w, r)
				}
				var start atomic.Int64
				b.ReportAllocs()
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					w := httptest.NewRecorder()
					i := int(start.Add(7919)) % len(rs) // each goroutine starts elsewhere
					for pb.Next() {
						h.ServeHTTP(w, rs[i])
						if i++; i == len(rs) {
							i = 0
						}
					}
				})
			})
		}
	}
}

// TestBaselineLabels checks that the baseline and k6labels really label
// every row's traffic, so that the comparison is between two working
// middlewares, and that the rows' routes name as the benchmarks say.
func TestBaselineLabels(t *testing.T) {
	for _, impl := range impls[1:] {
		for _, tr := range k6Traffics {
			var got string
			h := impl.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got, _ = pprof.Label(r.Context(), "k6_scenario")
			}))
			for i, r := range requests("/", tr.lines) {
				got = ""
				h.ServeHTTP(httptest.NewRecorder(), r)
				if got != "default" {
					t.Fatalf("%s, %s request %d: k6_scenario = %q, want default", impl.name, tr.name, i, got)
				}
			}
		}
	}
	if got := vehicleRoute("/car/7", "n"); got != "/car/{id}" {
		t.Errorf("vehicleRoute = %q", got)
	}
}
