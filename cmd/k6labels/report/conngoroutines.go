package report

import (
	"fmt"
	"strings"

	"github.com/google/pprof/profile"
)

// ConnectionRow names the row of the CPU of connection goroutines that a
// labelled request started: they keep its labels for as long as they live,
// while the work they do is of every request the connection carries.
const ConnectionRow = "(connection goroutines started in a request)"

// connLabel marks, in a [ProfileSource]'s profile, a sample of a connection
// goroutine; its k6 labels are taken off.
const connLabel = "k6labels_connection_goroutine"

// connRoots are the functions a long-lived connection goroutine starts in
// (its root frames, the bottom of its stack): a function name, or a prefix
// ending in "." or "(".
var connRoots = []string{
	"net/http.(*persistConn).readLoop",
	"net/http.(*persistConn).writeLoop",
	"net/http.(*http2ClientConn).readLoop",
	"net/http.(*http2clientConnReadLoop).run",
	"net/http.(*http2ClientConn).sendPingsLoop", // not in every Go version
	"golang.org/x/net/http2.(*ClientConn).readLoop",
	"golang.org/x/net/http2.(*clientConnReadLoop).run",
	"google.golang.org/grpc/internal/transport.(*http2Client).reader",
	"google.golang.org/grpc/internal/transport.(*http2Client).keepalive",
	"google.golang.org/grpc/internal/transport.(*loopyWriter).run",
	"google.golang.org/grpc/internal/transport.newHTTP2Client.func",
	"google.golang.org/grpc.(*addrConn).resetTransport",
	"google.golang.org/grpc.(*ccBalancerWrapper)",
	"google.golang.org/grpc/internal/grpcsync.(*CallbackSerializer).run",
	"database/sql.(*DB).connectionOpener",
	"database/sql.(*DB).connectionResetter",
	"database/sql.(*DB).connectionCleaner",
	"github.com/jackc/pgx/v5/pgxpool.(*Pool).backgroundHealthCheck",
	"github.com/redis/go-redis/v9/internal/pool.(*ConnPool).reaper",
}

// rootFrames is how many frames from the bottom of a stack are looked at:
// the goroutine's entry function, runtime.goexit below it, and one for an
// inlined or wrapper frame.
const rootFrames = 3

// isConnGoroutine tells whether s is of a goroutine that started in one of
// connRoots.
func isConnGoroutine(s *profile.Sample) bool {
	seen := 0
	for i := len(s.Location) - 1; i >= 0 && seen < rootFrames; i-- {
		lines := s.Location[i].Line
		for j := len(lines) - 1; j >= 0 && seen < rootFrames; j-- {
			if lines[j].Function == nil {
				continue
			}
			seen++
			name := lines[j].Function.Name
			for _, root := range connRoots {
				if name == root || (strings.HasSuffix(root, ".func") || strings.HasSuffix(root, ")")) && strings.HasPrefix(name, root) {
					return true
				}
			}
		}
	}
	return false
}

// splitConnGoroutines returns p with the k6 labels taken off the samples of
// connection goroutines that carry them (marked with connLabel instead);
// p itself is not changed.
func splitConnGoroutines(p *profile.Profile) *profile.Profile {
	var out *profile.Profile
	for i, s := range p.Sample {
		if len(s.Label[LabelRunID]) == 0 && len(s.Label[LabelScenario]) == 0 && len(s.Label[LabelName]) == 0 {
			continue
		}
		if !isConnGoroutine(s) {
			continue
		}
		if out == nil {
			out = &profile.Profile{
				SampleType: p.SampleType, DefaultSampleType: p.DefaultSampleType,
				Sample:  append([]*profile.Sample(nil), p.Sample...),
				Mapping: p.Mapping, Location: p.Location, Function: p.Function,
				Comments: p.Comments, DropFrames: p.DropFrames, KeepFrames: p.KeepFrames,
				TimeNanos: p.TimeNanos, DurationNanos: p.DurationNanos, PeriodType: p.PeriodType, Period: p.Period,
			}
		}
		c := *s
		c.Label = map[string][]string{connLabel: {"true"}}
		for k, v := range s.Label {
			if k != LabelRunID && k != LabelScenario && k != LabelName {
				c.Label[k] = v
			}
		}
		out.Sample[i] = &c
	}
	if out == nil {
		return p
	}
	return out
}

// connNote is the note of a report whose profiles hold CPU of connection
// goroutines started in labelled requests.
func connNote(c Count) string {
	return fmt.Sprintf("%s of CPU ran in connection goroutines (net/http, HTTP/2, gRPC or database/sql connection loops) that a labelled request started: they keep its k6 labels for life, but do the work of every request on the connection, so their CPU is counted in the row %s, in no k6 row. "+
		"To label it right, give the clients the service calls while serving k6 requests k6labels.NewTransport (or k6labels.UnlabelledTransport) as their transport", secs(c.CPU), ConnectionRow)
}
