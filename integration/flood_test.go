package integration

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"github.com/k6labels/k6labels"
	"github.com/k6labels/k6labels/internal/profiletest"
)

// floodChildEnv, when set, makes TestCardinalityFlood run the flood itself
// (value "heap" or "profile") instead of starting child processes.
//
// The flood runs in a fresh process because the cardinality registry of
// k6labels is process-wide: in a process of its own the number of values it
// admits is exactly the cap, and the live heap measures only the flood.
const floodChildEnv = "K6LABELS_FLOOD_CHILD"

// TestCardinalityFlood sends requests whose k6.name is unique every time, as
// k6 does for untagged URLs with ids, to a real server over keep-alive
// connections, and checks that the labels never take more distinct values
// than the cap, that Stats().Overflowed accounts for every other request, and
// that the live heap stays flat.
//
// CI: 10^4 requests per child. -soak: 10^6 (heap) and 10^5 (profile).
func TestCardinalityFlood(t *testing.T) {
	if mode := os.Getenv(floodChildEnv); mode != "" {
		runFlood(t, mode)
		return
	}
	for _, mode := range []string{"heap", "profile"} {
		t.Run(mode, func(t *testing.T) {
			args := []string{"-test.run=^TestCardinalityFlood$", "-test.v=true", "-test.count=1", "-test.timeout=2h"}
			cmd := exec.CommandContext(t.Context(), os.Args[0], args...)
			cmd.Env = append(os.Environ(), floodChildEnv+"="+mode)
			if soak() {
				cmd.Env = append(cmd.Env, "K6LABELS_SOAK=1")
			}
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("flood child (%s) failed: %v\n%s", mode, err, out)
			}
			if !strings.Contains(string(out), "\nPASS") && !strings.HasPrefix(string(out), "PASS") {
				t.Fatalf("flood child (%s) did not pass:\n%s", mode, out)
			}
			for _, line := range strings.Split(string(out), "\n") {
				if strings.Contains(line, "flood:") {
					t.Log(strings.TrimSpace(line))
				}
			}
		})
	}
}

// floodName returns the i-th unique k6.name of a flood and the label value
// k6labels must give it when it is admitted: k6 names an untagged request by
// its full URL (the query string is dropped by default), and scripts choose
// free-form names with spaces, non-ASCII text or percent escapes.
func floodName(nonce string, i int) (sent, want string) {
	n := strconv.Itoa(i)
	switch i % 4 {
	case 0:
		s := "http://127.0.0.1/items/" + nonce + "/" + n
		return s, s
	case 1:
		s := "http://127.0.0.1/search/" + nonce + "-" + n
		return s + "?q=" + n + "&page=2#top", s
	case 2:
		s := "checkout step " + nonce + " #" + n + " – ünïcödé"
		return s, s
	default:
		return "order%20" + nonce + "%2F" + n, "order " + nonce + "/" + n
	}
}

// floodWork burns CPU so that the profile mode has samples to look at.
//
//go:noinline
func floodWork(iters int) uint64 {
	x := uint64(iters)
	for range iters {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}

func runFlood(t *testing.T, mode string) {
	const workers = 8
	limit := k6labels.DefaultMaxValuesPerLabel
	requests := pick(5_000, 1_000_000)
	work := 0
	if mode == "profile" {
		requests = pick(4_000, 100_000)
		work = 100_000 // some 50-100 µs per request: enough samples, modest run time
	}
	runID := "flood-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	nonce := strconv.FormatInt(time.Now().UnixNano(), 36)

	var (
		mu        sync.Mutex
		seen      = make(map[string]struct{}) // k6_name values the handler saw
		unlabeled atomic.Int64
		badOther  atomic.Int64
		sink      atomic.Uint64
	)
	h := k6labels.LabelsFromBaggageHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name, ok := pprof.Label(r.Context(), "k6_name")
		if !ok {
			if r.Header.Get("Baggage") != "" {
				unlabeled.Add(1)
			}
			return
		}
		if v, _ := pprof.Label(r.Context(), "k6_test_run_id"); v != runID {
			badOther.Add(1)
		}
		if v, _ := pprof.Label(r.Context(), "k6_scenario"); v != "flood" {
			badOther.Add(1)
		}
		if work > 0 {
			sink.Add(floodWork(work))
		}
		mu.Lock()
		if _, ok := seen[name]; !ok {
			seen[name] = struct{}{}
		}
		mu.Unlock()
		io.WriteString(w, name)
	}))
	srv := startServer(t, h, nil)
	client := newClient(workers, false)
	defer client.CloseIdleConnections()

	do := func(baggage string) (string, error) {
		req, err := http.NewRequest("GET", srv.URL+"/", nil)
		if err != nil {
			return "", err
		}
		if baggage != "" {
			req.Header["Baggage"] = []string{baggage}
		}
		resp, err := client.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("status %s", resp.Status)
		}
		return string(body), err
	}

	// Warm up connections, buffers and the server without k6 members, so
	// that the heap baseline holds them but nothing of the registry.
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range 200 {
				if _, err := do(""); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()

	var admitted, overflowed, wrong atomic.Int64
	flood := func() {
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				for i := w; i < requests; i += workers {
					sent, want := floodName(nonce, i)
					got, err := do("k6.test_run_id=" + runID + ", k6.scenario=flood, k6.name=" + sent)
					switch {
					case err != nil:
						t.Errorf("request %d: %v", i, err)
						return
					case got == want:
						admitted.Add(1)
					case got == k6labels.OverflowValue:
						overflowed.Add(1)
					default:
						if wrong.Add(1) <= 5 {
							t.Errorf("request %d: k6_name label %q, want %q or %q", i, got, want, k6labels.OverflowValue)
						}
					}
				}
			})
		}
		wg.Wait()
	}

	before := k6labels.Stats()
	heapBefore := liveHeap()
	start := time.Now()
	var prof *profile.Profile
	if mode == "profile" {
		prof = profiletest.Record(t, flood)
	} else {
		flood()
	}
	elapsed := time.Since(start)
	heapAfter := liveHeap()
	after := k6labels.Stats()
	if t.Failed() {
		t.FailNow()
	}

	mu.Lock()
	distinct := len(seen)
	_, sawOverflow := seen[k6labels.OverflowValue]
	mu.Unlock()
	if sawOverflow {
		distinct--
	}
	growth := int64(heapAfter) - int64(heapBefore)
	t.Logf("flood: mode=%s requests=%d distinct_k6_name=%d overflowed=%d cap=%d heap_before=%.2fMB heap_after=%.2fMB growth=%.2fMB elapsed=%s rate=%.0f/s",
		mode, requests, distinct, overflowed.Load(), limit,
		mb(heapBefore), mb(heapAfter), float64(growth)/(1<<20), elapsed.Round(time.Millisecond), float64(requests)/elapsed.Seconds())

	// In a fresh process the registry admits exactly the cap, then nothing.
	if got := admitted.Load(); got != int64(limit) {
		t.Errorf("%d requests kept their own k6_name, want exactly the cap %d", got, limit)
	}
	if distinct > limit {
		t.Errorf("handler saw %d distinct k6_name values, cap is %d", distinct, limit)
	}
	if int64(distinct) != admitted.Load() {
		t.Errorf("handler saw %d distinct values, clients saw %d admitted", distinct, admitted.Load())
	}
	if got, want := overflowed.Load(), int64(requests-limit); got != want {
		t.Errorf("%d requests got %q, want %d", got, k6labels.OverflowValue, want)
	}
	if d := after.Overflowed - before.Overflowed; d != uint64(overflowed.Load()) {
		t.Errorf("Stats().Overflowed grew by %d, but %d requests were overflowed", d, overflowed.Load())
	}
	if d := after.Labelled - before.Labelled; d != uint64(requests) {
		t.Errorf("Stats().Labelled grew by %d, want %d", d, requests)
	}
	if n := unlabeled.Load(); n > 0 {
		t.Errorf("%d requests with k6 baggage had no k6_name label", n)
	}
	if n := badOther.Load(); n > 0 {
		t.Errorf("%d requests had a wrong k6_test_run_id or k6_scenario label", n)
	}
	if mode == "heap" && growth >= 5<<20 {
		t.Errorf("live heap grew by %.2f MB over %d requests, want < 5 MB", float64(growth)/(1<<20), requests)
	}

	if prof != nil {
		profiletest.CheckLabels(t, prof, k6labels.DefaultMaxValueBytes)
		values := make(map[string]struct{})
		var labelled int64 // samples, not records: pprof merges those by stack and labels
		for _, s := range profiletest.Samples(prof, "floodWork") {
			v := profiletest.Labels(s)["k6_name"]
			if v == "" {
				t.Errorf("a floodWork sample has no k6_name label: %v", profiletest.Labels(s))
				continue
			}
			labelled += s.Value[0]
			values[v] = struct{}{}
		}
		// Also count every sample of the process, not only floodWork's.
		for _, s := range prof.Sample {
			if v := profiletest.Labels(s)["k6_name"]; v != "" {
				values[v] = struct{}{}
			}
		}
		t.Logf("flood: profile samples_in_handler=%d distinct_k6_name_in_profile=%d", labelled, len(values))
		if labelled == 0 {
			t.Error("the CPU profile has no labelled sample of floodWork")
		}
		if len(values) > limit+1 {
			t.Errorf("the CPU profile has %d distinct k6_name values, want at most %d (cap + %q)", len(values), limit+1, k6labels.OverflowValue)
		}
	}
	srv.stop(t)
}

// liveHeap returns the bytes of live heap objects after a full collection.
func liveHeap() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

func mb(n uint64) float64 { return float64(n) / (1 << 20) }
