// Package bench measures the k6labels middleware and interceptors against
// a baseline that does what pyroscope-go's x/k6 package does, step for step
// ([BaselineHandler], [BaselineUnary]). It is its own module, not published,
// so that the root module does not depend on OpenTelemetry or gRPC.
//
// From the repository root, make bench-compare runs the tables of
// docs/internals/performance.md, and make bench-wrk the throughput under wrk.
package bench
