package k6results

import (
	"bytes"
	"strings"
)

// wantsLatency tells whether a json line is to be decoded for its latency.
func (res *Results) wantsLatency(line []byte) bool {
	return res.keepLatency && (bytes.Contains(line, durationMarker) || bytes.Contains(line, waitingMarker))
}

// Latency holds k6's own timings of one row's requests, in milliseconds, one
// value per request as k6 wrote them: http_req_duration (sending, waiting
// and receiving) and http_req_waiting (time to first byte).
type Latency struct {
	Duration []float64
	Waiting  []float64
}

var (
	durationMarker = []byte(`"http_req_duration"`)
	waitingMarker  = []byte(`"http_req_waiting"`)
)

// addLatency keeps the value of an http_req_duration or http_req_waiting
// point under the rules of [Results.add].
func (res *Results) addLatency(metric, scenario, group, name string, value float64) {
	if scenario == "" || inGroup(group, "::setup") || inGroup(group, "::teardown") {
		return
	}
	if res.Latency == nil {
		res.Latency = map[Key]*Latency{}
	}
	k := Key{scenario, Name(name)}
	l := res.Latency[k]
	if l == nil {
		l = &Latency{}
		res.Latency[k] = l
	}
	if strings.HasSuffix(metric, "_duration") {
		l.Duration = append(l.Duration, value)
	} else {
		l.Waiting = append(l.Waiting, value)
	}
}

// isLatency tells whether metric is one that addLatency keeps.
func isLatency(metric string) bool {
	return metric == "http_req_duration" || metric == "http_req_waiting"
}

// csvCol returns the named column of a csv row, or "" when it has none.
func csvCol(rec []string, col map[string]int, name string) string {
	if i, ok := col[name]; ok && i < len(rec) {
		return rec[i]
	}
	return ""
}
