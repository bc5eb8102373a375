package servetest

import (
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/k6labels/k6labels/internal/profiletest"
)

// NamedBaggage is the header k6's helper sends for a request to url in
// scenario "rides" when the script gives it no name: k6.name is the URL,
// ids and query string included.
func NamedBaggage(url string) string {
	return "k6.test_run_id=123456,k6.scenario=rides,k6.name=" + url
}

// WantNamed returns the labels a handler must see for [NamedBaggage] when
// the request is named route.
func WantNamed(route string) map[string]string {
	return map[string]string{"k6_test_run_id": "123456", "k6_scenario": "rides", "k6_name": route}
}

// CheckNamed sends requests for base+path with ids in the path and the
// query (path is a format with one %d, such as "/bike/%d"), and fails t
// unless each one carrying [NamedBaggage] is labelled [WantNamed](route) and
// one without baggage is not labelled.
func CheckNamed(t testing.TB, base, path, route string) {
	t.Helper()
	for id := 41; id < 44; id++ {
		url := base + fmt.Sprintf(path, id) + "?x=" + strconv.Itoa(id)
		if got := Get(t, url, NamedBaggage(url)); !maps.Equal(got, WantNamed(route)) {
			t.Errorf("GET %s: labels %v, want %v", url, got, WantNamed(route))
		}
		if got := Get(t, url); len(got) != 0 {
			t.Errorf("GET %s without baggage: labels %v, want none", url, got)
		}
	}
}

// CheckNamedProfile records a CPU profile while it sends one request with
// [NamedBaggage] to url, served by [Spin], and fails t unless the handler's
// samples exist and each carries exactly [WantNamed](route).
func CheckNamedProfile(t testing.TB, url, route string) {
	t.Helper()
	var got map[string]string
	p := profiletest.Record(t, func() { got = Get(t, url, NamedBaggage(url)) })
	if !maps.Equal(got, WantNamed(route)) {
		t.Errorf("context labels %v, want %v", got, WantNamed(route))
	}
	samples := profiletest.Samples(p, "servetest.spinWork")
	if len(samples) == 0 {
		t.Fatal("no CPU samples in the handler")
	}
	for _, s := range samples {
		if l := profiletest.Labels(s); !maps.Equal(l, WantNamed(route)) {
			t.Errorf("sample labels %v, want %v", l, WantNamed(route))
		}
	}
	profiletest.CheckLabels(t, p, 256)
}

// k6Requests returns n GET requests for base+path (a format with one %d,
// such as "/bike/%d") as k6 sends them by default: a new id in the path and
// the query of each, with the [NamedBaggage] of its URL.
func k6Requests(base, path string, n int) []*http.Request {
	reqs := make([]*http.Request, n)
	for i := range reqs {
		url := base + fmt.Sprintf(path, i) + "?x=" + strconv.Itoa(i)
		reqs[i] = httptest.NewRequest(http.MethodGet, url, nil)
		reqs[i].Header.Set("Baggage", NamedBaggage(url))
	}
	return reqs
}

// benchServe serves reqs through h in turn, b.N requests in all, reporting
// allocations.
func benchServe(b *testing.B, h http.Handler, reqs []*http.Request) {
	w := httptest.NewRecorder()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		h.ServeHTTP(w, reqs[i%len(reqs)])
		i++
	}
}

// A Variant is one way of serving the same routes, for [BenchNaming].
type Variant struct {
	Name    string
	Handler http.Handler
}

// BenchNaming runs a sub-benchmark naming=<Name> per variant, each serving
// 100 [k6Requests] for base+"/bike/%d" in turn.
func BenchNaming(b *testing.B, base string, variants ...Variant) {
	for _, v := range variants {
		b.Run("naming="+v.Name, func(b *testing.B) {
			benchServe(b, v.Handler, k6Requests(base, "/bike/%d", 100))
		})
	}
}
