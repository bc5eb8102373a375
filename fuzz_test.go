package k6labels

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"
)

var fuzzSeeds = []string{
	"k6.test_run_id=undefined, k6.scenario=default, k6.name=http://127.0.0.1:18080/jslib",
	"k6.test_run_id=run42, k6.scenario=checkout, k6.name=named-get",
	"k6.test_run_id=123456, k6.scenario=default, k6.name=http://localhost:5000/bike?id=3",
	"k6.name=100%zz, k6.scenario=s;p=1, k6.my-tag=get my bike",
	"k6.name=%C3%A9%FF%0A%", "=,;,k6.=,k6.a=b=c", "k6.a-b=1,k6.a_b=2",
}

// FuzzParseBaggage checks the parser on any input: no panic, keys non-empty
// and trimmed, values valid UTF-8, no more members than the limit.
func FuzzParseBaggage(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s, "")
	}
	f.Add("a=1", "k6.scenario=s")
	f.Fuzz(func(t *testing.T, line1, line2 string) {
		members := ParseBaggage(line1, line2)
		if len(members) > MaxBaggageMembers {
			t.Fatalf("%d members, limit %d", len(members), MaxBaggageMembers)
		}
		for _, m := range members {
			if m.Key == "" || strings.Trim(m.Key, " \t") != m.Key || strings.ContainsAny(m.Key, ",;=") {
				t.Errorf("bad key %q", m.Key)
			}
			if !utf8.ValidString(m.Value) {
				t.Errorf("value %q is not UTF-8", m.Value)
			}
		}
	})
}

// FuzzHandler checks every label the middleware produces, for any header
// lines and options: valid name, valid UTF-8 value within the cap, no more
// labels than the cap, no k6 label on the goroutine after the request.
func FuzzHandler(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s, "", 16, false)
	}
	f.Add("k6.scenario=s", "k6.name=/a?b", 3, true)
	f.Fuzz(func(t *testing.T, line1, line2 string, maxValue int, keepQuery bool) {
		opts := []Option{WithMaxValueBytes(maxValue), WithQueryStrings(keepQuery), WithMaxValuesPerLabel(50)}
		c := newConfig(opts)
		before := getProfLabel()
		h := NewHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n := 0
			forEachLabel(r.Context(), func(k, v string) {
				n++
				if !validName.MatchString(k) {
					t.Errorf("invalid label name %q", k)
				}
				if !utf8.ValidString(v) || len(v) > c.maxValueBytes || v == "" {
					t.Errorf("invalid value %q for %s (cap %d)", v, k, c.maxValueBytes)
				}
			})
			if n > c.maxLabels {
				t.Errorf("%d labels, cap %d", n, c.maxLabels)
			}
		}), opts...)
		r := httptest.NewRequest("GET", "/", nil)
		r.Header["Baggage"] = []string{line1, line2}
		h.ServeHTTP(httptest.NewRecorder(), r)
		if getProfLabel() != before {
			t.Error("goroutine labels not restored")
		}
	})
}

func forEachLabel(ctx context.Context, f func(k, v string)) {
	for k, v := range labelsOf(ctx) {
		f(k, v)
	}
}
