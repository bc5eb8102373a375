// Package integration holds the hostile-traffic, soak and real-server tests of
// k6labels. It has no library code: everything is in its _test.go files, which
// drive real HTTP servers on 127.0.0.1 over real connections.
//
// `make test` runs the short CI variant; `make soak` runs the full figures
// reported in the README (10^6 requests for the cardinality flood, 10^5 for
// the keep-alive leak check).
package integration
