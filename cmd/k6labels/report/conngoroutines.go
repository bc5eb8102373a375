package report

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/pprof/profile"
)

// ConnectionRow names the row of the CPU of connection goroutines that a
// labelled request started: they keep its labels for as long as they live,
// while the work they do is of every request the connection carries.
const ConnectionRow = "(connection goroutines started in a request)"

// ConnLabel marks, in a source's profile, a sample of a connection
// goroutine whose k6 labels the source took off (the pprof source does).
const ConnLabel = "k6labels_connection_goroutine"

// connNote is the note of a report whose profiles hold CPU of connection
// goroutines started in labelled requests; grpc: some of it is gRPC's.
func connNote(c Count, grpc bool) string {
	n := fmt.Sprintf("%s of CPU ran in connection goroutines (net/http, HTTP/2, gRPC or database/sql connection loops) that a labelled request started: they keep its k6 labels for life, but do the work of every request on the connection, so their CPU is counted in the row %s, in no k6 row. "+
		"To label it right, give the clients the service calls while serving k6 requests k6labels.NewTransport (or k6labels.UnlabelledTransport) as their transport", Secs(c.CPU), ConnectionRow)
	if grpc {
		n += ", and create gRPC channels with k6grpc.NewClient (a channel made with grpc.NewClient connects on its first call, and its goroutines keep that call's labels)"
	}
	return n
}

// connRoots are the functions a long-lived connection goroutine starts in
// (its root frames, the bottom of its stack): a function name, or a prefix
// ending in ".func" or ")". Each, but those said to be older, is in Go
// 1.26 and in the gRPC and golang.org/x/net versions the workspace requires
// (grpc-go v1.85, x/net v0.60); a request's own goroutines (net/http's HTTP/2 writes run
// in one per request) are not among them.
var connRoots = []string{
	// net/http, HTTP/1: Transport.dialConn starts both.
	"net/http.(*persistConn).readLoop",
	"net/http.(*persistConn).writeLoop",
	// net/http's bundled HTTP/2 client: the connection's reader (readLoop
	// calls run, which may be inlined into it).
	"net/http.(*http2ClientConn).readLoop",
	"net/http.(*http2clientConnReadLoop).run",
	// The same in Go 1.27, whose net/http has its HTTP/2 in a package of its
	// own, which golang.org/x/net/http2's Transport (v0.60) uses there too.
	"net/http/internal/http2.(*ClientConn).readLoop",
	"net/http/internal/http2.(*clientConnReadLoop).run",
	// golang.org/x/net/http2's own Transport (before Go 1.27, or built
	// with the http2legacy tag), the same.
	"golang.org/x/net/http2.(*ClientConn).readLoop",
	"golang.org/x/net/http2.(*clientConnReadLoop).run",
	// gRPC's client transport: reader, keepalive, and the goroutine that
	// NewHTTP2Client starts for the loopy writer (the other closure it
	// starts only waits for the connect deadline).
	"google.golang.org/grpc/internal/transport.(*http2Client).reader",
	"google.golang.org/grpc/internal/transport.(*http2Client).keepalive",
	"google.golang.org/grpc/internal/transport.(*loopyWriter).run",
	"google.golang.org/grpc/internal/transport.NewHTTP2Client.func",
	// gRPC's subchannel: connecting (acBalancerWrapper.Connect), reconnecting
	// to new addresses (addrConn.updateAddrs), health checks.
	"google.golang.org/grpc.(*addrConn).connect",
	"google.golang.org/grpc.(*addrConn).resetTransportAndUnlock",
	"google.golang.org/grpc.(*addrConn).startHealthCheck.func",
	"google.golang.org/grpc/health.(*healthServiceProducer).startHealthCheck",
	// gRPC's resolver and balancer updates.
	"google.golang.org/grpc/internal/grpcsync.(*CallbackSerializer).run",
	// The same in older grpc-go releases, which services still build with
	// (not in the version tested here): go ac.resetTransport(), the loopy
	// writer in an unexported newHTTP2Client's closure.
	"google.golang.org/grpc.(*addrConn).resetTransport",
	"google.golang.org/grpc/internal/transport.newHTTP2Client.func",
	// database/sql: opens connections for waiting requests (started by
	// Open), closes expired ones.
	"database/sql.(*DB).connectionOpener",
	"database/sql.(*DB).connectionCleaner",
	// pgx v5's pool (not a dependency here, so not tested).
	"github.com/jackc/pgx/v5/pgxpool.(*Pool).backgroundHealthCheck",
}

// connExact and connPrefixes are connRoots' names and prefixes.
var connExact, connPrefixes = func() (map[string]bool, []string) {
	exact := map[string]bool{}
	var prefixes []string
	for _, root := range connRoots {
		exact[root] = true
		if strings.HasSuffix(root, ".func") || strings.HasSuffix(root, ")") {
			prefixes = append(prefixes, root)
		}
	}
	return exact, prefixes
}()

// rootFrames is how many frames from the bottom of a stack are looked at:
// the goroutine's entry function, runtime.goexit below it, and one for an
// inlined or wrapper frame.
const rootFrames = 3

// ConnGoroutine tells whether s is of a goroutine that started in one of
// connRoots: a connection goroutine, whatever labels it carries.
func ConnGoroutine(s *profile.Sample) bool {
	return connRoot(s) != ""
}

// ConnGRPC tells whether s is of a gRPC connection goroutine.
func ConnGRPC(s *profile.Sample) bool {
	return strings.HasPrefix(connRoot(s), grpcPrefix)
}

// grpcPrefix begins the names of gRPC's functions.
const grpcPrefix = "google.golang.org/grpc"

// connRoot returns the entry of connRoots that s's root frames match, or
// "".
func connRoot(s *profile.Sample) string {
	seen := 0
	for i := len(s.Location) - 1; i >= 0 && seen < rootFrames; i-- {
		lines := s.Location[i].Line
		for j := len(lines) - 1; j >= 0 && seen < rootFrames; j-- {
			if lines[j].Function == nil {
				continue
			}
			seen++
			name := lines[j].Function.Name
			if connExact[name] {
				return name
			}
			for _, root := range connPrefixes {
				if strings.HasPrefix(name, root) {
					return root
				}
			}
		}
	}
	return ""
}

// splitConn moves the CPU of connection goroutines in the run's merged
// profile from the run's k6 CPU to Connections, and has each row's left
// out (b.conn). A pprof source has taken them out of the run already; a
// Pyroscope one, whose merged profiles carry no labels, has not.
func (b *builder) splitConn() error {
	rest, conn, grpc := withoutConn(b.r.prof, b.opts.SamplePeriod)
	if conn.CPU == 0 {
		return nil
	}
	b.r.prof = rest
	return b.moveConn(conn, grpc)
}

// moveConn counts conn, the CPU of connection goroutines in the run(s), in
// Connections and not in K6, with the note; it refuses a report left with
// no request CPU at all.
func (b *builder) moveConn(conn Count, grpc bool) error {
	b.conn = true
	b.r.Connections = b.r.Connections.Plus(conn)
	b.r.K6 = b.r.K6.Minus(conn)
	if b.r.K6.Samples <= 0 {
		return allConnError(b.r.Source, b.r.Connections)
	}
	b.r.Notes = append(b.r.Notes, connNote(b.r.Connections, grpc))
	return nil
}

// allConnError is the error of a source whose k6-labelled CPU all ran in
// connection goroutines.
func allConnError(source string, c Count) error {
	return fmt.Errorf("%w: all of the k6-labelled CPU in %s (%s) ran in connection goroutines that labelled requests started, none in the requests themselves: "+
		"give the clients the service calls in requests k6labels.NewTransport (gRPC channels: k6grpc.NewClient), or profile longer", ErrNoData, source, Secs(c.CPU))
}

// splitRunsConn is splitConn for a report that sums runs, whose merged
// profile is the whole source's: it fetches the runs' k6 samples (one
// query, three with a local run) to find their connection goroutines.
func (b *builder) splitRunsConn(runs []string) error {
	sets := [][]Matcher{{{Name: LabelRunID, Not: true}}}
	if slices.Contains(runs, LocalRun) {
		sets = append(sets, runMatchers(LocalRun)...)
	}
	p, err := b.profile(sets...)
	if err != nil {
		return err
	}
	_, conn, grpc := withoutConn(p, b.opts.SamplePeriod)
	if conn.CPU == 0 {
		return nil
	}
	return b.moveConn(conn, grpc)
}

// runConn returns the CPU of connection goroutines among run id's samples,
// fetching its merged profile for that alone.
func (b *builder) runConn(id string) (Count, error) {
	p, err := b.profile(runMatchers(id)...)
	if err != nil {
		return Count{}, err
	}
	b.connFetched++
	_, conn, _ := withoutConn(p, b.opts.SamplePeriod)
	return conn, nil
}

// withoutConn returns p without the samples of connection goroutines (p
// itself when it has none, else a copy sharing p's locations), their CPU,
// counted as countProfile does, and whether some of them are gRPC's.
func withoutConn(p *profile.Profile, period time.Duration) (*profile.Profile, Count, bool) {
	var rest, conn []*profile.Sample
	grpc := false
	for _, s := range p.Sample {
		if root := connRoot(s); root != "" {
			conn = append(conn, s)
			grpc = grpc || strings.HasPrefix(root, grpcPrefix)
		} else {
			rest = append(rest, s)
		}
	}
	if len(conn) == 0 {
		return p, Count{}, false
	}
	n, _ := countProfile(withSamples(p, conn), period)
	return withSamples(p, rest), n, grpc
}

// connGRPC tells whether the samples src marked with ConnLabel hold gRPC
// connection goroutines.
func connGRPC(ctx context.Context, src Source) (bool, error) {
	p, err := src.Profile(ctx, []Matcher{{Name: ConnLabel, Not: true}})
	if err != nil {
		return false, err
	}
	return slices.ContainsFunc(p.Sample, ConnGRPC), nil
}

// withSamples returns a profile of p's header, mappings, locations and
// functions that holds samples.
func withSamples(p *profile.Profile, samples []*profile.Sample) *profile.Profile {
	return &profile.Profile{
		SampleType: p.SampleType, DefaultSampleType: p.DefaultSampleType, Sample: samples,
		Mapping: p.Mapping, Location: p.Location, Function: p.Function,
		Comments: p.Comments, DropFrames: p.DropFrames, KeepFrames: p.KeepFrames,
		TimeNanos: p.TimeNanos, DurationNanos: p.DurationNanos, PeriodType: p.PeriodType, Period: p.Period,
	}
}
