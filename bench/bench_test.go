// Package bench compares the k6labels middleware with a baseline that does
// what pyroscope-go's x/k6 middleware does. It is its own module so that the
// root module does not depend on OpenTelemetry.
//
// Run from this directory:
//
//	go test -run '^$' -bench . -benchmem -count 10 > bench.txt
//	go run golang.org/x/perf/cmd/benchstat@latest -col /impl bench.txt
package bench

import (
	"net/http"
	"net/http/httptest"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"

	"github.com/k6labels/k6labels"
)

// headers are the cases of the README's performance table.
var headers = []struct {
	name  string
	lines []string
}{
	{"none", nil},
	{"non-k6", []string{"userId=alice,serverNode=DF%2028,isProduction=false"}},
	{"jslib", []string{"k6.test_run_id=123456, k6.scenario=default, k6.name=http://localhost:5000/bike?id=3"}},
	{"members64", []string{members64()}},
}

func members64() string {
	m := make([]string, 64)
	for i := range m {
		m[i] = "k6.m" + strconv.Itoa(i) + "=value" + strconv.Itoa(i)
	}
	return strings.Join(m, ", ")
}

var impls = []struct {
	name string
	wrap func(http.Handler) http.Handler
}{
	{"bare", func(h http.Handler) http.Handler { return h }},
	{"baseline", baselineHandler},
	{"k6labels", k6labels.LabelsFromBaggageHandler},
}

func BenchmarkHandler(b *testing.B) {
	for _, hd := range headers {
		for _, impl := range impls {
			b.Run("header="+hd.name+"/impl="+impl.name, func(b *testing.B) {
				h := impl.wrap(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
				r := httptest.NewRequest("GET", "/bike?id=3", nil)
				if hd.lines != nil {
					r.Header["Baggage"] = hd.lines
				}
				w := httptest.NewRecorder()
				b.ReportAllocs()
				for b.Loop() {
					h.ServeHTTP(w, r)
				}
			})
		}
	}
}

// TestBaselineLabels checks that the baseline really labels, so that the
// comparison is between two working middlewares.
func TestBaselineLabels(t *testing.T) {
	for _, impl := range impls[1:] {
		var got string
		h := impl.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			got, _ = pprof.Label(r.Context(), "k6_scenario")
		}))
		r := httptest.NewRequest("GET", "/", nil)
		r.Header["Baggage"] = headers[2].lines
		h.ServeHTTP(httptest.NewRecorder(), r)
		if got != "default" {
			t.Errorf("%s: k6_scenario = %q, want default", impl.name, got)
		}
	}
}
