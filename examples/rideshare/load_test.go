package main

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func TestBaggageHeaderShape(t *testing.T) {
	got := baggageHeader("123456", "rush_hour", "http://localhost:5000/bike?id=3&x=y")
	want := "k6.test_run_id=123456, k6.scenario=rush_hour, k6.name=http://localhost:5000/bike?id=3&x=y"
	if got != want {
		t.Fatalf("baggageHeader = %q\nwant            %q", got, want)
	}
}

// jslibLine is a baggage header line as k6's helper writes it on the wire:
// lowercase name, three members, ", " separators, k6.name the raw URL with
// its query string, nothing percent-encoded.
var jslibLine = regexp.MustCompile(`^baggage: k6\.test_run_id=4242, k6\.scenario=([0-9a-zA-Z_-]+), k6\.name=(http://[^ ,;%]+/[a-z]*\?vehicle_id=[0-9]+&city=berlin)\r$`)

// TestDriverWireFormat reads the driver's requests as raw bytes from a
// loopback socket, so that what is checked is what a server receives.
func TestDriverWireFormat(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	target := "http://" + ln.Addr().String()
	type seen struct{ path, line string }
	lines := make(chan seen, 100)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				close(lines)
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					req, err := r.ReadString('\n')
					if err != nil {
						return
					}
					path := strings.Fields(req)[1]
					var baggage []string
					for {
						h, err := r.ReadString('\n')
						if err != nil || h == "\r\n" {
							break
						}
						if strings.HasPrefix(strings.ToLower(h), "baggage:") {
							baggage = append(baggage, strings.TrimSuffix(h, "\n"))
						}
					}
					if len(baggage) != 1 {
						baggage = append(baggage, "(not exactly one baggage line)")
					}
					lines <- seen{path, baggage[0]}
					c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"))
				}
			}()
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
	for s := range lines {
		n++
		m := jslibLine.FindStringSubmatch(s.line)
		if m == nil {
			t.Fatalf("request %s: baggage line %q does not have the k6 helper's shape", s.path, s.line)
		}
		if m[2] != target+s.path {
			t.Errorf("k6.name %q is not the request's URL %q", m[2], target+s.path)
		}
		scenarios[m[1]] = true
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
