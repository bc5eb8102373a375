package k6labels

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// jslibHeader is what k6's http-instrumentation-pyroscope 1.0.2 sends.
const jslibHeader = "k6.test_run_id=123456,k6.scenario=default,k6.name=http://localhost:5000/bike?id=3"

func benchmarkHandler(b *testing.B, lines []string) {
	benchmarkHandlerLines(b, [][]string{lines})
}

// benchmarkHandlerLines serves one request per loop, whose Baggage header
// is each of lines in turn (nil: none, for a single entry).
func benchmarkHandlerLines(b *testing.B, lines [][]string) {
	h := LabelsFromBaggageHandler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	r := httptest.NewRequest("GET", "/bike?id=3", nil)
	if lines[0] != nil {
		r.Header["Baggage"] = lines[0]
	}
	w := httptest.NewRecorder()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if len(lines) > 1 {
			r.Header["Baggage"] = lines[i]
		}
		h.ServeHTTP(w, r)
		if i++; i == len(lines) {
			i = 0
		}
	}
}

// perRequest returns n one-line headers, line(i) for each i.
func perRequest(n int, line func(i int) string) [][]string {
	out := make([][]string, n)
	for i := range out {
		out[i] = []string{line(i)}
	}
	return out
}

func BenchmarkHandler(b *testing.B) {
	var many []string
	for i := range 64 {
		many = append(many, "k6.m"+strconv.Itoa(i)+"=value"+strconv.Itoa(i))
	}
	b.Run("NoHeader", func(b *testing.B) { benchmarkHandler(b, nil) })
	b.Run("NonK6", func(b *testing.B) {
		benchmarkHandler(b, []string{"userId=alice,serverNode=DF%2028,isProduction=false"})
	})
	b.Run("Jslib", func(b *testing.B) { benchmarkHandler(b, []string{jslibHeader}) })
	b.Run("Members64", func(b *testing.B) { benchmarkHandler(b, []string{strings.Join(many, ",")}) })
	// k6's default names: a new ?id= per request (served from the line of
	// the URL without it), or a new path per request (a new line each time).
	b.Run("NewID", func(b *testing.B) {
		benchmarkHandlerLines(b, perRequest(1<<14, func(i int) string { return jslibHeader + strconv.Itoa(i) }))
	})
	b.Run("NewPath", func(b *testing.B) {
		benchmarkHandlerLines(b, perRequest(1<<16, func(i int) string { return names(1)[0] + "/" + strconv.Itoa(i) }))
	})
	b.Run("NewPathID", func(b *testing.B) {
		benchmarkHandlerLines(b, perRequest(1<<16, func(i int) string {
			return names(1)[0] + "/" + strconv.Itoa(i) + "?id=" + strconv.Itoa(i)
		}))
	})
}

// names returns n jslib headers, each with a k6.name of its own.
func names(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = "k6.test_run_id=123456,k6.scenario=default,k6.name=http://localhost:5000/bike/" + strconv.Itoa(i)
	}
	return out
}

// BenchmarkLabelsNames labels headers with n distinct k6.name values in
// turn through Labeler.Labels, and reports the share of them that the line
// cache does not hold after two warm rounds ("miss/line"): those are parsed
// again on every request.
func BenchmarkLabelsNames(b *testing.B) {
	for _, n := range []int{100, 500, 1000} {
		b.Run("names="+strconv.Itoa(n), func(b *testing.B) {
			l := NewLabeler(WithRegistry(NewRegistry(0)))
			lines := names(n)
			ctx := context.Background()
			for range 2 {
				for _, line := range lines {
					l.Labels(ctx, []string{line})
				}
			}
			missed := uncached(l, lines)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, ok := l.Labels(ctx, lines[i:i+1]); !ok {
					b.Fatal("not labelled")
				}
				if i++; i == n {
					i = 0
				}
			}
			b.ReportMetric(float64(missed)/float64(n), "miss/line")
		})
	}
}

// uncached returns how many of lines l's line cache does not hold.
func uncached(l *Labeler, lines []string) int {
	cfg := l.config()
	n := 0
	for _, line := range lines {
		if cfg.reg().lines.Get(cfg.key, line) == nil {
			n++
		}
	}
	return n
}

// BenchmarkCounters counts one labelled request from every P at once (run
// with -cpu 1,2,4,8): "striped" is the Registry's counters, "shared" one
// atomic counter that every core writes, for comparison.
func BenchmarkCounters(b *testing.B) {
	b.Run("impl=striped", func(b *testing.B) {
		r := NewRegistry(0)
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				r.counts.Add(true, 0, 0, false)
			}
		})
		if got := r.Stats().Labelled; got != uint64(b.N) {
			b.Fatalf("counted %d, want %d", got, b.N)
		}
	})
	b.Run("impl=shared", func(b *testing.B) {
		var n atomic.Uint64
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				n.Add(1)
			}
		})
	})
}
