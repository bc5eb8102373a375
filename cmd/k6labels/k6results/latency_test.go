package k6results_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/k6labels/k6labels/cmd/k6labels/internal/fixture"
	"github.com/k6labels/k6labels/cmd/k6labels/k6results"
)

// TestLatencyFixture: the real k6 run's json and csv give the same
// http_req_duration and http_req_waiting values per row, one per http_reqs
// point, and waiting is never more than duration.
func TestLatencyFixture(t *testing.T) {
	dir := fixture.Dir(t)
	js, err := k6results.ReadFileWith(context.Background(), filepath.Join(dir, "k6/run-fx1.json.gz"), k6results.Options{Latency: true})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := k6results.ReadFileWith(context.Background(), filepath.Join(dir, "k6/run-fx1.csv.gz"), k6results.Options{Latency: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(js.Latency) == 0 || len(js.Latency) != len(js.Requests) {
		t.Fatalf("latency for %d rows, http_reqs for %d", len(js.Latency), len(js.Requests))
	}
	for k, n := range js.Requests {
		l, c := js.Latency[k], cs.Latency[k]
		if l == nil || c == nil || int64(len(l.Duration)) != n || int64(len(l.Waiting)) != n {
			t.Fatalf("%v: %d http_reqs, latency json %+v csv %+v", k, n, l != nil, c != nil)
		}
		a, b := slices.Sorted(slices.Values(l.Duration)), slices.Sorted(slices.Values(c.Duration))
		for i := range a {
			if d := a[i] - b[i]; d > 1e-3 || d < -1e-3 {
				t.Fatalf("%v: json and csv durations differ: %v vs %v", k, a[i], b[i])
			}
		}
		if slices.Max(l.Waiting) > slices.Max(l.Duration) {
			t.Errorf("%v: waiting above duration", k)
		}
	}
}

// TestLatencySetupLeftOut: timings of setup() requests are not kept, and
// Read (the CPU report's) keeps none.
func TestLatencySetupLeftOut(t *testing.T) {
	in := `{"metric":"http_req_duration","type":"Point","data":{"time":"2026-01-01T00:00:09Z","value":7,"tags":{"name":"http://h:1/car?id=1","scenario":"a"}}}
{"metric":"http_req_waiting","type":"Point","data":{"time":"2026-01-01T00:00:09Z","value":5,"tags":{"name":"http://h:1/car?id=1","scenario":"a"}}}
{"metric":"http_req_duration","type":"Point","data":{"time":"2026-01-01T00:00:09Z","value":9,"tags":{"name":"http://h:1/car","scenario":"a","group":"::setup"}}}
{"metric":"http_reqs","type":"Point","data":{"time":"2026-01-01T00:00:01Z","value":1,"tags":{"name":"http://h:1/car?id=1","scenario":"a"}}}`
	res, err := k6results.ReadWith(t.Context(), strings.NewReader(in), k6results.Options{Latency: true})
	if err != nil {
		t.Fatal(err)
	}
	if plain, _ := k6results.Read(strings.NewReader(in)); plain == nil || plain.Latency != nil {
		t.Errorf("Read kept latency: %+v", plain)
	}
	l := res.Latency[k6results.Key{Scenario: "a", Name: "http://h:1/car"}]
	if l == nil || !slices.Equal(l.Duration, []float64{7}) || !slices.Equal(l.Waiting, []float64{5}) {
		t.Errorf("latency %+v, want duration [7] waiting [5]", l)
	}
}
