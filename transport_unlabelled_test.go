package k6labels

import (
	"context"
	"net/http"
	"runtime/pprof"
	"testing"
	"unsafe"
)

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestUnlabelledTransportClearsAndRestores checks that the base round trip
// runs with no goroutine labels (so goroutines it starts inherit none) and
// that the caller gets exactly its own labels back, with no allocation.
func TestUnlabelledTransportClearsAndRestores(t *testing.T) {
	var during unsafe.Pointer
	resp := &http.Response{Body: http.NoBody}
	base := roundTripperFunc(func(*http.Request) (*http.Response, error) {
		during = getProfLabel()
		return resp, nil
	})
	req, _ := http.NewRequest("GET", "http://127.0.0.1/", nil)
	for name, rt := range map[string]http.RoundTripper{
		"UnlabelledTransport": UnlabelledTransport(base),
		"NewTransport":        NewTransport(base),
	} {
		pprof.Do(context.Background(), pprof.Labels("k6_test_run_id", "caller"), func(context.Context) {
			before := getProfLabel()
			r, err := rt.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			_ = r.Body.Close()
			if during != nil {
				t.Errorf("%s: the base round trip ran labelled", name)
			}
			if getProfLabel() != before {
				t.Errorf("%s: the caller's labels were not restored", name)
			}
			if n := testing.AllocsPerRun(100, func() {
				if r, err := rt.RoundTrip(req); err == nil {
					_ = r.Body.Close()
				}
			}); n != 0 {
				t.Errorf("%s: %v allocations per round trip without k6 members, want 0", name, n)
			}
		})
	}
}
