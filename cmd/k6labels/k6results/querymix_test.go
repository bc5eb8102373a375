package k6results_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/k6labels/k6labels/cmd/k6labels/k6results"
)

// k6Line is an http_reqs point of k6's json output named name.
func k6Line(name string) string {
	return `{"metric":"http_reqs","type":"Point","data":{"time":"2026-12-02T18:02:45.970286149Z","value":1,"tags":{"group":"","method":"GET","name":"` +
		name + `","scenario":"s","status":"200","url":"` + name + `"}}}` + "\n"
}

// TestQueryMixExact: with few query strings per name, each is counted
// exactly, under the name the middleware labels (query dropped); a name
// with no query string counts as "".
func TestQueryMixExact(t *testing.T) {
	var b strings.Builder
	for i := range 30 {
		q := "type=suv"
		if i%3 == 0 {
			q = "type=mini"
		}
		b.WriteString(k6Line("http://h:1/car?" + q + "#frag"))
	}
	b.WriteString(k6Line("http://h:1/bike"))
	b.WriteString(k6Line("order bike"))
	b.WriteString(k6Line("order?now"))
	res, err := k6results.Read(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for name, m := range res.Queries {
		got[name] = fmt.Sprint(m.Counts, " other ", m.Other)
	}
	want := map[string]string{
		"http://h:1/car":  "map[type=mini:10 type=suv:20] other 0",
		"http://h:1/bike": "map[:1] other 0",
		"order bike":      "map[:1] other 0",
		"order?now":       "map[:1] other 0", // a tags.name, not a URL: no query
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("queries\n%v, want\n%v", got, want)
	}
}

// TestQueryMixBounded: a name with a new query string on every request
// keeps at most MaxQueryVariants of them, every request counted once, and
// a heavy variant stays, low by at most requests/(MaxQueryVariants+1).
func TestQueryMixBounded(t *testing.T) {
	var b strings.Builder
	const n = 20000
	for i := range n {
		if i%4 == 0 {
			b.WriteString(k6Line("/car?type=suv"))
		} else {
			b.WriteString(k6Line(fmt.Sprintf("/car?vehicle_id=%d", i)))
		}
	}
	b.WriteString(k6Line("/car?" + strings.Repeat("é", 400)))
	res, err := k6results.Read(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	m := res.Queries["/car"]
	if len(m.Counts) > k6results.MaxQueryVariants || m.Total() != n+1 {
		t.Fatalf("%d variants, total %d; want at most %d, %d", len(m.Counts), m.Total(), k6results.MaxQueryVariants, n+1)
	}
	if c := m.Counts["type=suv"]; c > n/4 || c < n/4-n/(k6results.MaxQueryVariants+1) {
		t.Errorf("type=suv counted %d of %d", c, n/4)
	}
	for q := range m.Counts {
		if len(q) > 260 {
			t.Errorf("a variant of %d bytes kept", len(q))
		}
	}
}
