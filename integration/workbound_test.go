package integration

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/k6labels/k6labels"
)

// The work per request must not grow with the header once it is past the
// limits (MaxBaggageBytes, MaxBaggageMembers): the parser stops there. The
// benchmarks show the time per request for headers of 1 KB (inside the
// limits), 8 KB (at the byte limit), 64 KB and 1 MB, in four shapes; run
//
//	go test -run '^$' -bench WorkBound -benchmem ./integration
//
// TestWorkBoundAllocs checks a deterministic proxy of the same property in
// every `make test`: the allocations per request are the same at 8 KB, 64 KB
// and 1 MB. (Timings are never asserted: the machines are shared.)

var workBoundSizes = []struct {
	name string
	n    int
}{{"1KB", 1 << 10}, {"8KB", 8 << 10}, {"64KB", 64 << 10}, {"1MB", 1 << 20}}

const workBoundPrefix = "k6.test_run_id=bench, k6.scenario=bench, k6.name=/items/1"

// workBoundHeader returns baggage header lines of about n bytes in total, in
// the given shape. Each starts with the three members k6 sends.
func workBoundHeader(shape string, n int) []string {
	switch shape {
	case "members": // one line, many small members (other keys)
		var sb strings.Builder
		sb.WriteString(workBoundPrefix)
		for i := 0; sb.Len() < n; i++ {
			sb.WriteString(", key" + strconv.Itoa(i) + "=value" + strconv.Itoa(i))
		}
		return []string{sb.String()[:n]}
	case "value": // one line whose last member is one huge value (not a k6 one, so that
		// the 8 KB header, which fits the budget, makes the same labels as the larger ones)
		return []string{workBoundPrefix + ", other=" + strings.Repeat("x", max(0, n-len(workBoundPrefix)-8))}
	case "lines": // many header lines of 64 bytes
		lines := []string{workBoundPrefix}
		for total := len(workBoundPrefix); total < n; total += 64 {
			lines = append(lines, "pad="+strings.Repeat("p", 60))
		}
		return lines
	case "emptyLines": // many empty header lines ("Baggage:" with nothing), as HTTP/1.1 allows
		lines := []string{workBoundPrefix}
		for total := len(workBoundPrefix); total < n; total += len("Baggage:\r\n") {
			lines = append(lines, "")
		}
		return lines
	}
	panic("unknown shape " + shape)
}

var workBoundShapes = []string{"members", "value", "lines", "emptyLines"}

func BenchmarkWorkBound(b *testing.B) {
	own := ownRegistry()
	labeler := k6labels.NewLabeler(own)
	handler := k6labels.NewHandler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}), own)
	for _, shape := range workBoundShapes {
		for _, size := range workBoundSizes {
			lines := workBoundHeader(shape, size.n)
			b.Run(shape+"/"+size.name+"/Labeler", func(b *testing.B) {
				ctx := context.Background()
				b.ReportAllocs()
				for b.Loop() {
					labeler.Context(ctx, lines)
				}
			})
			b.Run(shape+"/"+size.name+"/Handler", func(b *testing.B) {
				r := httptest.NewRequest("GET", "/items/1", nil)
				r.Header["Baggage"] = lines
				w := httptest.NewRecorder()
				b.ReportAllocs()
				for b.Loop() {
					handler.ServeHTTP(w, r)
				}
			})
		}
	}
}

func TestWorkBoundAllocs(t *testing.T) {
	own := ownRegistry()
	labeler := k6labels.NewLabeler(own)
	handler := k6labels.NewHandler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}), own)
	for _, shape := range workBoundShapes {
		var first float64
		for i, size := range workBoundSizes[1:] { // from 8 KB on: at or past the limit
			lines := workBoundHeader(shape, size.n)
			ctx := context.Background()
			r := httptest.NewRequest("GET", "/items/1", nil)
			r.Header["Baggage"] = lines
			w := httptest.NewRecorder()
			var got context.Context
			allocs := testing.AllocsPerRun(50, func() {
				got = labeler.Context(ctx, lines)
				handler.ServeHTTP(w, r)
			})
			if len(k6labels.Members(got)) == 0 {
				t.Errorf("%s/%s: the k6 members in front were lost", shape, size.name)
			}
			if i == 0 {
				first = allocs
				continue
			}
			if allocs != first {
				t.Errorf("%s: %v allocations per request at %s, %v at %s: work grows with the header",
					shape, allocs, size.name, first, workBoundSizes[1].name)
			}
		}
	}
}
