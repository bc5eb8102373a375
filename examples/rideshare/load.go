package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// A scenario is what a k6 scenario with constant VUs does: each virtual user
// requests the paths in turn, as fast as responses come back.
type scenario struct {
	name  string // a k6 scenario name: [0-9a-zA-Z_-]+
	vus   int
	paths []string
}

// defaultScenarios are the load of the demo and of load.js. Cars are ordered
// only at rush hour and bikes only off-peak, so a sample in the car handler
// must carry k6_scenario=rush_hour and one in the bike handler off_peak.
var defaultScenarios = []scenario{
	{name: "rush_hour", vus: 2, paths: []string{"/car", "/scooter", "/car"}},
	{name: "off_peak", vus: 1, paths: []string{"/bike", "/scooter", "/"}},
}

// baggageHeader returns the baggage header value that k6's
// http-instrumentation-pyroscope helper 1.0.2 adds to a request: three
// members joined with "," (no space), nothing percent-encoded, so a
// tags.name of "order bike" goes out as k6.name=order bike. name is the
// request's tags.name or, when the script sets none, the full URL with its
// query string. (A script's own baggage members would come first; the demo
// sets none. Helper 1.0.1 joined with ", ", which k6labels also accepts.)
func baggageHeader(testRunID, scenario, name string) string {
	return "k6.test_run_id=" + testRunID + ",k6.scenario=" + scenario + ",k6.name=" + name
}

// driver sends k6-style load to a service. Counters are safe to read while it
// runs.
type driver struct {
	target      string // base URL of the service
	testRunID   string
	scenarios   []scenario
	maxRequests int64   // send this many requests in all, then stop; 0 = no limit
	k6out       *k6JSON // if not nil, every response is written to it as k6 would

	client *http.Client
	// ok[i][j] counts successful responses to scenarios[i].paths[j]'s path,
	// by index into scenarios[i].paths.
	ok       [][]atomic.Int64
	total    atomic.Int64 // successful responses
	started  atomic.Int64 // requests started (for maxRequests)
	errs     atomic.Int64
	firstErr atomic.Pointer[error]
	latency  *latencies // if not nil, each response's latency by path
}

func newDriver(target, testRunID string, scenarios []scenario) *driver {
	vus := 0
	d := &driver{target: target, testRunID: testRunID, scenarios: scenarios}
	d.ok = make([][]atomic.Int64, len(scenarios))
	for i, s := range scenarios {
		d.ok[i] = make([]atomic.Int64, len(s.paths))
		vus += s.vus
	}
	// One keep-alive connection per VU, as k6 does: the server then serves
	// request after request on the same goroutine, which is where labels
	// left behind by one request would leak into the next.
	d.client = &http.Client{
		Transport: &http.Transport{MaxIdleConnsPerHost: vus, MaxConnsPerHost: vus},
		Timeout:   30 * time.Second,
	}
	return d
}

// run sends requests until ctx ends or maxRequests requests were sent. With
// maxRequests, every request sent is waited for, so the work the service did
// is exactly the work counted.
func (d *driver) run(ctx context.Context) {
	var wg sync.WaitGroup
	for i, s := range d.scenarios {
		for vu := range s.vus {
			wg.Go(func() { d.vu(ctx, i, vu) })
		}
	}
	wg.Wait()
	d.client.CloseIdleConnections()
}

func (d *driver) vu(ctx context.Context, si, vu int) {
	s := d.scenarios[si]
	for iter := 0; ctx.Err() == nil; iter++ {
		if d.maxRequests > 0 && d.started.Add(1) > d.maxRequests {
			return
		}
		pi := iter % len(s.paths)
		// A query string as real clients send, different on each request:
		// k6 names the request by this raw URL.
		url := d.target + s.paths[pi] + "?vehicle_id=" + strconv.Itoa(vu*1_000_000+iter) + "&city=berlin"
		t0 := time.Now()
		err := d.get(ctx, s.name, url)
		switch {
		case err == nil:
			if d.latency != nil {
				d.latency.add(s.paths[pi], time.Since(t0))
			}
			d.ok[si][pi].Add(1)
			d.total.Add(1)
		case ctx.Err() != nil:
			return
		default:
			d.errs.Add(1)
			d.firstErr.CompareAndSwap(nil, &err)
			// Back off so that a service that is down is not hammered.
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
}

func (d *driver) get(ctx context.Context, scenario, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	// k6 sets request headers with Header.Set: on the wire the helper's
	// header is "Baggage:", in canonical case, as here.
	req.Header.Set("Baggage", baggageHeader(d.testRunID, scenario, url))
	resp, err := d.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return err
	}
	if d.k6out != nil {
		d.k6out.request(time.Now(), scenario, url, resp.Proto, resp.StatusCode)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return nil
}

// err returns the first request error, if any.
func (d *driver) err() error {
	if p := d.firstErr.Load(); p != nil {
		return *p
	}
	return nil
}

// counts is a snapshot of successful responses.
type counts struct {
	total      int64
	byScenario map[string]int64
	byPath     map[string]int64            // path → responses
	bySP       map[string]map[string]int64 // scenario → path → responses
}

func (d *driver) counts() counts {
	c := counts{
		total:      d.total.Load(),
		byScenario: make(map[string]int64),
		byPath:     make(map[string]int64),
		bySP:       make(map[string]map[string]int64),
	}
	for i, s := range d.scenarios {
		if c.bySP[s.name] == nil {
			c.bySP[s.name] = make(map[string]int64)
		}
		for j, p := range s.paths {
			n := d.ok[i][j].Load()
			c.byScenario[s.name] += n
			c.byPath[p] += n
			c.bySP[s.name][p] += n
		}
	}
	return c
}

// errNoResponses is returned when a run got no response at all.
var errNoResponses = errors.New("no request succeeded")
