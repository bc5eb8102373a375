package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/k6labels/k6labels"
)

// route is one endpoint of the rideshare service and the CPU work it does per
// request, in units of findNearestVehicle. The units are fixed, not timed, so
// that the CPU a request costs does not depend on how busy the machine is:
// that is what lets the demo (and its tests) predict the CPU split from the
// number of requests sent.
type route struct {
	path  string
	units int
}

// routes are those of Pyroscope's classic rideshare example, where ordering
// a car searches three times as far as ordering a bike.
var routes = []route{
	{"/", 0},
	{"/bike", 1},
	{"/scooter", 2},
	{"/car", 3},
}

// routeUnits returns the work units of the route at path, or 0.
func routeUnits(path string) int {
	for _, r := range routes {
		if r.path == path {
			return r.units
		}
	}
	return 0
}

// unitRounds is the number of xorshift rounds in one unit of work: about 2 ms
// of CPU on a current x86 core, large next to the few tens of microseconds
// that HTTP handling costs, so most of the service's CPU is in the handlers.
const unitRounds = 1 << 20

// findNearestVehicle stands for the search the rideshare service does to
// serve an order: pure CPU work, proportional to units (a fraction of a
// unit runs the nearest whole number of rounds).
//
//go:noinline
func findNearestVehicle(units float64, seed uint64) uint64 {
	x := seed | 1
	rounds := int(math.Round(units * unitRounds))
	for i := 0; i < rounds; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

// The route handlers are separate named functions, kept out of line, so that
// profiles (and the attribution test) can tell the routes apart by stack.

//go:noinline
func handleIndex(w http.ResponseWriter, r *http.Request) {
	fmt.Fprintln(w, "rideshare: order a vehicle at /bike, /scooter or /car")
}

//go:noinline
func handleBike(w http.ResponseWriter, r *http.Request) { orderVehicle(w, r, "bike", 1) }

//go:noinline
func handleScooter(w http.ResponseWriter, r *http.Request) { orderVehicle(w, r, "scooter", 2) }

//go:noinline
func handleCar(w http.ResponseWriter, r *http.Request) { orderVehicle(w, r, "car", 3) }

// handlerFuncs names the functions that serve the routes, by route path. In
// profiles they appear after the package path: "main." in the command, the
// module path in its test binary.
var handlerFuncs = map[string]string{
	"/":        "handleIndex",
	"/bike":    "handleBike",
	"/scooter": "handleScooter",
	"/car":     "handleCar",
}

func orderVehicle(w http.ResponseWriter, r *http.Request, vehicle string, units int) {
	id, _ := strconv.ParseUint(r.URL.Query().Get("vehicle_id"), 10, 64)
	found := findNearestVehicle(float64(units), id)
	fmt.Fprintf(w, "%s %d is on its way (search result %x)\n", vehicle, id, found)
}

// newMux returns the rideshare routes without any k6 labelling.
func newMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", handleIndex)
	mux.HandleFunc("GET /bike", handleBike)
	mux.HandleFunc("GET /scooter", handleScooter)
	mux.HandleFunc("GET /car", handleCar)
	mux.HandleFunc("GET /trips", handleTrips) // the execution-trace phase's routes
	mux.HandleFunc("GET /surge", handleSurge)
	return mux
}

// newService returns the instrumented rideshare service: the routes wrapped
// with k6labels.LabelsFromBaggageHandler, the one line a real service adds.
func newService() http.Handler {
	return k6labels.LabelsFromBaggageHandler(newMux())
}

// server is a running HTTP server on a loopback or user-chosen address.
type server struct {
	URL string // base URL, "http://host:port"
	srv *http.Server
	ln  net.Listener
	err chan error
}

// startServer serves h on addr ("127.0.0.1:0" picks a free port).
func startServer(addr string, h http.Handler) (*server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &server{
		URL: "http://" + ln.Addr().String(),
		srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second},
		ln:  ln,
		err: make(chan error, 1),
	}
	go func() { s.err <- s.srv.Serve(ln) }()
	return s, nil
}

// Close stops the server, letting requests in flight finish for a moment.
func (s *server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if serr := <-s.err; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}
