package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
)

// modelProfile is one uploaded CPU profile of a model Pyroscope server:
// stamped at the start of its window, with the labels its samples had.
type modelProfile struct {
	stamp  time.Time
	labels map[string]string
	cpu    time.Duration
}

// modelPyroscope is a server on 127.0.0.1 that answers SelectSeries,
// LabelValues and SelectMergeProfile (protobuf) from profiles as the
// recorded exchanges show Pyroscope does (fixtures README): a SelectSeries
// point is the end of a step on the grid from the window's start, holding
// the profiles stamped in (end − step, end], the first step reaching back
// before the start; SelectMergeProfile and LabelValues take the profiles
// stamped within the window. Not recorded: no local k6 run was.
//
// With now, a profile is there from its window's end (stamp + 30 s) on.
func modelPyroscope(t *testing.T, service string, profiles []modelProfile, now func() time.Time) string {
	t.Helper()
	type matcher struct {
		name, value string
		not         bool
	}
	parse := func(sel string) []matcher {
		var out []matcher
		s := strings.TrimSuffix(strings.TrimPrefix(sel, "{"), "}")
		for s != "" {
			i := strings.IndexAny(s, "!=")
			m := matcher{name: s[:i], not: s[i] == '!'}
			s = strings.TrimPrefix(s[i:], "!")[1:]
			q, err := strconv.QuotedPrefix(s)
			if err != nil {
				t.Errorf("selector %s: %v", sel, err)
				return nil
			}
			m.value, _ = strconv.Unquote(q)
			s = strings.TrimPrefix(s[len(q):], ",")
			out = append(out, m)
		}
		return out
	}
	selected := func(sel string) []modelProfile {
		var out []modelProfile
		for _, p := range profiles {
			ok := now == nil || !p.stamp.Add(30*time.Second).After(now())
			for _, m := range parse(sel) {
				v := p.labels[m.name]
				if m.name == "service_name" {
					v = service
				}
				ok = ok && (v == m.value) != m.not
			}
			if ok {
				out = append(out, p)
			}
		}
		return out
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch {
		case strings.HasSuffix(r.URL.Path, "/SelectSeries"):
			var req struct {
				Selector string   `json:"label_selector"`
				Start    int64    `json:"start"`
				End      int64    `json:"end"`
				GroupBy  []string `json:"group_by"`
				Step     float64  `json:"step"`
			}
			if err := json.Unmarshal(body, &req); err != nil {
				t.Error(err)
			}
			step := int64(req.Step * 1000)
			type series struct {
				labels []map[string]string
				points map[int64]float64
			}
			groups := map[string]*series{}
			for _, p := range selected(req.Selector) {
				ms := p.stamp.UnixMilli()
				if ms <= req.Start-step || ms > req.End {
					continue
				}
				k := (ms - req.Start + step - 1) / step
				if ms <= req.Start {
					k = 0
				}
				var key []string
				var ls []map[string]string
				for _, g := range req.GroupBy {
					if v := p.labels[g]; v != "" {
						key = append(key, g+"="+v)
						ls = append(ls, map[string]string{"name": g, "value": v})
					}
				}
				g := groups[strings.Join(key, ",")]
				if g == nil {
					g = &series{labels: ls, points: map[int64]float64{}}
					groups[strings.Join(key, ",")] = g
				}
				g.points[req.Start+k*step] += float64(p.cpu)
			}
			var out []map[string]any
			for _, g := range groups {
				var pts []map[string]any
				for _, ts := range slices.Sorted(func(yield func(int64) bool) {
					for ts := range g.points {
						if !yield(ts) {
							return
						}
					}
				}) {
					pts = append(pts, map[string]any{"value": g.points[ts], "timestamp": strconv.FormatInt(ts, 10)})
				}
				s := map[string]any{"points": pts}
				if len(g.labels) > 0 {
					s["labels"] = g.labels
				}
				out = append(out, s)
			}
			w.Header().Set("Content-Type", "application/json")
			if err := json.NewEncoder(w).Encode(map[string]any{"series": out}); err != nil {
				t.Error(err)
			}
		case strings.HasSuffix(r.URL.Path, "/LabelValues"):
			var req struct {
				Name       string   `json:"name"`
				Matchers   []string `json:"matchers"`
				Start, End int64
			}
			json.Unmarshal(body, &req)
			var names []string
			for _, p := range selected(strings.Join(req.Matchers, "")) {
				if ms := p.stamp.UnixMilli(); ms >= req.Start && ms <= req.End && p.labels[req.Name] != "" && !slices.Contains(names, p.labels[req.Name]) {
					names = append(names, p.labels[req.Name])
				}
			}
			w.Header().Set("Content-Type", "application/json")
			if err := json.NewEncoder(w).Encode(map[string]any{"names": names}); err != nil {
				t.Error(err)
			}
		case strings.HasSuffix(r.URL.Path, "/SelectMergeProfile"):
			// The protobuf request: field 2 the selector, 3 and 4 the window.
			sel, start, end := decodeMerge(t, body)
			var cpu time.Duration
			for _, p := range selected(sel) {
				if ms := p.stamp.UnixMilli(); ms >= start && ms <= end {
					cpu += p.cpu
				}
			}
			fn := &profile.Function{ID: 1, Name: "main.work"}
			loc := &profile.Location{ID: 1, Line: []profile.Line{{Function: fn}}}
			prof := &profile.Profile{SampleType: []*profile.ValueType{{Type: "cpu", Unit: "nanoseconds"}},
				PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"}, Period: 1e9, Function: []*profile.Function{fn}, Location: []*profile.Location{loc}}
			if cpu > 0 {
				prof.Sample = []*profile.Sample{{Location: []*profile.Location{loc}, Value: []int64{int64(cpu)}}}
			}
			w.Header().Set("Content-Type", "application/proto")
			prof.WriteUncompressed(w)
		default:
			http.Error(w, "no such method", http.StatusNotFound)
		}
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// decodeMerge returns the selector and window of a protobuf
// SelectMergeProfile request.
func decodeMerge(t *testing.T, b []byte) (string, int64, int64) {
	t.Helper()
	// A tiny protobuf reader: tag varints, then a string or a varint.
	varint := func() uint64 {
		var v uint64
		for s := uint(0); ; s += 7 {
			c := b[0]
			b = b[1:]
			v |= uint64(c&0x7f) << s
			if c < 0x80 {
				return v
			}
		}
	}
	var sel string
	var start, end int64
	for len(b) > 0 {
		tag := varint()
		switch tag >> 3 {
		case 1, 2:
			n := varint()
			if tag>>3 == 2 {
				sel = string(b[:n])
			}
			b = b[n:]
		case 3:
			start = int64(varint())
		case 4:
			end = int64(varint())
		default:
			varint()
		}
	}
	return sel, start, end
}

// k6JSON writes k6 json results of n requests to /car in scenario
// "default" from start to end.
func k6JSON(t *testing.T, start, end time.Time, n int) string {
	t.Helper()
	var b strings.Builder
	for i := range n {
		at := start.Add(end.Sub(start) * time.Duration(i) / time.Duration(n-1))
		fmt.Fprintf(&b, `{"metric":"http_reqs","type":"Point","data":{"time":%q,"value":1,"tags":{"name":"http://h:1/car","scenario":"default"}}}`+"\n", at.Format(time.RFC3339Nano))
	}
	path := filepath.Join(t.TempDir(), "run.json")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestPyroscopeLocalRuns: two plain local k6 runs 5 s apart (no test run
// id) behind one service with 30 s CPU windows. Run A sent requests from
// T+5s to T+65s; run B from T+70s to T+100s. The window of A's report is
// its own range: the profiles stamped T+30s and T+60s; the 5 s stamped at
// T (A's first seconds) and B's 2 s stamped at T+90s are reported in a
// note, not counted. A run in no profile stamped within its range is
// refused with why.
func TestPyroscopeLocalRuns(t *testing.T) {
	T := time.Date(2026, 12, 2, 18, 0, 0, 0, time.UTC)
	local := map[string]string{"k6_scenario": "default", "k6_name": "http://h:1/car"}
	profiles := []modelProfile{
		{T, local, 5 * time.Second},                       // A's first 25 s
		{T.Add(30 * time.Second), local, 6 * time.Second}, // A
		{T.Add(60 * time.Second), local, 3 * time.Second}, // A's last 5 s and B's first 20
		{T.Add(90 * time.Second), local, 2 * time.Second}, // B's last 10 s
		{T.Add(120 * time.Second), map[string]string{}, 10 * time.Millisecond},
	}
	url := modelPyroscope(t, "svc", profiles, nil)
	a := k6JSON(t, T.Add(5*time.Second), T.Add(65*time.Second), 600)
	code, out, errOut := pyrRun(t, "report", "--pyroscope", url, "--service", "svc", "--k6", a, "--format", "json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep struct {
		RunID string   `json:"test_run_id"`
		K6CPU float64  `json:"k6_cpu_seconds"`
		Notes []string `json:"notes"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.RunID != "(local run, no test run id)" || rep.K6CPU != 9 {
		t.Errorf("run %q, k6 CPU %v s; want the local run and 9 s (the profiles stamped T+30s and T+60s)", rep.RunID, rep.K6CPU)
	}
	const want = "a local k6 run's CPU (k6 labels, no test run id) is in profiles stamped outside this run's k6 results: 5.00s in the 30s before its first request, 2.00s in the 30s after its last. It is not counted"
	found := false
	for _, n := range rep.Notes {
		found = found || strings.HasPrefix(n, want) && strings.Contains(n, "K6_CLOUDRUN_TEST_RUN_ID")
	}
	if !found || !strings.Contains(errOut, "k6labels: warning: "+want) {
		t.Errorf("notes %q\nstderr %s", rep.Notes, errOut)
	}

	// A run of 10 s within one window: nothing is stamped within it.
	short := k6JSON(t, T.Add(35*time.Second), T.Add(45*time.Second), 100)
	code, _, errOut = pyrRun(t, "report", "--pyroscope", url, "--service", "svc", "--k6", short)
	if code != exitError || !strings.Contains(errOut, "no data: no profile of a local k6 run") || !strings.Contains(errOut, "6.00s of such CPU is in the profiles stamped in the 30s before it") {
		t.Errorf("exit %d: %s", code, errOut)
	}
}

// TestPyroscopeWaitsForEveryInstance: two instances behind one service,
// their 30 s windows 10 s apart. The run (T+5s to T+65s) ends in A's window
// stamped T+60s and in B's stamped T+50s; B's is uploaded at T+80s, A's at
// T+90s. A profile stamped after the run's end less 30 s is there from
// T+80s, but A's last window is not: the command waits for the window after
// A's previous one (stamped T+30s), and answers with all 7 s at T+90s.
func TestPyroscopeWaitsForEveryInstance(t *testing.T) {
	T := time.Date(2026, 12, 2, 18, 0, 0, 0, time.UTC)
	run := map[string]string{"k6_test_run_id": "r1", "k6_scenario": "default", "k6_name": "http://h:1/car"}
	at := func(s int) time.Time { return T.Add(time.Duration(s) * time.Second) }
	profiles := []modelProfile{
		{at(0), run, time.Second}, {at(30), run, 2 * time.Second}, {at(60), run, 500 * time.Millisecond}, // A
		{at(90), map[string]string{}, 10 * time.Millisecond},
		{at(-10), run, 500 * time.Millisecond}, {at(20), run, 2 * time.Second}, {at(50), run, time.Second}, // B
		{at(80), map[string]string{}, 10 * time.Millisecond},
	}
	sim := useSimClock(t, at(66))
	url := modelPyroscope(t, "svc", profiles, sim.Now)
	k6 := k6JSON(t, at(5), at(65), 600)
	code, out, errOut := pyrRun(t, "report", "--pyroscope", url, "--service", "svc", "--k6", k6, "--run-id", "r1", "--format", "json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep struct {
		K6CPU float64 `json:"k6_cpu_seconds"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.K6CPU != 7 || sim.Now().Before(at(90)) || strings.Contains(errOut, "warning") {
		t.Errorf("k6 CPU %v s at T+%s, want all 7 s, at T+90s or later, no warning; stderr:\n%s", rep.K6CPU, sim.Now().Sub(T), errOut)
	}
}
