package main

import (
	"bytes"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"runtime"
	"testing"

	"github.com/google/pprof/profile"
)

// uploadProfile is a CPU profile as pyroscope-go uploads it: samples
// stacks of 4 frames each, 10 ms of CPU each, labelled with
// k6_name=<prefix><i>.
func uploadProfile(samples int, prefix string) *profile.Profile {
	fn := func(id uint64) *profile.Function {
		return &profile.Function{ID: id, Name: fmt.Sprintf("main.f%d", id), SystemName: fmt.Sprintf("main.f%d", id)}
	}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"}, Period: 1e7,
	}
	for i := range uint64(8) {
		f := fn(i + 1)
		p.Function = append(p.Function, f)
		p.Location = append(p.Location, &profile.Location{ID: i + 1, Address: 0x1000 + i, Line: []profile.Line{{Function: f, Line: int64(i)}}})
	}
	for i := range samples {
		loc := make([]*profile.Location, 4)
		for j := range loc {
			loc[j] = p.Location[(i+j)%len(p.Location)]
		}
		p.Sample = append(p.Sample, &profile.Sample{
			Location: loc,
			Value:    []int64{1, 1e7},
			Label:    map[string][]string{"k6_name": {fmt.Sprintf("%s%d", prefix, i)}, "k6_scenario": {"rush_hour"}},
		})
	}
	return p
}

// uploadRequest is one pyroscope-go upload of p to ingest.
func uploadRequest(t *testing.T, ingest string, p *profile.Profile) *http.Request {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, err := mw.CreateFormFile("profile", "profile.pprof")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Write(fw); err != nil {
		t.Fatal(err)
	}
	mw.Close()
	req, err := http.NewRequest(http.MethodPost, ingest+"/ingest?name=rideshare.test", &body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	return req
}

// liveHeap returns the live heap after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestPushMemoryBounded sends 60 uploads of 1,500 samples through the
// pusher, as pyroscope-go sends one every 15 s (15 minutes of -serve),
// to a local ingest stand-in that discards them, and bounds the live heap
// that stays: -serve keeps no profile (each upload has labels of its own,
// the worst case: kept, they would hold about 80 MB), and the demo's run
// keeps one merged copy that does not grow with uploads of the same stacks
// and labels, whose CPU it sums exactly.
func TestPushMemoryBounded(t *testing.T) {
	ingest := startIngest(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
	}))
	const uploads, samples = 60, 1500
	for _, c := range []struct {
		name    string
		keepCPU bool
	}{{"serve", false}, {"run", true}} {
		t.Run(c.name, func(t *testing.T) {
			push, err := startPush(ingest, "rideshare.test", nil, c.keepCPU)
			if err != nil {
				t.Fatal(err)
			}
			before := liveHeap()
			var peak uint64
			for i := range uploads {
				prefix := "/same/"
				if !c.keepCPU {
					prefix = fmt.Sprintf("/upload%d/", i)
				}
				resp, err := push.tee.Do(uploadRequest(t, ingest, uploadProfile(samples, prefix)))
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if i%20 == 19 {
					peak = max(peak, liveHeap())
				}
			}
			const bound = 8 << 20
			t.Logf("live heap after %d uploads: %+.1f MB", uploads, float64(int64(peak)-int64(before))/1e6)
			if grown := int64(peak) - int64(before); grown > bound {
				t.Errorf("after %d uploads the live heap grew by %d MB, want at most %d MB", uploads, grown>>20, bound>>20)
			}
			ok, failed, perr := push.tee.status()
			if ok < uploads || failed != 0 {
				t.Errorf("%d uploads accepted, %d failed (%v), want %d or more accepted", ok, failed, perr, uploads)
			}
			p, err := push.stop()
			if err != nil {
				t.Fatal(err)
			}
			if !c.keepCPU {
				if p != nil {
					t.Errorf("-serve kept a profile of %d samples", len(p.Sample))
				}
				return
			}
			var cpu int64
			for _, s := range p.Sample {
				if len(s.Label["k6_name"]) > 0 && s.Label["k6_name"][0][:6] == "/same/" {
					cpu += s.Value[1]
				}
			}
			if want := int64(uploads * samples * 1e7); cpu != want {
				t.Errorf("the merged copy holds %d ns of the uploads' CPU, want %d", cpu, want)
			}
		})
	}
}
