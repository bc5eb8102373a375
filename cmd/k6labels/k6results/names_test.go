package k6results_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime/pprof"
	"strings"
	"testing"

	"github.com/k6labels/k6labels"
	"github.com/k6labels/k6labels/cmd/k6labels/k6results"
)

// TestNamesAsTheMiddleware sends k6's baggage header, as
// http-instrumentation-pyroscope 1.0.2 writes it, to a real server wrapped
// with the k6labels middleware, and checks that the k6_name label the
// handler sees is the name k6results gives the same k6 name tag read from
// a json point: the two sides of the report's match agree.
func TestNamesAsTheMiddleware(t *testing.T) {
	names := []string{
		"http://127.0.0.1:18080/car?vehicle_id=7&city=berlin", // k6's default: the URL, query string included
		"http://127.0.0.1:18080/",
		"http://127.0.0.1:18080/a%20b?x=%zz",                           // percent-encoding, a broken escape
		"order bike",                                                   // a tags.name, sent as is, space included
		"http://staging:8080/" + strings.Repeat("x", 3000) + "?page=2", // longer than a label value may be
		"cart, step 2",                                                 // sent unencoded: "," ends the value (the next member)
		"http://127.0.0.1:18080/car;jsessionid=A1B2?vehicle_id=7",      // ";" starts a property
	}
	got := make(chan string, 1)
	srv := httptest.NewServer(k6labels.LabelsFromBaggageHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, _ := pprof.Label(r.Context(), "k6_name")
		got <- v
	})))
	defer srv.Close()
	for _, name := range names {
		req, err := http.NewRequest(http.MethodGet, srv.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Baggage", "k6.test_run_id=t1,k6.scenario=s,k6.name="+name)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		label := <-got
		if label == "" {
			t.Errorf("%.60q: the middleware set no k6_name", name)
			continue
		}
		tag, err := json.Marshal(name)
		if err != nil {
			t.Fatal(err)
		}
		res, err := k6results.Read(strings.NewReader(`{"metric":"http_reqs","type":"Point","data":{"time":"2026-12-02T18:15:54Z","value":1,"tags":{"name":` +
			string(tag) + `,"scenario":"s"}}}`))
		if err != nil {
			t.Fatal(err)
		}
		keys := res.Keys()
		if len(keys) != 1 || keys[0].Name != label || k6results.Name(name) != label {
			t.Errorf("%.60q: label %.60q, k6results %.60q", name, label, keys)
		}
	}
}
