package pyroscope_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/k6labels/k6labels/cmd/k6labels/internal/fixture"

	"github.com/google/pprof/profile"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/k6labels/k6labels/cmd/k6labels/pyroscope"
	"github.com/k6labels/k6labels/cmd/k6labels/pyroscope/pyroscopetest"
)

// The window and service of the recorded exchanges.
const service = "rideshare.k6labels"

var (
	start = time.UnixMilli(1796234535000)
	end   = time.UnixMilli(1796234640000)
	// fx1's k6 process, the window of exchanges 35 and 37.
	fx1Start = time.UnixMilli(1796234565895)
	fx1End   = time.UnixMilli(1796234581019)
)

// cpu is a README figure in seconds (two decimals, exact: the server's
// values are multiples of 10 ms) as nanoseconds.
func cpu(seconds string) int64 {
	f, err := strconv.ParseFloat(seconds, 64)
	if err != nil {
		panic(err)
	}
	return int64(f*100+0.5) * 10_000_000
}

// recording is the recorded exchanges of the fixtures folder dir.
type recording struct {
	dir       string
	exchanges []pyroscopetest.Exchange
}

func load(t *testing.T) recording {
	t.Helper()
	dir := filepath.Join(pyroscopetest.Fixtures(t), "pyroscope")
	xs, err := pyroscopetest.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return recording{dir, xs}
}

// raw returns the recorded answer of the exchange whose name starts with prefix.
func (f recording) raw(t *testing.T, prefix string) []byte {
	t.Helper()
	for _, x := range f.exchanges {
		if strings.HasPrefix(x.Name, prefix) {
			return x.Response
		}
	}
	t.Fatalf("no exchange %s", prefix)
	return nil
}

func (f recording) exchange(t *testing.T, prefix string) pyroscopetest.Exchange {
	t.Helper()
	for _, x := range f.exchanges {
		if strings.HasPrefix(x.Name, prefix) {
			return x
		}
	}
	t.Fatalf("no exchange %s", prefix)
	return pyroscopetest.Exchange{}
}

// rawSeriesSums sums a recorded SelectSeries answer per label value
// without the client: generic maps, timestamps parsed from their strings.
func rawSeriesSums(t *testing.T, body []byte, label string) (map[string]int64, map[string][]int64) {
	t.Helper()
	var v map[string]any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	sums, stamps := map[string]int64{}, map[string][]int64{}
	series, _ := v["series"].([]any)
	for _, s := range series {
		m := s.(map[string]any)
		key := ""
		if ls, ok := m["labels"].([]any); ok {
			for _, l := range ls {
				lm := l.(map[string]any)
				if lm["name"] == label {
					key = lm["value"].(string)
				}
			}
		}
		for _, p := range m["points"].([]any) {
			pm := p.(map[string]any)
			n, err := pm["value"].(json.Number).Int64()
			if err != nil {
				t.Fatal(err)
			}
			ts, err := strconv.ParseInt(pm["timestamp"].(string), 10, 64)
			if err != nil {
				t.Fatalf("timestamp %v: %v", pm["timestamp"], err)
			}
			sums[key] += n
			stamps[key] = append(stamps[key], ts)
		}
	}
	return sums, stamps
}

// rawProfileTotal sums the sample values of a pprof protobuf without the
// pprof package: Profile field 2 is a Sample, Sample field 2 its values.
func rawProfileTotal(t *testing.T, b []byte) (total int64, samples int) {
	t.Helper()
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			t.Fatal("bad tag")
		}
		b = b[n:]
		m := protowire.ConsumeFieldValue(num, typ, b)
		if m < 0 {
			t.Fatal("bad field")
		}
		if num == 2 && typ == protowire.BytesType {
			s, _ := protowire.ConsumeBytes(b)
			samples++
			for len(s) > 0 {
				sn, st, k := protowire.ConsumeTag(s)
				s = s[k:]
				if sn == 2 && st == protowire.BytesType {
					packed, k2 := protowire.ConsumeBytes(s)
					for len(packed) > 0 {
						v, k3 := protowire.ConsumeVarint(packed)
						total += int64(v)
						packed = packed[k3:]
					}
					s = s[k2:]
					continue
				}
				if sn == 2 && st == protowire.VarintType {
					v, k2 := protowire.ConsumeVarint(s)
					total += int64(v)
					s = s[k2:]
					continue
				}
				s = s[protowire.ConsumeFieldValue(sn, st, s):]
			}
		}
		b = b[m:]
	}
	return total, samples
}

func total(p *profile.Profile) int64 {
	var n int64
	for _, s := range p.Sample {
		n += s.Value[0]
	}
	return n
}

// through sums the samples whose stack has fn.
func through(p *profile.Profile, fn string) int64 {
	var n int64
	for _, s := range p.Sample {
		if slices.ContainsFunc(s.Location, func(l *profile.Location) bool {
			return slices.ContainsFunc(l.Line, func(ln profile.Line) bool { return ln.Function.Name == fn })
		}) {
			n += s.Value[0]
		}
	}
	return n
}

func q(selector string) pyroscope.Query {
	return pyroscope.Query{ProfileType: pyroscope.CPUProfileType, Selector: selector, Start: start, End: end}
}

func sel(ms ...pyroscope.Matcher) string { return pyroscope.Selector(service, ms...) }

func run(id string) pyroscope.Matcher { return pyroscope.Matcher{Name: "k6_test_run_id", Value: id} }

func newClient(t *testing.T, url string, opts ...pyroscope.Option) *pyroscope.Client {
	t.Helper()
	c, err := pyroscope.NewClient(url, &http.Client{}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestReplay exercises every recorded exchange the command needs through
// the client (19, a GET, through net/http) and checks the answers against the recorded raw
// bodies, decoded another way, and the fixtures README's figures.
func TestReplay(t *testing.T) {
	f := load(t)
	if len(f.exchanges) != 37 {
		t.Fatalf("%d exchanges, the README lists 37", len(f.exchanges))
	}
	srv := pyroscopetest.NewServer(t, f.exchanges)
	c := newClient(t, srv.URL)
	ctx := context.Background()

	t.Run("02-04-label-values", func(t *testing.T) {
		for _, tc := range []struct {
			label string
			want  []string
		}{
			{"k6_test_run_id", []string{"fx1", "fx2"}},
			{"k6_scenario", []string{"off_peak", "rush_hour"}},
			{"k6_name", []string{"http://127.0.0.1:18080/", "http://127.0.0.1:18080/bike", "http://127.0.0.1:18080/car", "http://127.0.0.1:18080/scooter"}},
		} {
			got, err := c.LabelValues(ctx, tc.label, q(sel()))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("%s values %q, want %q", tc.label, got, tc.want)
			}
		}
	})
	t.Run("05-07-select-series", func(t *testing.T) {
		readme := map[string]map[string]string{
			"k6_scenario":    {"rush_hour": "34.72", "off_peak": "12.14", "": "1.03"},
			"k6_name":        {"http://127.0.0.1:18080/car": "26.20", "http://127.0.0.1:18080/scooter": "16.77", "http://127.0.0.1:18080/bike": "3.88", "": "1.03", "http://127.0.0.1:18080/": "0.01"},
			"k6_test_run_id": {"fx1": "23.77", "fx2": "23.09", "": "1.03"},
		}
		files := map[string]string{"k6_scenario": "05-", "k6_name": "06-", "k6_test_run_id": "07-"}
		for label, want := range readme {
			series, err := c.SelectSeries(ctx, q(sel()), []string{label}, 15*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			rawSums, rawStamps := rawSeriesSums(t, f.raw(t, files[label]), label)
			if len(series) != len(want) {
				t.Errorf("by %s: %d series, want %d", label, len(series), len(want))
			}
			for _, s := range series {
				v := s.Labels[label]
				if got := int64(s.Sum()); got != rawSums[v] || got != cpu(want[v]) {
					t.Errorf("by %s: %q sums %d ns; raw answer %d, README %s s", label, v, got, rawSums[v], want[v])
				}
				var stamps []int64
				for _, p := range s.Points {
					stamps = append(stamps, p.Time.UnixMilli())
				}
				if !slices.Equal(stamps, rawStamps[v]) {
					t.Errorf("by %s: %q stamps %v, raw %v", label, v, stamps, rawStamps[v])
				}
			}
		}
	})
	t.Run("09,11-merge-profile", func(t *testing.T) {
		for _, tc := range []struct {
			run, protoFile, total, findNearest, car string
		}{
			{"fx1", "09-", "23.77", "23.73", "13.43"},
			{"fx2", "11-", "23.09", "22.97", "12.76"},
		} {
			p, err := c.SelectMergeProfile(ctx, q(sel(run(tc.run))))
			if err != nil {
				t.Fatal(err)
			}
			rawTotal, rawSamples := rawProfileTotal(t, f.raw(t, tc.protoFile))
			if got := total(p); got != rawTotal || got != cpu(tc.total) || len(p.Sample) != rawSamples {
				t.Errorf("%s: total %d ns in %d samples; raw protobuf %d in %d, README %s s", tc.run, got, len(p.Sample), rawTotal, rawSamples, tc.total)
			}
			if got := through(p, "main.findNearestVehicle"); got != cpu(tc.findNearest) {
				t.Errorf("%s: %d ns through findNearestVehicle, README %s s", tc.run, got, tc.findNearest)
			}
			if got := through(p, "main.handleCar"); got != cpu(tc.car) {
				t.Errorf("%s: %d ns through handleCar, README %s s", tc.run, got, tc.car)
			}
			if p.SampleType[0].Type != "cpu" || p.SampleType[0].Unit != "nanoseconds" || p.Period != 1e9 || p.TimeNanos != end.UnixNano() {
				t.Errorf("%s: header %v period %d time %d", tc.run, p.SampleType[0], p.Period, p.TimeNanos)
			}
			for _, s := range p.Sample {
				if len(s.Label) > 0 {
					t.Errorf("%s: a merged profile sample has labels %v", tc.run, s.Label)
				}
			}
			if p.Mapping[0].File != "rideshare" {
				t.Errorf("%s: mapping %+v", tc.run, p.Mapping[0])
			}
		}
	})
	t.Run("12,23-34-merge-profile-per-row", func(t *testing.T) {
		name := func(path string) pyroscope.Matcher {
			return pyroscope.Matcher{Name: "k6_name", Value: "http://127.0.0.1:18080" + path}
		}
		scen := func(s string) pyroscope.Matcher { return pyroscope.Matcher{Name: "k6_scenario", Value: s} }
		// Each run's rows, in the order of rows, their exchanges and the
		// README's CPU seconds.
		rows := []pyroscope.Matcher{scen("rush_hour"), scen("off_peak"), name("/"), name("/bike"), name("/car"), name("/scooter")}
		type merge struct {
			file, readme string
			ms           []pyroscope.Matcher
		}
		merges := []merge{{"34-", "1.03", []pyroscope.Matcher{run("")}}}
		for _, r := range []struct {
			id            string
			files, readme [6]string
		}{
			{"fx1", [6]string{"12-", "23-", "24-", "25-", "26-", "27-"}, [6]string{"17.66", "6.11", "0.00", "2.02", "13.44", "8.31"}},
			{"fx2", [6]string{"29-", "28-", "30-", "31-", "32-", "33-"}, [6]string{"17.06", "6.03", "0.01", "1.86", "12.76", "8.46"}},
		} {
			for i, m := range rows {
				merges = append(merges, merge{r.files[i], r.readme[i], []pyroscope.Matcher{run(r.id), m}})
			}
		}
		for _, tc := range merges {
			p, err := c.SelectMergeProfile(ctx, q(sel(tc.ms...)))
			if err != nil {
				t.Fatalf("%s: %v", tc.file, err)
			}
			rawTotal, _ := rawProfileTotal(t, f.raw(t, tc.file))
			if got := total(p); got != rawTotal || got != cpu(tc.readme) {
				t.Errorf("%s: total %d ns, raw %d, README %s s", tc.file, got, rawTotal, tc.readme)
			}
		}
	})
	t.Run("13-16-unknown-service-is-empty", func(t *testing.T) {
		other := pyroscope.Selector("no-such-service")
		vs, err := c.LabelValues(ctx, "k6_test_run_id", q(other))
		if err != nil || len(vs) != 0 {
			t.Errorf("LabelValues = %q, %v; want none, no error", vs, err)
		}
		series, err := c.SelectSeries(ctx, q(other), []string{"k6_scenario"}, 15*time.Second)
		if err != nil || len(series) != 0 {
			t.Errorf("SelectSeries = %v, %v; want none, no error", series, err)
		}
		p, err := c.SelectMergeProfile(ctx, q(other))
		if err != nil || len(p.Sample) != 0 || len(p.SampleType) != 0 {
			t.Errorf("SelectMergeProfile = %v, %v; want an empty profile, no error", p, err)
		}
	})
	t.Run("17-18-bad-selector", func(t *testing.T) {
		_, err := c.SelectSeries(ctx, q(`{service_name="rideshare.k6labels",k6_scenario=}`), []string{"k6_name"}, 15*time.Second)
		checkConnectError(t, err, "SelectSeries", `parsing label selector "{service_name=\"rideshare.k6labels\",k6_scenario=}": 1:48: parse error: unexpected "}" in label matching, expected string`)
		_, err = c.SelectMergeProfile(ctx, q(`{service_name="rideshare.k6labels"`))
		checkConnectError(t, err, "SelectMergeProfile", "1:35: parse error: unexpected end of input inside braces")
	})
	t.Run("19-get-on-post-only-endpoint", func(t *testing.T) {
		resp, err := http.Get(srv.URL + "/querier.v1.QuerierService/SelectMergeProfile")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "POST" {
			t.Errorf("GET: %s, Allow %q; want 405, POST", resp.Status, resp.Header.Get("Allow"))
		}
	})
	t.Run("35-37-exact-run-window", func(t *testing.T) {
		exact := pyroscope.Query{ProfileType: pyroscope.CPUProfileType, Selector: sel(run("fx1")), Start: fx1Start, End: fx1End}
		series, err := c.SelectSeries(ctx, exact, nil, 15*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if len(series) != 1 || len(series[0].Labels) != 0 || int64(series[0].Sum()) != cpu("23.77") || !series[0].Points[0].Time.Equal(fx1Start) {
			t.Errorf("exact window series: %+v; want all of fx1 (23.77 s) in one unlabelled point at the start", series)
		}
		p, err := c.SelectMergeProfile(ctx, exact)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Sample) != 0 || len(p.SampleType) != 1 || p.SampleType[0].Type != "cpu" {
			t.Errorf("exact window merged profile: %d samples, types %v; want none and cpu", len(p.Sample), p.SampleType)
		}
		by1s, err := c.SelectSeries(ctx, q(sel()), []string{"k6_test_run_id"}, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		rawSums, _ := rawSeriesSums(t, f.raw(t, "36-"), "k6_test_run_id")
		for _, s := range by1s {
			id := s.Labels["k6_test_run_id"]
			if int64(s.Sum()) != rawSums[id] {
				t.Errorf("step 1s: %q sums %v, raw %d", id, s.Sum(), rawSums[id])
			}
			for _, pt := range s.Points {
				if sec := pt.Time.Unix(); sec != 1796234561 && sec != 1796234591 && sec != 1796234621 {
					t.Errorf("step 1s: %q point at %d, the README says profiles are stamped within 560-561, 590-591, 620-621", id, sec)
				}
			}
		}
	})

	// The client asks what the command needs; the other recordings
	// document the API (label names, JSON profiles, profile types, series,
	// flame graphs): never asked.
	unasked := []string{"01-", "08-", "10-", "15-", "20-", "21-", "22-"}
	hits := srv.Hits()
	for _, x := range f.exchanges {
		documentary := slices.ContainsFunc(unasked, func(p string) bool { return strings.HasPrefix(x.Name, p) })
		if (hits[x.Name] == 0) != documentary {
			t.Errorf("exchange %s asked %d times", x.Name, hits[x.Name])
		}
	}
	if n := srv.Unmatched(); n != 0 {
		t.Errorf("%d requests matched no exchange", n)
	}
}

func checkConnectError(t *testing.T, err error, procedure, msgPart string) {
	t.Helper()
	var pe *pyroscope.Error
	if !errors.As(err, &pe) {
		t.Fatalf("%s: error %v (%T), want a *pyroscope.Error", procedure, err, err)
	}
	if pe.Status != http.StatusBadRequest || pe.Code != "invalid_argument" || pe.Procedure != procedure || !strings.Contains(pe.Message, msgPart) {
		t.Errorf("%s: %+v; want 400 invalid_argument with %q", procedure, pe, msgPart)
	}
	if !strings.Contains(err.Error(), msgPart) || !strings.Contains(err.Error(), "invalid_argument") {
		t.Errorf("message %q lacks the server's message", err)
	}
}

// TestUnreachable: a closed port on 127.0.0.1 gives ErrUnreachable with the URL.
func TestUnreachable(t *testing.T) {
	url := fixture.ClosedURL(t)
	c := newClient(t, url)
	_, err := c.SelectSeries(context.Background(), q(sel()), nil, 15*time.Second)
	if !errors.Is(err, pyroscope.ErrUnreachable) || !strings.Contains(err.Error(), url) || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("error %v; want ErrUnreachable naming %s and the refusal", err, url)
	}
}

// TestNotPyroscope: a server that answers like exchange 19 (405, no body)
// or with an HTML 404 is named with its status and the hint about the URL.
func TestNotPyroscope(t *testing.T) {
	f := load(t)
	x19 := f.exchange(t, "19-")
	x09 := f.exchange(t, "09-")
	srv := pyroscopetest.NewServer(t, nil)
	srv.Add(pyroscopetest.Exchange{Name: "405 as 19", Method: http.MethodPost, Path: x09.Path, ContentType: x09.ContentType, Body: x09.Body,
		Status: x19.Status, Header: x19.Header, Response: x19.Response})
	srv.Add(pyroscopetest.Exchange{Name: "html 404", Method: http.MethodPost, Path: "/querier.v1.QuerierService/LabelValues", ContentType: "application/json",
		Body:   []byte(`{"name":"k6_scenario","matchers":["{service_name=\"rideshare.k6labels\"}"],"start":1796234535000,"end":1796234640000}`),
		Status: 404, Header: http.Header{"Content-Type": {"text/html"}}, Response: []byte("<h1>Not Found</h1>")})
	c := newClient(t, srv.URL)
	_, err := c.SelectMergeProfile(context.Background(), q(sel(run("fx1"))))
	var pe *pyroscope.Error
	if !errors.As(err, &pe) || pe.Status != 405 || pe.Code != "" || !strings.Contains(err.Error(), "is the URL a Pyroscope server") {
		t.Errorf("405: %v", err)
	}
	_, err = c.LabelValues(context.Background(), "k6_scenario", q(sel()))
	if !errors.As(err, &pe) || pe.Status != 404 || !strings.Contains(err.Error(), "<h1>Not Found</h1>") || !strings.Contains(err.Error(), srv.URL) {
		t.Errorf("404: %v", err)
	}
}

func TestNewClient(t *testing.T) {
	for _, bad := range []string{"", "pyroscope:4040", "ftp://host", "http://", "http://[::1"} {
		if _, err := pyroscope.NewClient(bad, nil); err == nil {
			t.Errorf("NewClient(%q) accepted", bad)
		}
	}
	c, err := pyroscope.NewClient("http://127.0.0.1:4040/prefix/?x=1", nil)
	if err != nil || c.URL() != "http://127.0.0.1:4040/prefix" {
		t.Errorf("URL() = %q, %v", c.URL(), err)
	}
}

func TestSelector(t *testing.T) {
	got := pyroscope.Selector("a\"b", pyroscope.Matcher{Name: "k6_name", Value: `x\y`}, pyroscope.Matcher{Name: "k6_test_run_id"},
		pyroscope.Matcher{Name: "k6_scenario", Not: true})
	if want := `{service_name="a\"b",k6_name="x\\y",k6_test_run_id="",k6_scenario!=""}`; got != want {
		t.Errorf("Selector = %s, want %s", got, want)
	}
}

// TestFixturesExist guards the relative lookup the other tests rely on.
func TestFixturesExist(t *testing.T) {
	if _, err := os.Stat(filepath.Join(pyroscopetest.Fixtures(t), "pyroscope", "01-label-names.meta.json")); err != nil {
		t.Fatal(err)
	}
}

// TestHeaders: every request is a Connect POST with the tenant header when
// WithTenant is given.
func TestHeaders(t *testing.T) {
	got := make(chan http.Header, 1)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := r.Header.Clone()
		h.Set("X-Method", r.Method)
		got <- h
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte("{}"))
	})}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	c := newClient(t, "http://"+ln.Addr().String(), pyroscope.WithTenant("team-a"))
	if _, err := c.LabelValues(context.Background(), "k6_scenario", q(sel())); err != nil {
		t.Fatal(err)
	}
	h := <-got
	if h.Get("X-Scope-OrgID") != "team-a" || h.Get("Connect-Protocol-Version") != "1" || h.Get("Content-Type") != "application/json" || h.Get("X-Method") != "POST" {
		t.Errorf("headers %v", h)
	}
}
