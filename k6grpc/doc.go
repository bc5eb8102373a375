// Package k6grpc labels the CPU profiles of a gRPC service with the k6 test
// run, scenario and request name of the calls it serves, and passes those
// on to the services it calls.
//
// On the server, [LabelsFromBaggageUnaryInterceptor] and
// [LabelsFromBaggageStreamInterceptor] read the W3C baggage that k6 sends in
// the "baggage" metadata and set the pprof labels k6_test_run_id, k6_scenario
// and k6_name while the handler runs, exactly as the HTTP middleware of
// github.com/k6labels/k6labels does. They have the names and signatures of
// the interceptors in pyroscope-go's x/k6 package, so switching is a change
// of import; [UnaryServerInterceptor] and [StreamServerInterceptor] take the
// same options as the HTTP side.
//
// On the client, [UnaryClientInterceptor] and [StreamClientInterceptor] add
// the k6 members of the call's context to the outgoing "baggage" metadata,
// so the next service can label its own profile. Create channels with
// [NewClient] when that may happen inside a labelled handler (a client made
// on first use): a channel's goroutines keep the labels of the goroutine
// that created it, for the channel's whole life. A channel created
// unlabelled stays so, whichever call first connects it.
//
// To name calls by method rather than by the k6.name sent, pass
// k6labels.WithNameFunc with grpc.Method (see the examples).
//
// This is a module of its own so that users of the net/http middleware do
// not download gRPC.
package k6grpc
