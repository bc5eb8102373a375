package k6labels_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"

	"github.com/k6labels/k6labels"
)

// k6Header is what k6's http-instrumentation-pyroscope sends.
const k6Header = "k6.test_run_id=123456, k6.scenario=default, k6.name=http://localhost:5000/bike?id=3"

func k6Context(t testing.TB) context.Context {
	t.Helper()
	ctx := k6labels.NewLabeler().Context(context.Background(), []string{k6Header})
	if k6labels.Baggage(ctx) == "" {
		t.Fatal("no k6 members in the context")
	}
	return ctx
}

// baggageRecorder is a real server on 127.0.0.1 that records the baggage
// header lines of each request it gets.
type baggageRecorder struct {
	*httptest.Server
	mu  sync.Mutex
	got [][]string
}

func newBaggageRecorder(t *testing.T) *baggageRecorder {
	rec := &baggageRecorder{}
	rec.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.mu.Lock()
		rec.got = append(rec.got, r.Header.Values("Baggage"))
		rec.mu.Unlock()
	}))
	t.Cleanup(rec.Close)
	return rec
}

func (rec *baggageRecorder) last() []string {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.got) == 0 {
		return nil
	}
	return rec.got[len(rec.got)-1]
}

func send(t *testing.T, c *http.Client, ctx context.Context, url string, header http.Header) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if header != nil {
		req.Header = header
	}
	before := req.Header.Clone()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if !reflect.DeepEqual(req.Header, before) {
		t.Errorf("the caller's request header changed: %q, was %q", req.Header, before)
	}
}

func TestTransportAddsK6Members(t *testing.T) {
	rec := newBaggageRecorder(t)
	c := &http.Client{Transport: k6labels.NewTransport(&http.Transport{})}
	defer c.CloseIdleConnections()
	ctx := k6Context(t)
	k6 := k6labels.Baggage(ctx)

	tests := []struct {
		name   string
		header http.Header
		want   []string
	}{
		{"no baggage yet", nil, []string{k6}},
		{
			"merged with existing lines, k6 keys not repeated",
			http.Header{"Baggage": {"userId=alice, k6.scenario=old", "b=2;p"}},
			[]string{"userId=alice,b=2;p," + k6},
		},
		{
			"a key not in canonical form counts too",
			http.Header{"baggage": {"k6.name=old, a=1"}},
			[]string{"a=1," + k6},
		},
		{
			"the same members already there",
			http.Header{"Baggage": {k6}},
			[]string{k6},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			send(t, c, ctx, rec.URL, tt.header)
			if got := rec.last(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("server got baggage %q, want %q", got, tt.want)
			}
		})
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestTransportWithoutK6LeavesRequestAlone(t *testing.T) {
	var got *http.Request
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		got = r
		return &http.Response{StatusCode: 200, Body: http.NoBody, Request: r}, nil
	})
	tr := k6labels.NewTransport(base)
	nonK6 := k6labels.NewLabeler().Context(context.Background(), []string{"userId=alice, k6.name="})
	for _, ctx := range []context.Context{context.Background(), nonK6} {
		req, _ := http.NewRequestWithContext(ctx, "GET", "http://127.0.0.1/", nil)
		req.Header.Set("Baggage", "a=1 ,  b=2")
		if _, err := tr.RoundTrip(req); err != nil {
			t.Fatal(err)
		}
		if got != req {
			t.Error("a request without k6 members was not passed on as it was")
		}
		if v := req.Header.Values("Baggage"); len(v) != 1 || v[0] != "a=1 ,  b=2" {
			t.Errorf("baggage changed to %q", v)
		}
	}

	// The request carries k6 members: base gets a clone, the caller's request
	// stays as it was.
	req, _ := http.NewRequestWithContext(k6Context(t), "GET", "http://127.0.0.1/", nil)
	req.Header.Set("Baggage", "a=1")
	if _, err := tr.RoundTrip(req); err != nil {
		t.Fatal(err)
	}
	if got == req || req.Header.Get("Baggage") != "a=1" {
		t.Errorf("the caller's request was modified: %q", req.Header)
	}
	if !strings.HasPrefix(got.Header.Get("Baggage"), "a=1,k6.") {
		t.Errorf("base got baggage %q", got.Header.Get("Baggage"))
	}
}

func TestTransportNilBase(t *testing.T) {
	rec := newBaggageRecorder(t)
	c := &http.Client{Transport: k6labels.NewTransport(nil)}
	defer c.CloseIdleConnections() // passed on to http.DefaultTransport
	ctx := k6Context(t)
	send(t, c, ctx, rec.URL, nil)
	if got := rec.last(); len(got) != 1 || got[0] != k6labels.Baggage(ctx) {
		t.Errorf("server got baggage %q", got)
	}
}

// labelsOf returns the pprof labels of ctx.
func labelsOf(ctx context.Context) map[string]string {
	m := map[string]string{}
	pprof.ForLabels(ctx, func(k, v string) bool {
		m[k] = v
		return true
	})
	return m
}

// TestTransportBetweenServices has k6 call service A, which calls service B
// with NewTransport: B labels its requests like A, from the header alone.
func TestTransportBetweenServices(t *testing.T) {
	var mu sync.Mutex
	var labelsA, labelsB map[string]string
	b := httptest.NewServer(k6labels.NewHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		labelsB = labelsOf(r.Context())
		mu.Unlock()
	})))
	defer b.Close()
	client := &http.Client{Transport: k6labels.NewTransport(&http.Transport{})}
	defer client.CloseIdleConnections()
	a := httptest.NewServer(k6labels.NewHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		labelsA = labelsOf(r.Context())
		mu.Unlock()
		req, _ := http.NewRequestWithContext(r.Context(), "GET", b.URL, nil)
		resp, err := client.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		resp.Body.Close()
	})))
	defer a.Close()

	k6 := &http.Client{Transport: &http.Transport{}}
	defer k6.CloseIdleConnections()
	req, _ := http.NewRequest("GET", a.URL, nil)
	req.Header.Set("Baggage", "userId=alice, "+k6Header)
	resp, err := k6.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	want := map[string]string{
		"k6_test_run_id": "123456",
		"k6_scenario":    "default",
		"k6_name":        "http://localhost:5000/bike",
	}
	mu.Lock()
	defer mu.Unlock()
	if !reflect.DeepEqual(labelsA, want) || !reflect.DeepEqual(labelsB, want) {
		t.Errorf("labels in A %v, in B %v, want %v in both", labelsA, labelsB, want)
	}
}

func BenchmarkTransport(b *testing.B) {
	resp := &http.Response{StatusCode: 200, Body: http.NoBody}
	tr := k6labels.NewTransport(roundTripFunc(func(*http.Request) (*http.Response, error) { return resp, nil }))
	run := func(b *testing.B, ctx context.Context, header http.Header) {
		req, _ := http.NewRequestWithContext(ctx, "GET", "http://127.0.0.1/", nil)
		if header != nil {
			req.Header = header
		}
		b.ReportAllocs()
		for b.Loop() {
			tr.RoundTrip(req)
		}
	}
	ctx := k6Context(b)
	b.Run("NoK6", func(b *testing.B) { run(b, context.Background(), nil) })
	b.Run("K6", func(b *testing.B) { run(b, ctx, nil) })
	b.Run("K6Existing", func(b *testing.B) {
		run(b, ctx, http.Header{"Baggage": {"userId=alice,serverNode=DF%2028"}})
	})
}

// A service labels its own profile with k6labels.NewHandler and passes the
// k6 members on to the services it calls with NewTransport, so they can
// label theirs.
func ExampleNewTransport() {
	// The next service, which runs k6labels too.
	next := httptest.NewServer(k6labels.NewHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Println("next service got:", r.Header.Get("Baggage"))
	})))
	defer next.Close()

	client := &http.Client{Transport: k6labels.NewTransport(nil)}
	defer client.CloseIdleConnections()

	// This service: its handler calls the next one with the request's context.
	svc := httptest.NewServer(k6labels.NewHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, _ := http.NewRequestWithContext(r.Context(), "GET", next.URL, nil)
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
		}
	})))
	defer svc.Close()

	// What k6 sends to this service.
	req, _ := http.NewRequest("GET", svc.URL, nil)
	req.Header.Set("Baggage", "k6.test_run_id=123, k6.scenario=default, k6.name=GetBike")
	resp, err := client.Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	// Output: next service got: k6.name=GetBike,k6.scenario=default,k6.test_run_id=123
}

func TestMergeBaggageHeader(t *testing.T) {
	const k6 = "k6.test_run_id=1,k6.scenario=s"
	tests := []struct {
		name   string
		header http.Header
		want   http.Header
	}{
		{"empty", http.Header{}, http.Header{"Baggage": {k6}}},
		{"lines under every spelling, one key each", http.Header{
			"Baggage": {"a=1"},
			"baggage": {"k6.scenario=stale", "b=2"},
			"BAGGAGE": {"c=3"},
			"Other":   {"x"},
		}, nil}, // checked below: the order of the odd keys is the map's
	}
	for _, tt := range tests {
		k6labels.MergeBaggageHeader(tt.header, k6)
		if tt.want != nil && !reflect.DeepEqual(tt.header, tt.want) {
			t.Errorf("%s: header %q, want %q", tt.name, tt.header, tt.want)
		}
	}
	h := tests[1].header
	if len(h) != 2 || len(h["Baggage"]) != 1 || h.Get("Other") != "x" {
		t.Fatalf("header %q, want one Baggage line and Other", h)
	}
	got := k6labels.ParseBaggage(h["Baggage"]...)
	keys := map[string]string{}
	for _, m := range got {
		if _, dup := keys[m.Key]; dup {
			t.Errorf("%q sent twice in %q", m.Key, h["Baggage"])
		}
		keys[m.Key] = m.Value
	}
	want := map[string]string{"a": "1", "b": "2", "c": "3", "k6.test_run_id": "1", "k6.scenario": "s"}
	if !reflect.DeepEqual(keys, want) {
		t.Errorf("members %v, want %v", keys, want)
	}
}

// An HTTP client other than NewTransport adds the k6 members of a handler's
// context to the request it sends.
func ExampleMergeBaggageHeader() {
	h := http.Header{"baggage": {"tenant=acme, k6.name=stale"}} // set by map assignment
	k6labels.MergeBaggageHeader(h, "k6.test_run_id=123,k6.name=GetBike")
	fmt.Println(h)
	// Output: map[Baggage:[tenant=acme,k6.test_run_id=123,k6.name=GetBike]]
}

// With nothing valid to merge, MergeBaggageHeader leaves no empty line: an
// empty baggage header is not valid baggage.
func TestMergeBaggageHeaderNothingToMerge(t *testing.T) {
	for _, add := range []string{"", "bad key=1", `k="q"`} {
		h := http.Header{"baggage": {"also bad"}}
		k6labels.MergeBaggageHeader(h, add)
		if len(h) != 0 {
			t.Errorf("MergeBaggageHeader(%q) left header %q, want none", add, h)
		}
	}
}
