package k6labels

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// jslibHeader is what k6's http-instrumentation-pyroscope sends.
const jslibHeader = "k6.test_run_id=123456, k6.scenario=default, k6.name=http://localhost:5000/bike?id=3"

func benchmarkHandler(b *testing.B, lines []string) {
	h := LabelsFromBaggageHandler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	r := httptest.NewRequest("GET", "/bike?id=3", nil)
	if lines != nil {
		r.Header["Baggage"] = lines
	}
	w := httptest.NewRecorder()
	b.ReportAllocs()
	for b.Loop() {
		h.ServeHTTP(w, r)
	}
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
	b.Run("Members64", func(b *testing.B) { benchmarkHandler(b, []string{strings.Join(many, ", ")}) })
}
