package integration

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/k6labels/k6labels"
	"github.com/k6labels/k6labels/internal/profiletest"
	"go.opentelemetry.io/otel/baggage"
)

// garbageRunID is the test run id every garbage case that keeps its first
// member sends first: it must survive whatever follows it.
const garbageRunID = "garbage"

// A garbageCase is one hostile baggage header: its lines as received.
type garbageCase struct {
	name  string
	lines []string
	// keepsPrefix is set when the first member is "k6.test_run_id=garbage"
	// and what follows cannot replace it, so the label must be there.
	keepsPrefix bool
}

// httpSafe reports whether net/http accepts the lines as header field values
// as they are: no control character but HTAB (bytes >= 0x80 are allowed, as
// obs-text). Others are sent raw too; the server may then refuse the request.
func (c garbageCase) httpSafe() bool {
	for _, l := range c.lines {
		for i := 0; i < len(l); i++ {
			if b := l[i]; b < 0x20 && b != '\t' || b == 0x7f {
				return false
			}
		}
	}
	return true
}

func withPrefix(s string) string { return "k6.test_run_id=" + garbageRunID + ", " + s }

// garbageCases returns the hostile inputs, the same on every run.
func garbageCases() []garbageCase {
	rng := rand.New(rand.NewPCG(5, 5))
	var cases []garbageCase
	add := func(name string, keepsPrefix bool, lines ...string) {
		cases = append(cases, garbageCase{name, lines, keepsPrefix})
	}

	// Random bytes of every size around the limits, with and without a
	// valid member in front.
	for i, n := range []int{1, 7, 64, 500, 4096, 8191, 8192, 8193, 9000, 20000, 65536, 300000} {
		b := make([]byte, n)
		for j := range b {
			b[j] = byte(rng.UintN(256))
		}
		add("random-bytes-"+strconv.Itoa(n), false, string(b))
		// The prefix keeps its label unless the random bytes happen to
		// contain a key that maps to k6_test_run_id: check for that.
		s := withPrefix(string(b))
		add("prefix-random-bytes-"+strconv.Itoa(i), !strings.Contains(strings.ToLower(string(b)), "k6"), s)
	}
	// Random mixes of baggage syntax, escapes and bad bytes: far more
	// likely than random bytes to reach every branch of the parser.
	atoms := []string{"k6.", "k6.name", "k6.scenario", "name", "=", "==", ",", ", ", ";", ";p=1", "%", "%2", "%zz",
		"%FF", "%E2%82", "%C3%A9", "%00", "%0A", "%7F", " ", "\t", "\xff", "\xc3", "\xed\xa0\x80",
		"é", "😀", "\"", "\\", "?", "#", "http://h/p?q=1#f", "undefined", "x", "0"}
	// Control bytes come last: net/http refuses them, so every other case
	// leaves them out and reaches the handler over HTTP.
	withCtl := append(atoms[:len(atoms):len(atoms)], "\x01", "\x7f")
	for i := range 200 {
		pool := atoms
		if i%2 == 1 {
			pool = withCtl
		}
		var sb strings.Builder
		for range 1 + rng.IntN(300) {
			sb.WriteString(pool[rng.IntN(len(pool))])
		}
		add("random-atoms-"+strconv.Itoa(i), false, sb.String())
	}

	const mib = 1 << 20
	add("1MB-value", true, withPrefix("k6.name="+strings.Repeat("x", mib)))
	add("1MB-value-utf8", true, withPrefix("k6.name="+strings.Repeat("é", mib/2)))
	add("1MB-key", true, withPrefix("k6."+strings.Repeat("k", mib)+"=v"))
	add("1MB-commas", true, withPrefix(strings.Repeat(",", mib)))
	add("1MB-spaces", true, withPrefix(strings.Repeat(" ", mib)))
	add("1MB-percent", true, withPrefix("k6.name="+strings.Repeat("%FF", mib/3)))
	var sb strings.Builder
	for i := 0; sb.Len() < mib; i++ {
		fmt.Fprintf(&sb, ", k6.name=/items/%d", i)
	}
	add("1MB-members", false, withPrefix(sb.String()))

	members := func(key string) string {
		var sb strings.Builder
		for i := range 10000 {
			fmt.Fprintf(&sb, ", %s%d=v%d", key, i, i)
		}
		return sb.String()
	}
	add("10000-k6-members", true, withPrefix(members("k6.m")))
	add("10000-other-members", true, withPrefix(members("key")))
	add("10000-members-no-space", true, withPrefix(strings.ReplaceAll(members("k6.n"), ", ", ",")))

	lines := func(n int, line func(int) string) []string {
		out := []string{withPrefix("k6.scenario=lines")}
		for i := range n {
			out = append(out, line(i))
		}
		return out
	}
	add("5000-lines", true, lines(5000, func(i int) string { return "k6.l" + strconv.Itoa(i) + "=v" })...)
	add("5000-empty-lines", true, lines(5000, func(int) string { return "" })...)
	add("5000-comma-lines", true, lines(5000, func(int) string { return "," })...)
	add("5000-name-lines", false, lines(5000, func(i int) string { return "k6.name=/n/" + strconv.Itoa(i) })...)

	for i, v := range []string{"%", "%%", "%%%", "%4", "%zz", "%G0", "%0G", "%E2%82", "%E2%82%", "%FF%FE", "%C0%AF",
		"%ED%A0%80", "%F4%90%80%80", "%00", "%0D%0A", "%1B[31m", "%7F", "%C2%85", "a%", "%25", "%2525", "%u0041"} {
		add("percent-"+strconv.Itoa(i), true, withPrefix("k6.name="+v+", k6.scenario=s"+v))
	}
	for i, v := range []string{"\xff", "\xfe\xff", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xe2\x82", "a\xffb",
		"\xc3", strings.Repeat("\x80", 300)} {
		add("utf8-"+strconv.Itoa(i), true, withPrefix("k6.name="+v+", k6.scenario="+v))
	}
	for c := range 0x20 {
		if c == ',' {
			continue
		}
		v := "a" + string(rune(c)) + "b"
		add("control-"+strconv.Itoa(c), c != '\r' && c != '\n', withPrefix("k6.name="+v+", k6.scenario="+v))
	}
	add("control-del", true, withPrefix("k6.name=a\x7fb"))

	// Keys with every ASCII character, one at a time and all together.
	var keys, all strings.Builder
	for c := range 128 {
		keys.WriteString(", k6." + string(rune(c)) + "x=v" + strconv.Itoa(c))
		all.WriteByte(byte(c))
	}
	add("every-ascii-key", false, withPrefix(keys.String()))
	add("all-ascii-in-one-key", false, withPrefix("k6."+all.String()+"=v"))
	add("all-ascii-in-one-value", false, withPrefix("k6.name="+all.String()))
	add("non-ascii-keys", true, withPrefix("k6.é=1, k6.😀=2, k6.\xff=3, ké.name=4, K6.name=5, k6=6, k6.=7, .k6.name=8"))
	return cases
}

// garbageConfigs are the option sets every case is checked with.
var garbageConfigs = []struct {
	name      string
	opts      []k6labels.Option
	maxValue  int
	maxLabels int
}{
	{"defaults", nil, k6labels.DefaultMaxValueBytes, k6labels.DefaultMaxLabels},
	{"small", []k6labels.Option{k6labels.WithMaxValueBytes(17), k6labels.WithMaxLabels(2)}, 17, 2},
	{"large", []k6labels.Option{k6labels.WithMaxValueBytes(1 << 20), k6labels.WithMaxLabels(100), k6labels.WithQueryStrings(true)}, 2048, 30},
}

// TestGarbageLabeler feeds every hostile header straight to Labeler.Context:
// no panic, every label valid for Pyroscope and within the caps, the first
// valid member kept, and Members/Baggage consistent with the labels.
func TestGarbageLabeler(t *testing.T) {
	t.Parallel()
	for _, cfg := range garbageConfigs {
		l := k6labels.NewLabeler(append([]k6labels.Option{ownRegistry()}, cfg.opts...)...)
		for _, c := range garbageCases() {
			what := cfg.name + "/" + c.name
			ctx := l.Context(context.Background(), c.lines)
			checkLabels(t, ctx, cfg.maxValue, cfg.maxLabels, what)
			if c.keepsPrefix {
				if v, _ := pprof.Label(ctx, "k6_test_run_id"); v != garbageRunID {
					t.Errorf("%s: k6_test_run_id = %q, want %q: garbage after a valid member lost it", what, v, garbageRunID)
				}
			}
			// Members are what the labels were made of, and Baggage encodes
			// them so that our own parser reads the same values back.
			// It must also be valid W3C baggage for the next service:
			// OpenTelemetry accepts it with no member dropped.
			ms := k6labels.Members(ctx)
			var back []k6labels.Member
			if b := k6labels.Baggage(ctx); b != "" {
				back = k6labels.ParseBaggage(b)
				if ob, err := baggage.Parse(b); err != nil || ob.Len() != len(ms) {
					t.Errorf("%s: Baggage(ctx) %q is not valid W3C baggage: OpenTelemetry keeps %d of %d members: %v", what, b, ob.Len(), len(ms), err)
				}
			}
			if len(back) != len(ms) {
				t.Errorf("%s: Baggage(ctx) %q parses to %d members, Members has %d", what, k6labels.Baggage(ctx), len(back), len(ms))
				continue
			}
			for i, m := range ms {
				if !utf8.ValidString(m.Value) || len(m.Value) > cfg.maxValue {
					t.Errorf("%s: member %q has value %q", what, m.Key, m.Value)
				}
				if back[i].Value != m.Value {
					t.Errorf("%s: member %q: Baggage round trip gives %q, want %q", what, m.Key, back[i].Value, m.Value)
				}
			}
		}
	}
}

// garbageWork burns a little CPU inside the handler, so that the profile
// has labelled samples of garbage requests.
//
//go:noinline
func garbageWork() { profiletest.Spin(2 * time.Millisecond) }

// TestGarbageHTTP sends every hostile header over a real connection to a
// real server (raw bytes on a TCP socket, so that nothing is cleaned up by a
// client library) while a CPU profile runs. The server never fails, the
// handler sees only valid labels, and so does the profile.
func TestGarbageHTTP(t *testing.T) {
	const maxValue = 64
	cases := garbageCases()
	var served atomic.Int64
	h := k6labels.NewHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		i, err := strconv.Atoi(r.Header.Get("X-Case"))
		if err != nil || i < 0 || i >= len(cases) {
			t.Errorf("request without a valid X-Case header: %q", r.Header.Get("X-Case"))
			return
		}
		c := cases[i]
		checkLabels(t, r.Context(), maxValue, k6labels.DefaultMaxLabels, "http/"+c.name)
		if c.keepsPrefix && c.httpSafe() {
			if v, _ := pprof.Label(r.Context(), "k6_test_run_id"); v != garbageRunID {
				t.Errorf("http/%s: k6_test_run_id = %q, want %q", c.name, v, garbageRunID)
			}
		}
		garbageWork()
	}), ownRegistry(), k6labels.WithMaxValueBytes(maxValue))
	srv := startServer(t, h, func(s *http.Server) { s.MaxHeaderBytes = 4 << 20 })

	statuses := map[int]int{}
	p := profiletest.Record(t, func() {
		for i, c := range cases {
			var req strings.Builder
			fmt.Fprintf(&req, "GET /garbage HTTP/1.1\r\nHost: %s\r\nX-Case: %d\r\n", srv.Addr, i)
			for _, l := range c.lines {
				req.WriteString("Baggage: " + l + "\r\n")
			}
			req.WriteString("Connection: close\r\n\r\n")
			status, err := rawRequest(srv.Addr, req.String())
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
				continue
			}
			statuses[status]++
			if c.httpSafe() && status != http.StatusOK {
				t.Errorf("%s: status %d for a request with well-framed headers", c.name, status)
			}
		}
	})
	t.Logf("%d cases, %d served by the handler, statuses %v", len(cases), served.Load(), statuses)
	if statuses[http.StatusOK] == 0 {
		t.Fatal("no garbage request reached the handler")
	}
	profiletest.CheckLabels(t, p, maxValue)
	labelled := 0
	for _, s := range profiletest.Samples(p, "garbageWork") {
		if profiletest.Labels(s)["k6_test_run_id"] == garbageRunID {
			labelled++
		}
	}
	if labelled == 0 {
		t.Error("no sample of garbageWork carries k6_test_run_id=garbage")
	}

	// The server still serves ordinary k6 requests after all that.
	got := ""
	srv.Handler = k6labels.NewHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = pprof.Label(r.Context(), "k6_scenario")
	}), ownRegistry())
	status, err := rawRequest(srv.Addr, "GET / HTTP/1.1\r\nHost: x\r\nBaggage: k6.scenario=lines\r\nConnection: close\r\n\r\n")
	if err != nil || status != http.StatusOK || got != "lines" {
		t.Errorf("after the garbage: status %d, err %v, k6_scenario %q", status, err, got)
	}
}

// rawRequest writes req on a new TCP connection and returns the response
// status.
func rawRequest(addr, req string) (int, error) {
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(60 * time.Second))
	// Write and read at once: the server may answer (400, 431) and close
	// before it has read a large request.
	werr := make(chan error, 1)
	go func() {
		_, err := io.WriteString(conn, req)
		werr <- err
	}()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		<-werr
		return 0, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	<-werr // a write error after the server answered is fine
	return resp.StatusCode, nil
}
