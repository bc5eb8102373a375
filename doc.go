// Package k6labels shows which k6 load test, scenario and request burned
// which CPU in a Go service's profiles.
//
// # The use case
//
// k6's http-instrumentation-pyroscope helper adds a W3C baggage header to
// every request of a load test:
//
//	baggage: k6.test_run_id=123456, k6.scenario=checkout, k6.name=http://shop/cart?id=3
//
// A handler from this package reads it and serves the request with the pprof
// labels k6_test_run_id, k6_scenario and k6_name on its goroutine. Every CPU
// sample taken while the request runs carries them, so a continuous profiler
// such as Grafana Pyroscope (through github.com/grafana/pyroscope-go), or
// go tool pprof -tagfocus on a plain CPU profile, can show the profile of one
// test run, one scenario or one kind of request, and compare it with the
// baseline traffic.
//
// It is a drop-in replacement for pyroscope-go's experimental x/k6 package:
// [LabelsFromBaggageHandler] has the same name, signature and defaults, and
// the gRPC interceptors live in the github.com/k6labels/k6labels/k6grpc module.
// This module itself depends only on the standard library.
//
// # Quick start
//
// Wrap the handler that serves your application:
//
//	http.ListenAndServe(addr, k6labels.LabelsFromBaggageHandler(mux))
//
// or use [Middleware] with routers that take net/http middleware (chi,
// gorilla/mux; Echo through the small adapter of the examples, which puts
// the original request back), [NewHandler] for options,
// and [Labeler] with [Do] to write an adapter for anything else. The examples
// module of the repository has a small program for chi, gorilla/mux, Echo,
// Gin, Connect, gRPC and net/http's ServeMux.
//
// # Label mapping
//
// Every baggage member whose key starts with "k6." becomes a label named after
// the key with '.' (and any other byte outside [a-zA-Z0-9_]) replaced by '_',
// the form Pyroscope accepts:
//
//	k6.test_run_id  →  k6_test_run_id   the test run (the literal "undefined" that a local k6 run sends is dropped)
//	k6.scenario     →  k6_scenario      the k6 scenario
//	k6.name         →  k6_name          the request's tags.name, or its URL without query string and fragment
//
// Values are percent-decoded, made valid UTF-8 and capped at 256 bytes
// ([WithMaxValueBytes]); empty values are skipped; at most 8 labels are set
// per request ([WithMaxLabels]), k6's own three always among them. Other
// baggage members are left alone.
//
// Every distinct value of a label becomes its own series in Pyroscope. To
// keep their number bounded, k6_name drops query strings by default
// ([WithQueryStrings]), each label name takes at most 1000 distinct values
// per process, after which new values become [OverflowValue]
// ([WithMaxValuesPerLabel]), and [WithRoutePattern] names requests by the
// ServeMux route that matched ("GET /cart/{id}") instead of their URL. Name
// your requests in the k6 script (tags: { name: "cart" }) for the same effect.
// [Stats] counts what was labelled, skipped, capped and cut.
//
// # Labels on the goroutine and in the context
//
// The labels are set on the goroutine that serves the request, where the CPU
// profiler reads them, and are in the request's context, so goroutines the
// handler starts with that context (pprof.Do, or a span profiler) carry them
// too. When the handler returns, or panics, the goroutine gets back exactly
// the labels it had before, so an HTTP/1.1 keep-alive connection does not
// carry one request's labels into the next.
//
// # Passing the test on
//
// [Members] and [Baggage] give the k6 members of a request's context;
// [NewTransport] and [MergeBaggage] send them to the services it calls, so
// that their profiles are labelled with the same test run.
package k6labels
