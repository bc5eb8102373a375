package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestTraceDemo: the trace phase of the demo prints, per route, the
// service's wall, CPU and blocked time beside the load's latency: /trips
// blocked in sleep, /surge in sync, and k6-side durations.
func TestTraceDemo(t *testing.T) {
	srv, err := startServer("127.0.0.1:0", newService())
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	var out bytes.Buffer
	if err := runTraceDemo(t.Context(), srv.URL, "1", &out); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{srv.URL + "/trips", srv.URL + "/surge", srv.URL + "/car", " sleep ", " sync ", "k6 duration mean",
		"handleTrips", "Top blocking stacks of " + srv.URL + "/surge"} {
		if !strings.Contains(s, want) {
			t.Errorf("the trace demo's output lacks %q:\n%s", want, s)
		}
	}
	// /trips's row: its sleep column is at least the query time.
	for _, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && f[0] == srv.URL+"/trips" && f[1] == "0" {
			t.Errorf("/trips: no request measured: %s", line)
		}
	}
}
