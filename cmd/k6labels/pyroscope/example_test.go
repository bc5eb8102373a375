package pyroscope_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/k6labels/k6labels/cmd/k6labels/pyroscope"
)

// A server on 127.0.0.1 that answers SelectSeries as a real Pyroscope did
// (exchange 07 of the fixtures: CPU by k6_test_run_id, nanoseconds).
func exampleServer() (string, func()) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"series":[{"labels":[{"name":"k6_test_run_id", "value":"fx1"}], "points":[{"value":23770000000, "timestamp":"1796234565000"}]}, `+
			`{"labels":[{"name":"k6_test_run_id", "value":"fx2"}], "points":[{"value":7550000000, "timestamp":"1796234565000"}, {"value":15540000000, "timestamp":"1796234595000"}]}, `+
			`{"points":[{"value":590000000, "timestamp":"1796234565000"}, {"value":430000000, "timestamp":"1796234595000"}, {"value":10000000, "timestamp":"1796234625000"}]}]}`)
	})}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), func() { srv.Close() }
}

// CPU seconds of each k6 test run of one service: SelectSeries grouped by
// k6_test_run_id, the samples without the label in a series of their own.
func ExampleClient_SelectSeries() {
	url, stop := exampleServer()
	defer stop()
	c, err := pyroscope.NewClient(url, nil)
	if err != nil {
		panic(err)
	}
	q := pyroscope.Query{
		ProfileType: pyroscope.CPUProfileType,
		Selector:    pyroscope.Selector("rideshare.k6labels"),
		Start:       time.UnixMilli(1796234535000),
		End:         time.UnixMilli(1796234640000),
	}
	series, err := c.SelectSeries(context.Background(), q, []string{"k6_test_run_id"}, 15*time.Second)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range series {
		id, ok := s.Labels["k6_test_run_id"]
		if !ok {
			id = "(no label)"
		}
		fmt.Printf("%-10s %5.2f s in %d points\n", id, s.Sum()/1e9, len(s.Points))
	}
	// Output:
	// fx1        23.77 s in 1 points
	// fx2        23.09 s in 2 points
	// (no label)  1.03 s in 3 points
}

// A selector for one row of a report: the service, the run, the route.
func ExampleSelector() {
	fmt.Println(pyroscope.Selector("rideshare.k6labels",
		pyroscope.Matcher{Name: "k6_test_run_id", Value: "fx1"},
		pyroscope.Matcher{Name: "k6_name", Value: "http://127.0.0.1:18080/car"}))
	// Output:
	// {service_name="rideshare.k6labels",k6_test_run_id="fx1",k6_name="http://127.0.0.1:18080/car"}
}
