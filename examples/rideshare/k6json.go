package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"
)

// k6JSON writes each response the driver got as the http_reqs point that
// k6 run --out json=FILE writes for it, so that k6labels reads the
// driver's load as k6 results (what the CI recipe's local script does
// without k6).
type k6JSON struct {
	mu  sync.Mutex
	f   *os.File
	w   *bufio.Writer
	err error
}

func createK6JSON(path string) (*k6JSON, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("-k6-json: %w", err)
	}
	return &k6JSON{f: f, w: bufio.NewWriter(f)}, nil
}

// k6Point is one line of k6's json output.
type k6Point struct {
	Metric string `json:"metric"`
	Type   string `json:"type"`
	Data   struct {
		Time  time.Time         `json:"time"`
		Value float64           `json:"value"`
		Tags  map[string]string `json:"tags"`
	} `json:"data"`
}

// point writes the http_reqs point of one response to url in scenario,
// tagged as k6 tags it: name is the URL (no tags.name in the script).
func (k *k6JSON) point(scenario, url string, at time.Time) {
	var p k6Point
	p.Metric, p.Type = "http_reqs", "Point"
	p.Data.Time, p.Data.Value = at, 1
	p.Data.Tags = map[string]string{"method": "GET", "name": url, "url": url, "scenario": scenario, "status": "200", "proto": "HTTP/1.1", "expected_response": "true"}
	b, err := json.Marshal(p)
	k.mu.Lock()
	defer k.mu.Unlock()
	if err == nil {
		_, err = k.w.Write(append(b, '\n'))
	}
	if k.err == nil {
		k.err = err
	}
}

// close flushes and closes the file, returning the first error.
func (k *k6JSON) close() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if err := k.w.Flush(); k.err == nil {
		k.err = err
	}
	if err := k.f.Close(); k.err == nil {
		k.err = err
	}
	return k.err
}
