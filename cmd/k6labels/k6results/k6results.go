// Package k6results reads the results k6 writes with --out json=FILE or
// --out csv=FILE (either gzip-compressed or not) and counts the requests
// (http_reqs points, and one per grpc_req_duration point of k6/net/grpc)
// per scenario and request name, named as the k6labels labels name them.
//
// The files are streamed: memory stays bounded by the number of distinct
// (scenario, name) pairs, never by the number of points.
package k6results

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/k6labels/k6labels"
	"github.com/k6labels/k6labels/cmd/k6labels/internal/bounded"
)

// Key names one request row: a k6 scenario and a request name as the
// k6_name label holds it (see [Name]).
type Key struct {
	Scenario string
	Name     string
}

// Results are the request counts of one k6 run's scenarios: its http_reqs,
// and its gRPC calls (a grpc_req_duration point each), together.
type Results struct {
	Format   string        // "json" or "csv"
	Requests map[Key]int64 // requests per scenario and normalized name
	Total    int64         // all requests counted in Requests
	GRPC     int64         // of Total, the gRPC calls'
	// Queries are the requests of Requests by normalized name and query
	// string, bounded per name (see [QueryMix]).
	Queries map[string]*QueryMix
	// LeftOut are the http_reqs without a scenario tag or in a ::setup or
	// ::teardown group: k6's helper does not label them, so their CPU is
	// in no k6 row; they are in neither Requests, Total, Start nor End.
	LeftOut int64
	// Start and End are the times of the first and last http_reqs point:
	// to the nanosecond for json, to the precision of the csv's time format
	// for csv (whole seconds with k6's default, unix).
	Start, End time.Time
	Points     int64 // points of any metric read (json Point lines, csv rows)
	// Outside are the http_reqs in a scenario left out because their time
	// is outside the window of [Options] From and To; AllStart and AllEnd are the
	// time range of those in a scenario, inside the window or not.
	Outside          int64
	AllStart, AllEnd time.Time

	// Methods are the http_reqs of each key by k6's method tag (none
	// when the results carry no method tag).
	Methods map[Key]map[string]int64

	from, to time.Time // the window of Options; zero: none

	// Latency is k6's http_req_duration and http_req_waiting per scenario
	// and normalized name, kept when [Options].Latency is set (nil otherwise).
	Latency     map[Key]*Latency
	keepLatency bool

	// Truncated, when not nil, says that the file ends mid-line or
	// mid-gzip-stream, as one k6 is still writing does, and where: the
	// counts are of the complete lines before the cut. Nil: the file is
	// complete.
	Truncated *Cut
}

// ErrNoHTTPReqs is returned, wrapped, for results without any http_reqs
// point: a run without HTTP requests, or a file of another metric set.
var ErrNoHTTPReqs = errors.New("no http_reqs points")

// ErrFormat is returned, wrapped, for input that is neither k6's json nor
// its csv output.
var ErrFormat = errors.New("not k6 results")

// maxLine bounds one json line, so that a hostile or broken file cannot make
// the reader hold an unbounded line in memory.
const maxLine = 16 << 20

// Name returns the k6_name label value that the k6labels middleware makes of
// k6's name tag: the same function, so the two always agree (query string
// dropped from URLs, decoded, cleaned, cut to length).
func Name(tag string) string {
	return k6labels.LabelValue("k6.name", tag)
}

// ReadFile reads k6 results from path with the default [Options]; see
// [ReadFileWith].
func ReadFile(path string) (*Results, error) {
	return ReadFileWith(context.Background(), path, Options{})
}

// ReadFileWith reads k6 results from path; see [ReadWith].
func ReadFileWith(ctx context.Context, path string, o Options) (*Results, error) {
	f, err := bounded.Open(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("k6 results: %w (give the file of k6 run --out json=FILE or --out csv=FILE)", err)
	}
	defer f.Close()
	res, err := ReadWith(ctx, f, o)
	if err != nil {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return nil, fmt.Errorf("k6 results %s: %w", path, err)
	}
	return res, nil
}

// Read reads k6's json or csv output from r with the default [Options];
// see [ReadWith].
func Read(r io.Reader) (*Results, error) {
	return ReadWith(context.Background(), r, Options{})
}

// ReadWith reads k6's json or csv output from r, gzip-compressed or not
// (told by the first bytes), within o.MaxBytes once decompressed, until ctx
// is done. It returns an error wrapping [ErrFormat] for other data or
// implausible points, [ErrNoHTTPReqs] when no http_reqs point is in it, and
// [bounded.ErrTooLarge] past the limit.
func ReadWith(ctx context.Context, r io.Reader, o Options) (*Results, error) {
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.MaxFlag == "" {
		o.MaxFlag = "--max-k6-bytes"
	}
	dr, done, err := bounded.Decompressed(ctx, r, o.MaxBytes, "the file", o.MaxFlag)
	if err != nil {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return nil, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	defer done()
	wl := &wholeLines{r: dr}
	br := bufio.NewReaderSize(wl, 64<<10)
	res := &Results{Requests: map[Key]int64{}, from: o.From, to: o.To, keepLatency: o.Latency}
	head := bytes.Clone(wl.peek(len("metric_name")))
	switch {
	case len(bytes.TrimLeft(head, " \t\r\n")) > 0 && bytes.TrimLeft(head, " \t\r\n")[0] == '{':
		res.Format = "json"
		wl.whole = wholeJSON
		if err = checkSummary(br); err == nil {
			err = res.readJSON(br)
		}
	case string(head) == "metric_name":
		res.Format = "csv"
		err = res.readCSV(br, wl)
	case len(head) < len("metric_name") && errors.Is(wl.err, io.ErrUnexpectedEOF):
		return nil, fmt.Errorf("the gzip stream ends before its first line: %s: %s", StillWriting, StillWritingFix)
	default:
		return nil, fmt.Errorf("%w: want the output of k6 run --out json=FILE or --out csv=FILE (optionally gzip), got data starting with %q",
			ErrFormat, head)
	}
	if err != nil {
		return nil, err
	}
	res.Truncated = wl.cut
	if res.Total == 0 && res.Outside > 0 {
		return res, nil // the caller tells the two time ranges apart
	}
	if res.Total == 0 && wl.cut != nil {
		return nil, fmt.Errorf("%w before the cut: %s: %s: %s", ErrNoHTTPReqs, wl.cut, StillWriting, StillWritingFix)
	}
	if res.Total == 0 && res.LeftOut > 0 {
		return nil, fmt.Errorf("%w in a scenario: all %d http_reqs points have no scenario tag or were made in setup() or teardown(); if k6 ran with --system-tags, include scenario and group",
			ErrNoHTTPReqs, res.LeftOut)
	}
	if res.Total == 0 {
		return nil, fmt.Errorf("%w among %d points: did the run send HTTP requests (k6/http), and is this its --out json or --out csv file?",
			ErrNoHTTPReqs, res.Points)
	}
	return res, nil
}

// maxRequests bounds the http_reqs summed (2^53: every count exact in a
// float64, and far past any real run's requests).
const maxRequests = 1 << 53

// add counts value http_reqs of a point stamped t; see [Results.LeftOut]
// for those it leaves out. It refuses values no k6 point has (negative,
// not finite, or past maxRequests in sum) and times outside 2000 to 2100.
func (res *Results) add(scenario, group, name, method string, value float64, t time.Time) error {
	if math.IsNaN(value) || value < 0 || value > maxRequests {
		return fmt.Errorf("http_reqs value %v: k6 counts requests with whole positive values (1 a point): are these k6's results?", value)
	}
	if t.Before(plausibleFirst) || !t.Before(plausibleLast) {
		return fmt.Errorf("time %s is not between 2000 and 2100: is this a k6 run's output?", t.Format(time.RFC3339))
	}
	n := int64(math.Round(value))
	if n <= 0 {
		return nil
	}
	if n > maxRequests-res.Total-res.LeftOut {
		return fmt.Errorf("the http_reqs values sum past 2^53 requests: are these k6's results?")
	}
	if scenario == "" || inGroup(group, "::setup") || inGroup(group, "::teardown") {
		res.LeftOut += n
		return nil
	}
	if !res.inWindow(t, n) {
		return nil
	}
	res.Requests[Key{scenario, Name(name)}] += n
	res.addMethod(Key{scenario, Name(name)}, method, n)
	res.addQuery(name, n)
	res.Total += n
	if res.Start.IsZero() || t.Before(res.Start) {
		res.Start = t
	}
	if t.After(res.End) {
		res.End = t
	}
	return nil
}

// addPoint counts a point of metric: http_reqs by its value, a gRPC call
// (grpcMetric, whose value is its duration) as one request without method.
func (res *Results) addPoint(metric, scenario, group, name, method string, value float64, t time.Time) error {
	if metric != grpcMetric {
		return res.add(scenario, group, name, method, value, t)
	}
	if math.IsNaN(value) || value < 0 {
		return fmt.Errorf("%s value %v: k6 records a call's duration in ms, 0 or more: are these k6's results?", grpcMetric, value)
	}
	before := res.Total
	err := res.add(scenario, group, name, "", 1, t)
	res.GRPC += res.Total - before
	return err
}

// inGroup tells whether k6's group tag is group or a group nested in it.
func inGroup(tag, group string) bool {
	return tag == group || strings.HasPrefix(tag, group+"::")
}

// jsonPoint is the part of a k6 json line that is read.
type jsonPoint struct {
	Type   string `json:"type"`
	Metric string `json:"metric"`
	Data   struct {
		Time  time.Time `json:"time"`
		Value float64   `json:"value"`
		Tags  struct {
			Scenario string `json:"scenario"`
			Group    string `json:"group"`
			Name     string `json:"name"`
			Method   string `json:"method"`
		} `json:"tags"`
	} `json:"data"`
}

var (
	httpReqsMarker = []byte(`"http_reqs"`)
	grpcMarker     = []byte(`"` + grpcMetric + `"`)
	pointMarker    = []byte(`"type":"Point"`)
)

// grpcMetric is the Trend k6/net/grpc adds a point to per call it ends,
// tagged name (the full method, /package.Service/Method) and scenario; its
// method tag is the RPC's name, not an HTTP method, so it is not kept.
const grpcMetric = "grpc_req_duration"

func (res *Results) readJSON(br *bufio.Reader) error {
	var line []byte
	for lineNo := 1; ; lineNo++ {
		var err error
		line, err = readLine(br, line[:0])
		if bytes.Contains(line, pointMarker) {
			res.Points++
		}
		if len(bytes.TrimSpace(line)) > 0 {
			// Only http_reqs lines are decoded: the others are most of the
			// file and need no more than this search.
			if bytes.Contains(line, httpReqsMarker) || bytes.Contains(line, grpcMarker) || res.wantsLatency(line) {
				var p jsonPoint
				if jerr := json.Unmarshal(line, &p); jerr != nil {
					return fmt.Errorf("%w: line %d is not JSON: %v", ErrFormat, lineNo, jerr)
				}
				if p.Type == "Point" && (p.Metric == "http_reqs" || p.Metric == grpcMetric) {
					if aerr := res.addPoint(p.Metric, p.Data.Tags.Scenario, p.Data.Tags.Group, p.Data.Tags.Name, p.Data.Tags.Method, p.Data.Value, p.Data.Time); aerr != nil {
						return fmt.Errorf("%w: line %d: %v", ErrFormat, lineNo, aerr)
					}
				} else if p.Type == "Point" && res.keepLatency && isLatency(p.Metric) {
					res.addLatency(p.Metric, p.Data.Tags.Scenario, p.Data.Tags.Group, p.Data.Tags.Name, p.Data.Value)
				}
			}
		}
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			return fmt.Errorf("line %d: %w", lineNo, err)
		}
	}
}

// readLine appends the next line of br (without its newline) to buf.
func readLine(br *bufio.Reader, buf []byte) ([]byte, error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if len(buf)+len(chunk) > maxLine {
			return buf, fmt.Errorf("%w: a line longer than %d bytes", ErrFormat, maxLine)
		}
		buf = append(buf, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimSuffix(buf, []byte("\n")), err
	}
}

func (res *Results) readCSV(r io.Reader, wl *wholeLines) error {
	rr := &recordReader{r: r}
	cr := csv.NewReader(rr)
	cr.ReuseRecord = true
	cr.FieldsPerRecord = -1
	var fields int
	wl.whole = wholeCSV(&fields)
	header, err := cr.Read()
	if err != nil {
		return fmt.Errorf("%w: csv header: %v", ErrFormat, err)
	}
	fields = len(header)
	col := map[string]int{}
	for i, h := range header {
		col[h] = i
	}
	for _, c := range []string{"metric_name", "timestamp", "metric_value", "scenario", "name"} {
		if _, ok := col[c]; !ok {
			return fmt.Errorf("%w: the csv header has no %s column: %q", ErrFormat, c, header)
		}
	}
	last := slices.Max([]int{col["metric_name"], col["timestamp"], col["metric_value"], col["scenario"], col["name"]})
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if errors.Is(err, bounded.ErrTooLarge) || errors.Is(err, context.Canceled) || errors.Is(err, ErrFormat) {
			return err
		}
		if err != nil {
			return fmt.Errorf("%w: %v", ErrFormat, err)
		}
		rr.mark = cr.InputOffset()
		res.Points++
		if len(rec) <= last {
			continue
		}
		m := rec[col["metric_name"]]
		if m != "http_reqs" && m != grpcMetric {
			if res.keepLatency && isLatency(m) {
				if v, err := strconv.ParseFloat(rec[col["metric_value"]], 64); err == nil {
					res.addLatency(m, rec[col["scenario"]], csvCol(rec, col, "group"), rec[col["name"]], v)
				}
			}
			continue
		}
		ts, err := csvTime(rec[col["timestamp"]])
		if err != nil {
			return fmt.Errorf("%w: csv row %d: %v", ErrFormat, res.Points, err)
		}
		v, err := strconv.ParseFloat(rec[col["metric_value"]], 64)
		if err != nil {
			return fmt.Errorf("%w: csv row %d: metric_value %q", ErrFormat, res.Points, rec[col["metric_value"]])
		}
		if err := res.addPoint(m, rec[col["scenario"]], csvCol(rec, col, "group"), rec[col["name"]], csvCol(rec, col, "method"), v, ts); err != nil {
			return fmt.Errorf("%w: csv row %d: %v", ErrFormat, res.Points, err)
		}
	}
}

// The times a point may have, in json or csv: k6 results from 2000 to 2100.
var (
	plausibleFirst = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	plausibleLast  = time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)
)

// csvTime reads a k6 csv timestamp in any of its time formats
// (K6_CSV_TIME_FORMAT): RFC 3339, or a unix time in seconds, milli-, micro-
// or nanoseconds, told by which unit puts it between 2000 and 2100.
func csvTime(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		if t.Before(plausibleFirst) || !t.Before(plausibleLast) {
			return time.Time{}, fmt.Errorf("timestamp %q is not between 2000 and 2100: is this a k6 run's csv?", s)
		}
		return t.UTC(), nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("timestamp %q is neither a number nor RFC 3339 (K6_CSV_TIME_FORMAT unix, unix_milli, unix_micro, unix_nano, rfc3339 or rfc3339_nano)", s)
	}
	for _, perSec := range []int64{1, 1e3, 1e6, 1e9} {
		sec := f / float64(perSec)
		if !(sec >= float64(plausibleFirst.Unix()) && sec < float64(plausibleLast.Unix())) { // NaN too
			continue
		}
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return time.Unix(n/perSec, n%perSec*(1e9/perSec)).UTC(), nil // exact
		}
		whole, frac := math.Modf(sec)
		return time.Unix(int64(whole), int64(frac*1e9)).UTC(), nil
	}
	return time.Time{}, fmt.Errorf("timestamp %q is no unix time between 2000 and 2100 in seconds, milli-, micro- or nanoseconds: is this a k6 run's csv?", s)
}

// Keys returns the keys of res.Requests, sorted by scenario, then name.
func (res *Results) Keys() []Key {
	keys := make([]Key, 0, len(res.Requests))
	for k := range res.Requests {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b Key) int {
		return cmp.Or(cmp.Compare(a.Scenario, b.Scenario), cmp.Compare(a.Name, b.Name))
	})
	return keys
}
