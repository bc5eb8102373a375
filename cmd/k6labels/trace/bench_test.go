package trace

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"runtime"
	rtrace "runtime/trace"
	"strconv"
	"sync"
	"testing"

	"github.com/k6labels/k6labels"
	"github.com/k6labels/k6labels/cmd/k6labels/report"
)

// benchTrace is a trace of 60,000 labelled requests (30 s at 2,000
// requests/s) served over 127.0.0.1 by four clients, with 40 names in 2
// scenarios, made once.
var benchTrace = sync.OnceValues(func() ([]byte, error) {
	const requests = 60_000
	srv := httptest.NewServer(k6labels.NewHandler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { burn(2000) })))
	defer srv.Close()
	var buf bytes.Buffer
	if err := rtrace.Start(&buf); err != nil {
		return nil, err
	}
	var wg sync.WaitGroup
	for c := range 4 {
		wg.Go(func() {
			client := &http.Client{Transport: &http.Transport{}}
			defer client.CloseIdleConnections()
			for i := range requests / 4 {
				req, _ := http.NewRequest("GET", srv.URL+"/", nil)
				req.Header.Set("Baggage", "k6.test_run_id=1,k6.scenario=s"+strconv.Itoa(c%2)+",k6.name=/route/"+strconv.Itoa(i%40))
				resp, err := client.Do(req)
				if err != nil {
					return
				}
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	rtrace.Stop()
	return buf.Bytes(), nil
})

// BenchmarkRead is the command's cost on a 30 s trace at 2,000 requests/s:
// time per trace, "MB-trace" its size, "B-trace/req" its bytes per request,
// and "MB-heap" the live heap after reading it (the measures of all
// requests and rows; the events are streamed, not kept).
func BenchmarkRead(b *testing.B) {
	data, err := benchTrace()
	if err != nil {
		b.Skip("the execution tracer is busy:", err)
	}
	var tr *Trace
	for b.Loop() {
		if tr, err = Read(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
	rows := tr.Rows(report.AllGroupings, 3)
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(len(data))/1e6, "MB-trace")
	b.ReportMetric(float64(len(data))/float64(len(tr.Requests)), "B-trace/req")
	b.ReportMetric(float64(ms.HeapAlloc-uint64(len(data)))/1e6, "MB-heap")
	b.ReportMetric(float64(len(tr.Requests)), "requests")
	runtime.KeepAlive(rows)
}
