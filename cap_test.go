package k6labels

import (
	"maps"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/k6labels/k6labels/internal/labeltable"
	"github.com/k6labels/k6labels/internal/w3c"
)

// The shared table through a real server: the net/http handler keeps k6's
// three members under the cap, whatever the script sent before them.
func TestLabelTableHandler(t *testing.T) {
	got := make(chan map[string]string, 1)
	srv := httptest.NewServer(NewHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- labelsOf(r.Context())
	}), WithRegistry(NewRegistry(0))))
	defer srv.Close()
	for _, tc := range labeltable.Cases() {
		req, err := http.NewRequest(http.MethodGet, srv.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range tc.Lines {
			req.Header.Add("Baggage", l)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if g := <-got; !maps.Equal(g, tc.Want) {
			t.Errorf("%s: labels %v, want %v", tc.Name, g, tc.Want)
		}
	}
}

// The cap's result depends on the set of members, not their order: every
// order of the table's members, in one line, makes the same labels (as
// k6otel.Context, which reads an unordered map, must agree).
func TestCapIgnoresMemberOrder(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	l := NewLabeler(WithRegistry(NewRegistry(0)))
	for _, tc := range labeltable.Cases() {
		ms := strings.Split(strings.Join(tc.Lines, ","), ",")
		for range 50 {
			rng.Shuffle(len(ms), func(i, j int) { ms[i], ms[j] = ms[j], ms[i] })
			if got := labelsOf(l.Context(t.Context(), []string{strings.Join(ms, ",")})); !maps.Equal(got, tc.Want) {
				t.Fatalf("%s, members %v: labels %v, want %v", tc.Name, ms, got, tc.Want)
			}
		}
	}
}

// Under smaller caps k6's members keep their places in the order
// k6.test_run_id, k6.scenario, k6.name; the members left out are counted.
func TestCapKeepsK6MembersFirst(t *testing.T) {
	t.Parallel()
	const header = "k6.a=1,k6.b=2,k6.name=n,k6.c=3,k6.scenario=s,k6.test_run_id=1"
	for _, tc := range []struct {
		max  int
		want []string
	}{
		{1, []string{"k6_test_run_id"}},
		{2, []string{"k6_scenario", "k6_test_run_id"}},
		{3, []string{"k6_name", "k6_scenario", "k6_test_run_id"}},
		{4, []string{"k6_a", "k6_name", "k6_scenario", "k6_test_run_id"}},
		{30, []string{"k6_a", "k6_b", "k6_c", "k6_name", "k6_scenario", "k6_test_run_id"}},
	} {
		reg := NewRegistry(0)
		got := labelsOf(NewLabeler(WithRegistry(reg), WithMaxLabels(tc.max)).Context(t.Context(), []string{header}))
		names := slices.Sorted(maps.Keys(got))
		if strings.Join(names, " ") != strings.Join(tc.want, " ") {
			t.Errorf("WithMaxLabels(%d): labels %v, want %v", tc.max, names, tc.want)
		}
		if s := reg.Stats(); s.Skipped != uint64(6-len(tc.want)) {
			t.Errorf("WithMaxLabels(%d): Skipped = %d, want %d", tc.max, s.Skipped, 6-len(tc.want))
		}
	}
}

// Keys that make the same name are one member under the cap, and an empty
// value removes the earlier one without holding a place.
func TestCapSameNameAndEmpty(t *testing.T) {
	t.Parallel()
	l := NewLabeler(WithRegistry(NewRegistry(0)), WithMaxLabels(2))
	for header, want := range map[string]map[string]string{
		"k6.a-b=1,k6.a_b=2,k6.c=3":           {"k6_a_b": "2", "k6_c": "3"},
		"k6.a=1,k6.b=2,k6.a=,k6.c=3":         {"k6_b": "2", "k6_c": "3"},
		"k6.x=,k6.y=undefined,k6.a=1,k6.b=2": {"k6_a": "1", "k6_b": "2"},
	} {
		if got := labelsOf(l.Context(t.Context(), []string{header})); !maps.Equal(got, want) {
			t.Errorf("%s: labels %v, want %v", header, got, want)
		}
	}
}

// The cap against a model of its rule, on random headers of distinct keys
// (k6's three among script members, some empty or "undefined") under random
// caps: the labels are k6's present members in the order test_run_id,
// scenario, name, then the others by name, as many as the cap allows.
func TestCapModel(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	core := []string{"k6_test_run_id", "k6_scenario", "k6_name"}
	for range 500 {
		limit := 1 + rng.IntN(12)
		var members []string
		live := map[string]string{}
		for _, name := range append(slices.Clone(core), "k6_a", "k6_b", "k6_m", "k6_n", "k6_s", "k6_t", "k6_z", "k6_zz", "k6_0", "k6_9") {
			if rng.IntN(3) == 0 {
				continue
			}
			v := "v" + name
			switch rng.IntN(8) {
			case 0:
				v = ""
			case 1:
				v = "undefined"
			default:
				live[name] = v
			}
			members = append(members, "k6."+name[len("k6_"):]+"="+v)
		}
		rng.Shuffle(len(members), func(i, j int) { members[i], members[j] = members[j], members[i] })
		want := map[string]string{}
		for _, name := range core {
			if v, ok := live[name]; ok && len(want) < limit {
				want[name] = v
			}
		}
		for _, name := range slices.Sorted(maps.Keys(live)) {
			if !slices.Contains(core, name) && len(want) < limit {
				want[name] = live[name]
			}
		}
		l := NewLabeler(WithRegistry(NewRegistry(0)), WithMaxLabels(limit))
		if got := labelsOf(l.Context(t.Context(), []string{strings.Join(members, ",")})); !maps.Equal(got, want) {
			t.Fatalf("WithMaxLabels(%d), %q: labels %v, want %v", limit, members, got, want)
		}
	}
}

// TestCmpNames checks cmpNames against comparing the built label names, on
// every pair of keys of up to four bytes after "k6." over an alphabet where
// '-' and '_' make the same name, and on long keys that differ late.
func TestCmpNames(t *testing.T) {
	name := func(k string) string {
		b := []byte(k[len("k6."):])
		for i := range b {
			b[i] = w3c.NameChar(b[i])
		}
		return string(b)
	}
	var keys []string
	var gen func(prefix string, n int)
	gen = func(prefix string, n int) {
		keys = append(keys, "k6."+prefix)
		if n == 0 {
			return
		}
		for _, c := range "a-_B" {
			gen(prefix+string(c), n-1)
		}
	}
	gen("", 4)
	long := strings.Repeat("x", 120)
	for _, tail := range []string{"a", "b", "-", "_", "a-", "a_", ""} {
		keys = append(keys, "k6."+long+tail, "k6.-"+long[1:]+tail)
	}
	for _, a := range keys {
		for _, b := range keys {
			if got, want := cmpNames(a, b), strings.Compare(name(a), name(b)); got != want {
				t.Fatalf("cmpNames(%q, %q) = %d, want %d", a, b, got, want)
			}
		}
	}
	for _, a := range keys[:200] {
		for _, b := range keys[:200] {
			want := 0
			for want < len(a) && want < len(b) && a[want] == b[want] {
				want++
			}
			if got := commonPrefix(a, b); got != want {
				t.Fatalf("commonPrefix(%q, %q) = %d, want %d", a, b, got, want)
			}
		}
	}
}
