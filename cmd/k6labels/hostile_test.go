package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/k6labels/k6labels/cmd/k6labels/internal/fixture"
)

// gzipBomb writes prefix and then n bytes (a multiple of len(content)) of
// content repeated, gzip-compressed, to a new file in dir: content is
// compressed once and its gzip member repeated, which gzip readers read as
// one stream; zeros deflate about 1000 to 1.
func gzipBomb(t *testing.T, dir, name, prefix string, content []byte, n int) string {
	t.Helper()
	member := func(b []byte) []byte {
		var out bytes.Buffer
		zw := gzip.NewWriter(&out)
		zw.Write(b)
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		return out.Bytes()
	}
	var b bytes.Buffer
	if prefix != "" {
		b.Write(member([]byte(prefix)))
	}
	m := member(content)
	for range n / len(content) {
		b.Write(m)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// allocated runs f and returns the bytes it allocated (TotalAlloc).
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestGzipBombs: a profile (file and URL) and k6 results (json lines, a
// csv record) that inflate to 32 MiB, read with lowered limits, are refused
// with an error naming the limit and its flag, after reading about the
// limit: the command allocates a fraction of what the bomb inflates to.
func TestGzipBombs(t *testing.T) {
	fx := fixture.Dir(t)
	cpu := filepath.Join(fx, "local", "fx4.cpu.pb.gz")
	dir := t.TempDir()
	const size = 32 << 20
	zeros := gzipBomb(t, dir, "bomb.pb.gz", "", make([]byte, 1<<20), size)
	data, err := os.ReadFile(zeros)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(data) }))
	defer srv.Close()
	lines := gzipBomb(t, dir, "run.json.gz", "", []byte(strings.Repeat(`{"type":"Point"}`+"\n", 1<<16)), size/(17<<16)*(17<<16))
	// One quoted csv field of lines of 64 KiB: a record past the json line bound.
	record := gzipBomb(t, dir, "run.csv.gz", "metric_name,timestamp,metric_value,scenario,name\nhttp_reqs,\"", append(bytes.Repeat([]byte("x"), 1<<16-1), '\n'), 20<<20)
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"profile file", []string{"report", "--max-profile-bytes", "1MiB", zeros}, "profile " + zeros + " is larger than 1MiB once decompressed"},
		{"profile URL", []string{"report", "--max-profile-bytes", "1MiB", srv.URL + "/debug/pprof/profile?seconds=1"}, "is larger than 1MiB once decompressed"},
		{"k6 json", []string{"report", "--max-k6-bytes", "1MiB", "--k6", lines, cpu}, "k6 results " + lines + ": line 61681: the file is larger than 1MiB once decompressed"},
		{"k6 csv record", []string{"report", "--k6", record, cpu}, "a csv record longer than 16777216 bytes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var code int
			var stderr string
			alloc := allocated(func() { code, _, stderr = runCLI(t, c.args...) })
			if code != exitError || !strings.Contains(stderr, c.want) {
				t.Fatalf("exit %d, stderr %q; want exit 1 and %q", code, stderr, c.want)
			}
			flag := "--max-profile-bytes"
			if strings.HasPrefix(c.name, "k6") {
				flag = "--max-k6-bytes"
			}
			if !strings.Contains(c.name, "record") && !strings.Contains(stderr, "raise the limit with "+flag) {
				t.Errorf("the error does not name %s: %q", flag, stderr)
			}
			if alloc > size/2 && !strings.Contains(c.name, "record") { // a record is bounded as a json line, at 16 MiB
				t.Errorf("refusing a %d MiB bomb allocated %d MiB", size>>20, alloc>>20)
			}
		})
	}
	// Within a raised limit a bomb is read, and is no profile.
	small := gzipBomb(t, dir, "small.pb.gz", "", make([]byte, 1<<20), 2<<20)
	if code, _, stderr := runCLI(t, "report", "--max-profile-bytes", "3MiB", small); code != exitError || !strings.Contains(stderr, "not a pprof profile") {
		t.Errorf("bomb within its limit: exit %d, %q", code, stderr)
	}
	if code, _, stderr := runCLI(t, "report", "--max-profile-bytes", "lots", zeros); code != exitUsage || !strings.Contains(stderr, "such as 512MiB") {
		t.Errorf("--max-profile-bytes lots: exit %d, %q", code, stderr)
	}
}

// tinySamples is a pprof protobuf of n samples of 4 bytes each, the
// smallest a sample encodes to: about 36 times its size once decoded.
func tinySamples(n int) []byte {
	data := []byte{0x0a, 4, 0x08, 1, 0x10, 2} // sample_type {type: 1, unit: 2}
	for _, s := range []string{"", "cpu", "nanoseconds"} {
		data = append(data, 0x32, byte(len(s)))
		data = append(data, s...)
	}
	for range n {
		data = append(data, 0x12, 2, 0x10, 1) // sample {value: 1}
	}
	return data
}

// TestDecodedBomb: 16 MiB of tiny samples (4 Mi of them, 700 MB once
// decoded) within a 24 MiB limit is refused before it is decoded, since it
// would take more than 8 times the limit; the command allocates little.
func TestDecodedBomb(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tiny.pb")
	if err := os.WriteFile(path, tinySamples(4<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	var code int
	var stderr string
	alloc := allocated(func() { code, _, stderr = runCLI(t, "report", "--max-profile-bytes", "24MiB", path) })
	want := "would take about 560 MiB of memory once decoded, more than 8 times --max-profile-bytes 24MiB"
	if code != exitError || !strings.Contains(stderr, want) {
		t.Fatalf("exit %d, %q; want exit 1 and %q", code, stderr, want)
	}
	if alloc > 64<<20 {
		t.Errorf("refusing it allocated %d MiB", alloc>>20)
	}
}

// TestProfileURLTimeout: a profile URL is given its seconds plus a margin
// (1 s here) for the whole exchange: a server that accepts and never
// answers, one that answers and trickles a byte every 100 ms, and one that
// never answers a ?seconds=1 profile each end with an error that says so.
func TestProfileURLTimeout(t *testing.T) {
	margin := profileURLMargin
	profileURLMargin = time.Second
	done := make(chan struct{})
	t.Cleanup(func() { close(done); profileURLMargin = margin })

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() { // accepts, reads nothing, answers nothing
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { <-done; c.Close() }()
		}
	}()
	trickle := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for {
			w.Write([]byte{0x1f})
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-done:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}))
	t.Cleanup(trickle.Close)
	silent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-done:
		}
	}))
	t.Cleanup(silent.Close)

	for _, c := range []struct{ name, url, within string }{
		{"accepts, never answers", "http://" + ln.Addr().String() + "/debug/pprof/profile?seconds=1", "2s"},
		{"trickles", trickle.URL + "/debug/pprof/profile?seconds=1", "2s"},
		{"never answers seconds=2", silent.URL + "/debug/pprof/profile?seconds=2", "3s"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			code, _, stderr := runCLI(t, "report", c.url)
			want := "no whole answer within " + c.within + " (its seconds, or 30 s, plus 1s)"
			if code != exitError || !strings.Contains(stderr, want) {
				t.Errorf("exit %d, %q; want exit 1 and %q", code, stderr, want)
			}
		})
	}
}

// diffBase makes what go tool pprof -proto -diff_base base p writes: the
// samples of p and those of base negated, labelled pprof::base, merged.
func diffBase(t *testing.T, p, base *profile.Profile) *profile.Profile {
	t.Helper()
	base = base.Copy()
	base.Scale(-1)
	for _, s := range base.Sample {
		if s.Label == nil {
			s.Label = map[string][]string{}
		}
		s.Label["pprof::base"] = []string{"true"}
	}
	d, err := profile.Merge([]*profile.Profile{p.Copy(), base})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func writeProfile(t *testing.T, dir, name string, p *profile.Profile) string {
	t.Helper()
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func readFixtureProfile(t *testing.T, path string) *profile.Profile {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestImplausibleValues: a diff profile (negative values), profiles whose
// CPU sums past 2^62 (each alone is fine), and k6 results with http_reqs
// of 4.7e18 or stamped 0001-01-01 / 9999-12-31 or NaN are refused, each
// with an error that says what is wrong, never a report of exit 0.
func TestImplausibleValues(t *testing.T) {
	fx := fixture.Dir(t)
	dir := t.TempDir()
	cpu := filepath.Join(fx, "local", "fx4.cpu.pb.gz")
	fx1 := readFixtureProfile(t, filepath.Join(fx, "profiles", "fx1.cpu.pb.gz"))
	fx2 := readFixtureProfile(t, filepath.Join(fx, "profiles", "fx2.cpu.pb.gz"))
	diff := writeProfile(t, dir, "diff.pb.gz", diffBase(t, fx2, fx1))
	huge := readFixtureProfile(t, cpu)
	for i, s := range huge.Sample {
		for j := range s.Value {
			s.Value[j] = 0
		}
		if i == 0 {
			for j := range s.Value {
				s.Value[j] = 1 << 61
			}
		}
	}
	huge1 := writeProfile(t, dir, "huge1.pb.gz", huge)
	huge2 := writeProfile(t, dir, "huge2.pb.gz", huge)
	for _, s := range huge.Sample[:2] {
		for j := range s.Value {
			s.Value[j] = 1 << 62
		}
	}
	huge62 := writeProfile(t, dir, "huge62.pb.gz", huge)
	k6 := func(name, time string, value string) string {
		return writeGz(t, dir, name, `{"metric":"http_reqs","type":"Point","data":{"time":"`+time+`","value":`+value+`,"tags":{"name":"http://127.0.0.1:18080/car","scenario":"rush_hour"}}}`+"\n")
	}
	csvNaN := writeGz(t, dir, "nan.csv.gz", "metric_name,timestamp,metric_value,scenario,name\nhttp_reqs,NaN,1,rush_hour,http://127.0.0.1:18080/car\n")
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"diff profile", []string{"report", diff}, "value (-10000000): a diff profile (go tool pprof -diff_base)? give a CPU profile"},
		{"sum past 2^62", []string{"report", huge1, huge2}, "values sum past 2^62"},
		{"values of 2^62", []string{"report", huge62}, "values sum past 2^62"},
		{"http_reqs 4.7e18", []string{"report", "--k6", k6("big.json.gz", "2026-12-02T18:15:54Z", "4.7e18"), cpu}, "http_reqs value 4.7e+18"},
		{"http_reqs -1", []string{"report", "--k6", k6("neg.json.gz", "2026-12-02T18:15:54Z", "-1"), cpu}, "http_reqs value -1"},
		{"json 0001-01-01", []string{"report", "--k6", k6("old.json.gz", "0001-01-01T00:00:00Z", "1"), cpu}, "line 1: time 0001-01-01T00:00:00Z is not between 2000 and 2100"},
		{"json 9999-12-31", []string{"report", "--k6", k6("late.json.gz", "9999-12-31T23:59:59Z", "1"), cpu}, "time 9999-12-31T23:59:59Z is not between 2000 and 2100"},
		{"csv NaN", []string{"report", "--k6", csvNaN, cpu}, `csv row 1: timestamp "NaN" is no unix time between 2000 and 2100`},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, c.args...)
			if code != exitError || !strings.Contains(stderr, c.want) || stdout != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 and %q", code, stdout, stderr, c.want)
			}
		})
	}
	// Each of the huge profiles alone is read.
	if code, _, stderr := runCLI(t, "report", huge1); code != exitOK {
		t.Errorf("one profile of 2^61: exit %d, %s", code, stderr)
	}
}

// TestStoppableGrace: a step that ignores the signal (a parse, an open of
// a fifo without a writer) is cut short: the command says it stopped and
// returns exit 1.
func TestStoppableGrace(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	var out bytes.Buffer
	stopCalled := false
	block := make(chan struct{})
	defer close(block)
	code := runStoppable(ctx, func() { stopCalled = true }, &out, func(context.Context) int {
		cancel(fmt.Errorf("terminated signal received"))
		<-block
		return exitOK
	})
	if code != exitError || !stopCalled || out.String() != "k6labels: stopped: terminated signal received\n" {
		t.Errorf("exit %d, stop called %v, stderr %q", code, stopCalled, out.String())
	}
}
