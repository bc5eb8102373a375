package main

import (
	"maps"
	"net/http"
	"testing"

	"github.com/k6labels/k6labels/examples/internal/servetest"
)

func TestRoutePattern(t *testing.T) {
	for name, h := range map[string]http.Handler{"per handler": newMux(), "around the mux": newWrappedMux()} {
		t.Run(name, func(t *testing.T) {
			base := servetest.Start(t, h)
			for _, path := range []string{"/bike/42", "/bike/7"} {
				want := servetest.Want()
				want["k6_name"] = "GET /bike/{id}"
				if got := servetest.Get(t, base+path, servetest.Baggage); !maps.Equal(got, want) {
					t.Errorf("GET %s: labels %v, want %v", path, got, want)
				}
			}
			want := servetest.Want()
			want["k6_name"] = "GET /car/{id}"
			if got := servetest.Get(t, base+"/car/1", servetest.Baggage); !maps.Equal(got, want) {
				t.Errorf("GET /car/1: labels %v, want %v", got, want)
			}
			if got := servetest.Get(t, base+"/car/1"); len(got) != 0 {
				t.Errorf("without baggage: labels %v, want none", got)
			}
		})
	}
}
