package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/k6labels/k6labels/internal/profiletest"
)

// ingestServer is a stand-in for a Pyroscope server's push endpoint, with
// what pyroscope-go (v1.5 upstream/remote) sends: POST <address>/ingest with
// the application in the "name" query parameter and a multipart/form-data
// body whose "profile" part holds the pprof data.
type ingestServer struct {
	mu    sync.Mutex
	names []string
	cpu   []*profile.Profile
	other int // non-CPU profiles (heap)
	bad   []string
}

func (s *ingestServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fail := func(msg string) {
		s.bad = append(s.bad, msg)
		http.Error(w, msg, http.StatusBadRequest)
	}
	if r.Method != http.MethodPost || r.URL.Path != "/ingest" {
		fail("unexpected " + r.Method + " " + r.URL.Path)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		fail(err.Error())
		return
	}
	data, err := uploadedProfile(r.Header.Get("Content-Type"), body)
	if err != nil {
		fail("no profile part: " + err.Error())
		return
	}
	p, err := profile.ParseData(data)
	if err != nil {
		fail("profile part is not pprof: " + err.Error())
		return
	}
	s.names = append(s.names, r.URL.Query().Get("name"))
	if p.SampleType[cpuIndex(p)].Type == "cpu" {
		s.cpu = append(s.cpu, p)
	} else {
		s.other++
	}
}

// TestPushToPyroscope pushes with the real pyroscope-go client, as
// `-pyroscope URL` does, while the demo's load runs, and checks what a
// Pyroscope server would receive.
func TestPushToPyroscope(t *testing.T) {
	ingest := &ingestServer{}
	ingestURL := startIngest(t, ingest)

	push, err := startPush(ingestURL, "rideshare.test", nil, true)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := startServer("127.0.0.1:0", newService())
	if err != nil {
		t.Fatal(err)
	}
	d := newDriver(srv.URL, testRunID, defaultScenarios)
	d.maxRequests = 250 // about 1 s of CPU
	d.run(context.Background())
	srv.Close()
	local, err := push.stop()
	if err != nil {
		t.Fatal(err)
	}
	if err := d.err(); err != nil {
		t.Fatalf("load: %v", err)
	}

	ingest.mu.Lock()
	defer ingest.mu.Unlock()
	if len(ingest.bad) > 0 {
		t.Fatalf("bad uploads: %v", ingest.bad)
	}
	if len(ingest.cpu) == 0 {
		t.Fatalf("no CPU profile uploaded (%d other profiles)", ingest.other)
	}
	for _, n := range ingest.names {
		if !strings.HasPrefix(n, "rideshare.test") {
			t.Errorf("upload for application %q, want rideshare.test{...}", n)
		}
	}
	ok, failed, perr := push.tee.status()
	if failed > 0 || ok == 0 {
		t.Errorf("pusher saw %d uploads accepted, %d failed, first error %v", ok, failed, perr)
	}

	received, err := profile.Merge(ingest.cpu)
	if err != nil {
		t.Fatal(err)
	}
	// Every label name Pyroscope would get is valid, and the handlers'
	// samples carry the three k6 labels with the values the driver sent.
	profiletest.CheckLabels(t, received, 256)
	work := profiletest.Samples(received, ".findNearestVehicle")
	if len(work) == 0 {
		t.Fatal("no samples of handler work uploaded")
	}
	scenarios := map[string]int{}
	for _, s := range work {
		l := profiletest.Labels(s)
		if l[labelRunID] != testRunID || !strings.HasPrefix(l[labelName], srv.URL+"/") || l[labelScenario] == "" {
			t.Fatalf("uploaded sample in a handler with labels %v", l)
		}
		scenarios[l[labelScenario]]++
	}
	if len(scenarios) != len(defaultScenarios) {
		t.Errorf("uploaded samples cover scenarios %v, want all of %v", scenarios, defaultScenarios)
	}

	// The local report in push mode is built from the very profiles sent.
	if got, want := len(local.Sample), len(received.Sample); got != want {
		t.Errorf("local copy has %d samples, the server got %d", got, want)
	}
}

// TestUploadProgress checks that each upload's outcome is written as it
// happens, before the pusher stops: an accepting server, then one that
// rejects every upload as Pyroscope does a profile with an invalid label name.
func TestUploadProgress(t *testing.T) {
	for _, c := range []struct {
		name   string
		status int
		want   string
	}{
		{"accepted", http.StatusOK, "CPU profile upload accepted ("},
		{"rejected", http.StatusUnprocessableEntity, "CPU profile upload failed: POST "},
	} {
		t.Run(c.name, func(t *testing.T) {
			ingest := &ingestServer{}
			ingestURL := startIngest(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if c.status != http.StatusOK {
					http.Error(w, "invalid label name", c.status)
					return
				}
				ingest.ServeHTTP(w, r)
			}))
			progress := newSyncBuffer()
			push, err := startPush(ingestURL, "progress.test", progress, false)
			if err != nil {
				t.Fatal(err)
			}
			defer push.profiler.Stop()
			profiletest.Burn(10_000_000)
			push.profiler.Flush(true) // uploads now and waits for the uploads
			got := progress.String()
			if !strings.Contains(got, c.want) {
				t.Fatalf("progress after the first uploads:\n%s\nwant a line with %q", got, c.want)
			}
			ok, failed, _ := push.tee.status()
			if last := strings.Count(got, "\n"); last != ok+failed {
				t.Errorf("%d progress lines for %d uploads:\n%s", last, ok+failed, got)
			}
			if c.status != http.StatusOK && !strings.Contains(got, "/ingest: 422 Unprocessable Entity") {
				t.Errorf("the failure does not name endpoint and status:\n%s", got)
			}
		})
	}
}
