package k6labels_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime/pprof"

	"github.com/k6labels/k6labels"
)

// The k6 header of the examples: what http-instrumentation-pyroscope sends
// for an untagged request to http://localhost:5000/bike/42?id=42.
const k6Baggage = "k6.test_run_id=123456, k6.scenario=rides, k6.name=http://localhost:5000/bike/42?id=42"

// serve sends one request with the k6 header through h, as a k6 load test
// would, without a network.
func serve(h http.Handler, method, target string) {
	r := httptest.NewRequest(method, target, nil)
	r.Header.Set("Baggage", k6Baggage)
	h.ServeHTTP(httptest.NewRecorder(), r)
}

// Wrap the application's handler once; every request k6 sends is then served
// with the k6 labels on its goroutine, where CPU samples pick them up.
func Example() {
	mux := http.NewServeMux()
	mux.HandleFunc("/bike/{id}", func(w http.ResponseWriter, r *http.Request) {
		// The labels are in the request's context too.
		pprof.ForLabels(r.Context(), func(k, v string) bool {
			fmt.Printf("%s=%s\n", k, v)
			return true
		})
	})
	handler := k6labels.LabelsFromBaggageHandler(mux)
	// http.ListenAndServe("127.0.0.1:8080", handler)

	serve(handler, "GET", "/bike/42?id=42")
	// Output:
	// k6_name=http://localhost:5000/bike/42
	// k6_scenario=rides
	// k6_test_run_id=123456
}

// LabelsFromBaggageHandler is the x/k6 entry point: switching from
// pyroscope-go's x/k6 package is a change of import.
func ExampleLabelsFromBaggageHandler() {
	app := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scenario, _ := pprof.Label(r.Context(), "k6_scenario")
		fmt.Println("scenario:", scenario)
	})
	serve(k6labels.LabelsFromBaggageHandler(app), "GET", "/")
	// Output: scenario: rides
}

// NewHandler takes options; here query strings are kept in k6_name, which
// is only wise when the query holds no ids.
func ExampleNewHandler() {
	app := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name, _ := pprof.Label(r.Context(), "k6_name")
		fmt.Println(name)
	})
	h := k6labels.NewHandler(app, k6labels.WithQueryStrings(true))
	serve(h, "GET", "/")
	// Output: http://localhost:5000/bike/42?id=42
}

// Middleware has the form routers such as chi and gorilla/mux take:
// router.Use(k6labels.Middleware()).
func ExampleMiddleware() {
	use := k6labels.Middleware(k6labels.WithMaxValueBytes(16))
	app := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name, _ := pprof.Label(r.Context(), "k6_name")
		fmt.Println(name)
	})
	serve(use(app), "GET", "/")
	// Output: http://localhost
}

// A Labeler with Do adapts the package to servers that are not net/http:
// Context builds the labelled context from the baggage as received, Do
// runs the request with its labels on the goroutine.
func ExampleLabeler_Context() {
	l := k6labels.NewLabeler()

	// In a message consumer, say, with the baggage of the message:
	baggage := []string{"k6.test_run_id=123456, k6.scenario=orders, k6.name=ProcessOrder"}
	ctx := l.Context(context.Background(), baggage)
	k6labels.Do(ctx, func(ctx context.Context) {
		name, _ := pprof.Label(ctx, "k6_name")
		fmt.Println("processing with k6_name =", name)
	})

	// Without k6 members there is nothing to do. Tell by Baggage, not by
	// comparing contexts: == panics on a context type that is not comparable.
	ctx = l.Context(context.Background(), []string{"userId=alice"})
	fmt.Println(k6labels.Baggage(ctx) == "")
	// Output:
	// processing with k6_name = ProcessOrder
	// true
}

// NewLabeler takes the options of NewHandler but the HTTP naming ones
// (WithNameFormatter, WithRoutePattern, WithServeMux). Context reads all the
// baggage values of a message, here two, as two header lines or gRPC
// metadata values arrive.
func ExampleNewLabeler() {
	l := k6labels.NewLabeler(k6labels.WithMaxValueBytes(64))
	values := []string{"userId=alice, k6.test_run_id=123456", "k6.scenario=rides"}
	ctx := l.Context(context.Background(), values)
	fmt.Println(k6labels.Members(ctx))
	// Output: [{k6.scenario rides} {k6.test_run_id 123456}]
}

// Do restores the labels the goroutine had before, unlike pprof.Do, which
// sets those of the context it was given: labels that lived only on the
// goroutine survive.
func ExampleDo() {
	// The goroutine's labels before, such as a span profiler would set.
	pprof.SetGoroutineLabels(pprof.WithLabels(context.Background(), pprof.Labels("span_id", "abc")))
	defer pprof.SetGoroutineLabels(context.Background())

	ctx := k6labels.NewLabeler().Context(context.Background(), []string{"k6.scenario=rides"})
	k6labels.Do(ctx, func(ctx context.Context) {
		// CPU samples taken here carry k6_scenario=rides.
		v, _ := pprof.Label(ctx, "k6_scenario")
		fmt.Println("in Do:", v)
	})
	// Here the goroutine has span_id=abc again, and no k6 label.
	fmt.Println("done")
	// Output:
	// in Do: rides
	// done
}

// Members lists the k6 members of a request's context, as labelled.
func ExampleMembers() {
	ctx := k6labels.NewLabeler().Context(context.Background(), []string{k6Baggage})
	for _, m := range k6labels.Members(ctx) {
		fmt.Printf("%s = %s\n", m.Key, m.Value)
	}
	// Output:
	// k6.name = http://localhost:5000/bike/42
	// k6.scenario = rides
	// k6.test_run_id = 123456
}

// Baggage is the header value to send to the next service, so that its
// profile is labelled with the same test run (NewTransport does it for an
// http.Client).
func ExampleBaggage() {
	ctx := k6labels.NewLabeler().Context(context.Background(),
		[]string{"k6.test_run_id=123456, k6.scenario=rides, k6.name=bike search"})
	fmt.Println(k6labels.Baggage(ctx))
	// Output: k6.name=bike%20search,k6.scenario=rides,k6.test_run_id=123456
}

// ParseBaggage is the parser the handlers use, for code that wants all the
// members: other members too, values decoded, in the order sent.
func ExampleParseBaggage() {
	for _, m := range k6labels.ParseBaggage("userId=alice;prop=1, k6.scenario=rides", "k6.name=caf%C3%A9") {
		fmt.Printf("%s=%q\n", m.Key, m.Value)
	}
	// Output:
	// userId="alice"
	// k6.scenario="rides"
	// k6.name="café"
}

// Stats counts since the process started: export the counters to your
// metrics, and alert when Overflowed grows.
func ExampleStats() {
	before := k6labels.Stats()
	h := k6labels.LabelsFromBaggageHandler(http.NotFoundHandler())
	serve(h, "GET", "/")
	after := k6labels.Stats()
	fmt.Println("labelled:", after.Labelled-before.Labelled)
	// Output: labelled: 1
}

// WithMaxValueBytes cuts long values, here a user-chosen request name, on a
// character boundary: each of these characters takes 3 bytes.
func ExampleWithMaxValueBytes() {
	l := k6labels.NewLabeler(k6labels.WithMaxValueBytes(16))
	ctx := l.Context(context.Background(), []string{"k6.name=ラーメン屋の注文"})
	name, _ := pprof.Label(ctx, "k6_name")
	fmt.Printf("%s (%d bytes)\n", name, len(name))
	// Output: ラーメン屋 (15 bytes)
}

// WithMaxLabels caps the k6 labels of one request: k6.test_run_id,
// k6.scenario and k6.name keep their places first, in that order, then the
// other members by name; those left out are counted in Stats.
func ExampleWithMaxLabels() {
	l := k6labels.NewLabeler(k6labels.WithMaxLabels(2))
	ctx := l.Context(context.Background(), []string{k6Baggage + ", k6.vu=7"})
	for _, m := range k6labels.Members(ctx) {
		fmt.Println(m.Key)
	}
	// Output:
	// k6.scenario
	// k6.test_run_id
}

// WithMaxValuesPerLabel bounds the distinct values a label name takes in the
// process; past the cap, new values become OverflowValue while values seen
// before keep working.
func ExampleWithMaxValuesPerLabel() {
	l := k6labels.NewLabeler(k6labels.WithMaxValuesPerLabel(2))
	for _, user := range []string{"alice", "bob", "carol", "alice"} {
		ctx := l.Context(context.Background(), []string{"k6.example_user=" + user})
		v, _ := pprof.Label(ctx, "k6_example_user")
		fmt.Println(user, "->", v)
	}
	// Output:
	// alice -> alice
	// bob -> bob
	// carol -> _overflow
	// alice -> alice
}

// By default k6_name loses the query string and fragment of a URL, where ids
// would make a new label value per request.
func ExampleWithQueryStrings() {
	for _, keep := range []bool{false, true} {
		l := k6labels.NewLabeler(k6labels.WithQueryStrings(keep))
		ctx := l.Context(context.Background(), []string{"k6.name=http://host/search?q=bikes#top"})
		name, _ := pprof.Label(ctx, "k6_name")
		fmt.Println(keep, name)
	}
	// Output:
	// false http://host/search
	// true http://host/search?q=bikes#top
}

// With WithRoutePattern on the handlers registered on a ServeMux, k6_name is
// the route that matched: one value per route, whatever ids the URLs hold.
func ExampleWithRoutePattern() {
	bike := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name, _ := pprof.Label(r.Context(), "k6_name")
		fmt.Println(name)
	})
	mux := http.NewServeMux()
	// After routing, where r.Pattern is set: on each handler.
	mux.Handle("GET /bike/{id}", k6labels.NewHandler(bike, k6labels.WithRoutePattern()))

	serve(mux, "GET", "/bike/42")
	serve(mux, "GET", "/bike/7")
	// Output:
	// GET /bike/{id}
	// GET /bike/{id}
}

// WithServeMux does the same from outside the mux, at the cost of routing
// each k6 request twice.
func ExampleWithServeMux() {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /bike/{id}", func(w http.ResponseWriter, r *http.Request) {
		name, _ := pprof.Label(r.Context(), "k6_name")
		fmt.Println(name)
	})
	handler := k6labels.NewHandler(mux, k6labels.WithServeMux(mux))

	serve(handler, "GET", "/bike/42")
	// Output: GET /bike/{id}
}
