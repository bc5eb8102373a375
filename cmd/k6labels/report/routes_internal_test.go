package report

import (
	"slices"
	"testing"
)

// TestRouteMatcher: each k6 request (method, URL) finds the route label it
// is served under: ServeMux patterns with ServeMux's precedence (the most
// specific wins, the method counts), chi/gorilla {name} and {name:re},
// Echo/Gin :name and *, a gRPC method path; none, or several when two
// labels conflict and neither is more specific.
func TestRouteMatcher(t *testing.T) {
	labels := []string{"GET /cart/{id}", "GET /cart/new", "POST /cart/{id}", "/static/", "/item/:id", "/files/*",
		"/user/{name:[a-z]+}", "/pkg.Svc/Method", "http://h/car", "/a/{x}", "/{y}/b", "order car"}
	slices.Sort(labels)
	m := newRouteMatcher(labels)
	for _, c := range []struct {
		method, name string
		want         []string
	}{
		{"GET", "http://h/cart/7", []string{"GET /cart/{id}"}},
		{"GET", "http://h/cart/new", []string{"GET /cart/new"}},
		{"POST", "http://h/cart/7", []string{"POST /cart/{id}"}},
		{"DELETE", "http://h/cart/7", nil},
		{"GET", "http://h/static/css/a.css", []string{"/static/"}},
		{"GET", "http://h/item/5", []string{"/item/:id"}},
		{"GET", "http://h/files/a/b.txt", []string{"/files/*"}},
		{"GET", "http://h/user/bob", []string{"/user/{name:[a-z]+}"}},
		{"GET", "http://h/user/123", nil},
		{"POST", "http://h/pkg.Svc/Method", []string{"/pkg.Svc/Method"}},
		{"GET", "http://h/a/b", []string{"/a/{x}", "/{y}/b"}},
		{"", "http://h/cart/9", []string{"GET /cart/{id}"}},
		{"GET", "order car", nil},
	} {
		if got := m.match(c.method, c.name); !slices.Equal(got, c.want) {
			t.Errorf("%s %s: %q, want %q", c.method, c.name, got, c.want)
		}
	}
}

// TestWordUnder: a word where a route has a one-segment wildcard (not a
// regexp, not a wildcard of the rest) is what a route of its own may hide.
func TestWordUnder(t *testing.T) {
	for _, c := range []struct {
		route, name string
		want        bool
	}{
		{"GET /cart/{id}", "http://h/cart/new", true},
		{"/item/:id", "http://h/item/latest-deals", true},
		{"GET /cart/{id}", "http://h/cart/7", false},
		{"GET /cart/{id}", "http://h/cart/a7", false},
		{"GET /cart/{id}", "http://h/cart/x", false},
		{"/user/{name:[a-z]+}", "http://h/user/alice", false},
		{"/files/*", "http://h/files/readme", false},
		{"GET /files/{path...}", "http://h/files/readme", false},
		{"GET /cart/new", "http://h/cart/new", false},
	} {
		if got := wordUnder(c.route, c.name); got != c.want {
			t.Errorf("wordUnder(%q, %q) = %v, want %v", c.route, c.name, got, c.want)
		}
	}
}
