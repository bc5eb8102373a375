// Package pyroscopetest replays recorded exchanges with a real Pyroscope
// server on a real 127.0.0.1 listener, for tests of code that asks one.
//
// An exchange is three files in a folder: NAME.request.json (method, path,
// content type, body or body_base64), NAME.meta.json (status, headers,
// response_file) and the response body. A request is answered by the
// exchange with its method, path, content type and body (JSON compared
// after normalization, protobuf byte for byte), or by an answer derived
// from recorded ones (see deriveSeries, deriveGroupedSeries,
// deriveLabelValues) or from a labelled profile (AddProfile); any other
// request fails the test with a diff against the closest recorded one.
package pyroscopetest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/k6labels/k6labels/cmd/k6labels/internal/fixture"
	"google.golang.org/protobuf/encoding/protowire"
)

// Exchange is one recorded request and the server's answer to it.
type Exchange struct {
	Name        string // the files' common prefix, e.g. "07-select-series-by-k6_test_run_id"
	Method      string
	Path        string
	ContentType string // of the request; "" for none
	Body        []byte // of the request
	Status      int
	Header      http.Header // of the answer, as recorded
	Response    []byte
	Synthetic   bool // made by a test with Add, not recorded
}

// MergeSelector returns the label selector a SelectMergeProfile request in
// protobuf asked for (SelectMergeProfileRequest field 2), and whether x is
// such a request.
func (x Exchange) MergeSelector() (string, bool) {
	if !strings.HasSuffix(x.Path, "/SelectMergeProfile") || mediaType(x.ContentType) != "application/proto" {
		return "", false
	}
	for b := x.Body; len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			break
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			break
		}
		if num == 2 && typ == protowire.BytesType {
			v, _ := protowire.ConsumeBytes(b[n:])
			return string(v), true
		}
		b = b[n+m:]
	}
	return "", false
}

// Fixtures returns the recorded fixtures folder (the one holding README.md
// and pyroscope/), testdata/fixtures of the command's module. It fails the
// test when there is none.
func Fixtures(t testing.TB) string {
	t.Helper()
	return fixture.Dir(t)
}

// Load reads every exchange of dir (its *.meta.json files), in name order.
func Load(dir string) ([]Exchange, error) {
	metas, err := filepath.Glob(filepath.Join(dir, "*.meta.json"))
	if err != nil {
		return nil, err
	}
	if len(metas) == 0 {
		return nil, fmt.Errorf("no *.meta.json exchanges in %s", dir)
	}
	sort.Strings(metas)
	out := make([]Exchange, 0, len(metas))
	for _, m := range metas {
		x, err := loadOne(dir, strings.TrimSuffix(filepath.Base(m), ".meta.json"))
		if err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, nil
}

func loadOne(dir, name string) (Exchange, error) {
	var meta struct {
		Status       int               `json:"status"`
		Headers      map[string]string `json:"headers"`
		RequestFile  string            `json:"request_file"`
		ResponseFile string            `json:"response_file"`
	}
	var req struct {
		Method      string  `json:"method"`
		Path        string  `json:"path"`
		ContentType *string `json:"content_type"`
		Body        *string `json:"body"`
		BodyBase64  string  `json:"body_base64"`
	}
	x := Exchange{Name: name, Header: http.Header{}}
	if err := readJSON(filepath.Join(dir, name+".meta.json"), &meta); err != nil {
		return x, err
	}
	if err := readJSON(filepath.Join(dir, meta.RequestFile), &req); err != nil {
		return x, err
	}
	x.Method, x.Path, x.Status = req.Method, req.Path, meta.Status
	if req.ContentType != nil {
		x.ContentType = *req.ContentType
	}
	switch {
	case req.BodyBase64 != "":
		b, err := base64.StdEncoding.DecodeString(req.BodyBase64)
		if err != nil {
			return x, fmt.Errorf("%s: body_base64: %w", meta.RequestFile, err)
		}
		x.Body = b
	case req.Body != nil:
		x.Body = []byte(*req.Body)
	}
	for k, v := range meta.Headers {
		// The listener frames the body itself.
		if k != "Content-Length" && k != "Transfer-Encoding" {
			x.Header.Set(k, v)
		}
	}
	resp, err := os.ReadFile(filepath.Join(dir, meta.ResponseFile))
	if err != nil {
		return x, err
	}
	x.Response = resp
	return x, nil
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// Server is a replaying server listening on 127.0.0.1.
type Server struct {
	URL string // e.g. http://127.0.0.1:40123

	t   testing.TB
	srv *http.Server

	mu        sync.Mutex
	exchanges []Exchange
	hits      map[string]int
	unmatched int
	clock     func() time.Time
	window    time.Duration
	now       time.Time // clock() when the request being answered came
	pushed    []pushed  // AddProfile's
}

// NewServer starts a server that replays exchanges and is closed when the
// test ends. Unmatched requests fail t (from the server's goroutine, with
// t.Errorf) and get HTTP 404 with a Connect error naming the diff.
func NewServer(t testing.TB, exchanges []Exchange) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{URL: "http://" + ln.Addr().String(), t: t, exchanges: slices.Clone(exchanges), hits: map[string]int{}}
	s.srv = &http.Server{Handler: s}
	go func() { _ = s.srv.Serve(ln) }()
	t.Cleanup(func() { s.srv.Close() })
	return s
}

// Add makes the server answer x too (x.Synthetic is set): for a request no
// recording has, whose answer a test derives from recorded ones.
func (s *Server) Add(x Exchange) {
	x.Synthetic = true
	if x.Header == nil {
		x.Header = http.Header{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.exchanges = append(s.exchanges, x)
}

// Hits returns how many requests each exchange has answered, by name.
func (s *Server) Hits() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.hits))
	for k, v := range s.hits {
		out[k] = v
	}
	return out
}

// Unmatched returns how many requests matched no exchange.
func (s *Server) Unmatched() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.unmatched
}

// ServeHTTP answers r with the exchange it matches.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	ct := mediaType(r.Header.Get("Content-Type"))
	got := normalize(ct, body)
	s.mu.Lock()
	if s.clock != nil {
		s.now = s.clock()
	}
	var match *Exchange
	for i := range s.exchanges {
		x := &s.exchanges[i]
		if x.Method == r.Method && x.Path == r.URL.Path && mediaType(x.ContentType) == ct && normalize(ct, x.Body) == got {
			match = x
			break
		}
	}
	if match == nil && ct == "application/json" && r.Method == http.MethodPost {
		var resp []byte
		var from string
		var ok bool
		switch {
		case strings.HasSuffix(r.URL.Path, "/SelectSeries"):
			if resp, from, ok = s.deriveSeries(body); !ok {
				resp, from, ok = s.deriveGroupedSeries(body)
			}
		case strings.HasSuffix(r.URL.Path, "/LabelValues"):
			resp, from, ok = s.deriveLabelValues(body)
		}
		if ok {
			s.hits["derived from "+from]++
			s.mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			w.Write(resp)
			return
		}
	}
	if match == nil {
		if resp, rct, from, ok := s.fromProfile(r.URL.Path, ct, body); ok {
			s.hits[from]++
			s.mu.Unlock()
			w.Header().Set("Content-Type", rct)
			w.Write(resp)
			return
		}
		s.unmatched++
		msg := s.diff(r.Method, r.URL.Path, ct, got)
		s.mu.Unlock()
		s.t.Errorf("pyroscopetest: no recorded exchange matches the request\n%s", msg)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, `{"code":"not_found","message":%s}`, strconv.Quote("pyroscopetest: no recorded exchange: "+msg))
		return
	}
	s.hits[match.Name]++
	x := *match
	if strings.HasSuffix(x.Path, "/SelectSeries") && x.Status == http.StatusOK {
		x.Response = s.hideUnuploaded(x.Body, x.Response)
	}
	s.mu.Unlock()
	for k, vs := range x.Header {
		w.Header()[k] = vs
	}
	w.WriteHeader(x.Status)
	w.Write(x.Response)
}

// diff describes a request against the recorded one closest to it.
func (s *Server) diff(method, path, ct, got string) string {
	var best *Exchange
	bestScore := -1
	for i := range s.exchanges {
		x := &s.exchanges[i]
		score := 0
		if x.Path == path {
			score += 4
		}
		if x.Method == method {
			score += 2
		}
		if mediaType(x.ContentType) == ct {
			score++
		}
		if score > bestScore || (score == bestScore && best != nil && commonPrefix(normalize(ct, x.Body), got) > commonPrefix(normalize(ct, best.Body), got)) {
			best, bestScore = x, score
		}
	}
	msg := fmt.Sprintf("  got:  %s %s (%s)\n        %s", method, path, ct, got)
	if best != nil {
		msg += fmt.Sprintf("\n  closest recorded %s: %s %s (%s)\n        %s", best.Name, best.Method, best.Path, mediaType(best.ContentType), normalize(mediaType(best.ContentType), best.Body))
	}
	return msg
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

func mediaType(ct string) string {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return ct
	}
	return mt
}

// normalize returns a canonical text of a body: JSON re-encoded with sorted
// keys and numbers as written, protobuf as its fields, else as is.
func normalize(ct string, body []byte) string {
	switch {
	case ct == "application/json" || json.Valid(body) && len(body) > 0 && ct == "":
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return string(body)
		}
		b, err := json.Marshal(v)
		if err != nil {
			return string(body)
		}
		return string(b)
	case ct == "application/proto" || ct == "application/protobuf":
		return protoText(body)
	}
	return string(body)
}

// protoFields returns the varint fields of a protobuf message by number.
func protoFields(b []byte) map[protowire.Number]uint64 {
	out := map[protowire.Number]uint64{}
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return out
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return out
		}
		if typ == protowire.VarintType {
			out[num], _ = protowire.ConsumeVarint(b[n : n+m])
		}
		b = b[n+m:]
	}
	return out
}

// protoText renders a protobuf message's fields as "n:value" items.
func protoText(b []byte) string {
	var parts []string
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Sprintf("%s (bad protobuf: %x)", strings.Join(parts, " "), b)
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return fmt.Sprintf("%s (bad field %d)", strings.Join(parts, " "), num)
		}
		v := b[n : n+m]
		b = b[n+m:]
		switch typ {
		case protowire.VarintType:
			x, _ := protowire.ConsumeVarint(v)
			parts = append(parts, fmt.Sprintf("%d:%d", num, x))
		case protowire.BytesType:
			x, _ := protowire.ConsumeBytes(v)
			parts = append(parts, fmt.Sprintf("%d:%q", num, x))
		default:
			parts = append(parts, fmt.Sprintf("%d:%x", num, v))
		}
	}
	return strings.Join(parts, " ")
}
