package main

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// TestBaggageHeaderShape checks the value against what k6's helper 1.0.2
// sends, byte for byte: "," between members, a tags.name with its space.
func TestBaggageHeaderShape(t *testing.T) {
	for _, c := range []struct{ name, want string }{
		{"http://localhost:5000/bike?id=3&x=y", "k6.test_run_id=123456,k6.scenario=rush_hour,k6.name=http://localhost:5000/bike?id=3&x=y"},
		{"order bike", "k6.test_run_id=123456,k6.scenario=rush_hour,k6.name=order bike"},
	} {
		if got := baggageHeader("123456", "rush_hour", c.name); got != c.want {
			t.Errorf("baggageHeader = %q\nwant            %q", got, c.want)
		}
	}
}

// TestDriverWireFormat reads the driver's requests as raw bytes from a
// loopback socket, so that what is checked is what a server receives: one
// baggage line per request, exactly the line k6's helper 1.0.2 writes for
// that request ("Baggage:" in canonical case as k6 sends it, "," between members with no space, k6.name
// the raw URL with its query string, nothing percent-encoded).
func TestDriverWireFormat(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	target := "http://" + ln.Addr().String()
	type seen struct {
		target string   // the request target (path and query)
		lines  []string // the baggage header lines, as read
	}
	reqs := make(chan seen, 100)
	var conns sync.WaitGroup
	go func() {
		defer func() {
			conns.Wait()
			close(reqs)
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Go(func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					req, err := r.ReadString('\n')
					if err != nil {
						return
					}
					var s seen
					if f := strings.Fields(req); len(f) == 3 {
						s.target = f[1]
					}
					for {
						h, err := r.ReadString('\n')
						if err != nil || h == "\r\n" {
							break
						}
						if strings.HasPrefix(strings.ToLower(h), "baggage:") {
							s.lines = append(s.lines, h)
						}
					}
					reqs <- s
					if _, err := c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")); err != nil {
						return
					}
				}
			})
		}
	}()

	d := newDriver(target, testRunID, defaultScenarios)
	d.maxRequests = 30
	d.run(context.Background())
	if err := d.err(); err != nil {
		t.Fatal(err)
	}
	ln.Close()
	scenarios := map[string]bool{}
	n := 0
	for s := range reqs {
		n++
		if len(s.lines) != 1 {
			t.Fatalf("request %s: %d baggage lines %q, want exactly one", s.target, len(s.lines), s.lines)
		}
		// The line the helper writes for this URL in a scenario that
		// requests its path.
		path, _, _ := strings.Cut(s.target, "?")
		var want []string
		for _, sc := range defaultScenarios {
			if slices.Contains(sc.paths, path) {
				line := "Baggage: k6.test_run_id=" + testRunID + ",k6.scenario=" + sc.name + ",k6.name=" + target + s.target + "\r\n"
				if s.lines[0] == line {
					scenarios[sc.name] = true
				}
				want = append(want, line)
			}
		}
		if !slices.Contains(want, s.lines[0]) {
			t.Fatalf("request %s: baggage line\n  %q\nis not what k6's helper 1.0.2 sends, one of\n  %q", s.target, s.lines[0], want)
		}
	}
	if n != 30 {
		t.Errorf("server read %d requests, want 30", n)
	}
	if len(scenarios) < 2 {
		t.Errorf("requests came from scenarios %v, want at least two", scenarios)
	}
}

// TestServiceRoutes checks the service answers each route, labelled or not.
func TestServiceRoutes(t *testing.T) {
	srv, err := startServer("127.0.0.1:0", newService())
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	for _, r := range routes {
		for _, withBaggage := range []bool{false, true} {
			req, _ := http.NewRequest(http.MethodGet, srv.URL+r.path+"?vehicle_id=9", nil)
			if withBaggage {
				req.Header.Set("Baggage", baggageHeader("1", "s", srv.URL+r.path))
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("GET %s: %s", r.path, resp.Status)
			}
		}
	}
	resp, err := http.Get(srv.URL + "/nowhere")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /nowhere: %s, want 404", resp.Status)
	}
}

// TestLoadJSMatchesDriver keeps load.js and the built-in driver the same
// load: the official helper, the same scenarios, VUs and paths.
func TestLoadJSMatchesDriver(t *testing.T) {
	data, err := os.ReadFile("load.js")
	if err != nil {
		t.Fatal(err)
	}
	js := string(data)
	for _, want := range []string{
		"import pyroscope from 'https://jslib.k6.io/http-instrumentation-pyroscope/1.0.",
		"pyroscope.instrumentHTTP();",
		// The documented command: the length through DURATION, never
		// --duration (it replaces the scenarios).
		"k6 run --no-usage-report -e BASE_URL=http://127.0.0.1:8080 -e DURATION=60s examples/rideshare/load.js",
		"import pyroscope from './http-instrumentation-pyroscope.js';",
	} {
		if !strings.Contains(js, want) {
			t.Errorf("load.js lacks %q", want)
		}
	}
	scenarioRe := regexp.MustCompile(`(\w+): \{ executor: 'constant-vus', vus: (\d+), duration: DURATION, exec: '(\w+)' \}`)
	found := scenarioRe.FindAllStringSubmatch(js, -1)
	if len(found) != len(defaultScenarios) {
		t.Fatalf("load.js has %d scenarios, the driver %d", len(found), len(defaultScenarios))
	}
	for i, m := range found {
		s := defaultScenarios[i]
		if m[1] != s.name || m[2] != strconv.Itoa(s.vus) {
			t.Errorf("load.js scenario %s with %s VUs, driver %s with %d", m[1], m[2], s.name, s.vus)
		}
		fn := regexp.MustCompile(`export function ` + m[3] + `\(\) \{\n  order\(\[([^\]]*)\]\);`).FindStringSubmatch(js)
		if fn == nil {
			t.Errorf("load.js has no function %s calling order([...])", m[3])
			continue
		}
		if got, want := fn[1], "'"+strings.Join(s.paths, "', '")+"'"; got != want {
			t.Errorf("load.js %s orders %s, the driver %s", m[3], got, want)
		}
	}
}
