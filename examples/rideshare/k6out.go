package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"runtime/pprof"
	"sync"
	"time"
)

// k6JSON writes the driver's requests as k6 run --out json=FILE writes them:
// the http_reqs Metric line, then one Point line per response, with the tags
// k6 sets (scenario, name = the URL when the script sets no tags.name, ...).
// k6labels report --k6 reads it as it reads k6's own file.
type k6JSON struct {
	mu   sync.Mutex
	f    *os.File
	w    *bufio.Writer
	err  error
	path string
}

// k6Point is one line of k6's json output.
type k6Point struct {
	Metric string      `json:"metric"`
	Type   string      `json:"type"`
	Data   k6PointData `json:"data"`
}

type k6PointData struct {
	Time  time.Time         `json:"time"`
	Value float64           `json:"value"`
	Tags  map[string]string `json:"tags"`
}

// createK6JSON creates path (replacing a file there) and writes the Metric line.
func createK6JSON(path string) (*k6JSON, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("-k6-out: %w", err)
	}
	k := &k6JSON{f: f, w: bufio.NewWriter(f), path: path}
	_, k.err = k.w.WriteString(`{"type":"Metric","data":{"name":"http_reqs","type":"counter","contains":"default","thresholds":[],"submetrics":null},"metric":"http_reqs"}` + "\n")
	return k, nil
}

// request records one response to a GET of url in scenario.
func (k *k6JSON) request(t time.Time, scenario, url, proto string, status int) {
	line, err := json.Marshal(k6Point{Metric: "http_reqs", Type: "Point", Data: k6PointData{
		Time: t.UTC(), Value: 1,
		Tags: map[string]string{
			"expected_response": fmt.Sprint(status >= 200 && status < 400),
			"group":             "", "method": "GET", "name": url, "url": url,
			"proto": proto, "scenario": scenario, "status": fmt.Sprint(status),
		},
	}})
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.err == nil {
		k.err = err
	}
	if k.err == nil {
		_, k.err = k.w.Write(append(line, '\n'))
	}
}

// close flushes and closes the file, returning the first error.
func (k *k6JSON) close() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.err == nil {
		k.err = k.w.Flush()
	}
	if err := k.f.Close(); k.err == nil {
		k.err = err
	}
	if k.err != nil {
		return fmt.Errorf("-k6-out %s: %w", k.path, k.err)
	}
	return nil
}

// startCPUProfile profiles this process's CPU into a new file at path; stop
// ends the profile and closes the file.
func startCPUProfile(path string) (stop func() error, err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("-cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("-cpuprofile: %w", err)
	}
	return func() error {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			return fmt.Errorf("-cpuprofile %s: %w", path, err)
		}
		return nil
	}, nil
}
