// Package pyroscope is a client of the Grafana Pyroscope query API.
package pyroscope

import (
	_ "github.com/google/pprof/profile"
	_ "google.golang.org/protobuf/encoding/protowire"
)
