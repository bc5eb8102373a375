// Package pyroscope is a client of the Grafana Pyroscope query API: the
// Connect endpoints under /querier.v1.QuerierService/ that profilecli and
// Grafana use. It speaks Connect JSON, and protobuf for SelectMergeProfile,
// whose answer is a pprof profile; it imports nothing of Pyroscope's server.
//
// Facts of the API the client keeps: a merged profile carries no labels
// (labels only select: split CPU with SelectSeries group_by); int64s come as
// JSON strings; an unknown service is an empty 200, so every method returns
// empty results, not an error, for it.
package pyroscope

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/pprof/profile"
	"google.golang.org/protobuf/encoding/protowire"
)

// CPUProfileType is the profile type ID of Go CPU time (nanoseconds) as
// pyroscope-go pushes it.
const CPUProfileType = "process_cpu:cpu:nanoseconds:cpu:nanoseconds"

// ServiceLabel is the label that names the service a profile came from.
const ServiceLabel = "service_name"

// servicePath is the Connect service every method is under.
const servicePath = "/querier.v1.QuerierService/"

// DefaultMaxAnswer bounds the bytes of one answer, after any gzip
// decompression, unless [WithMaxAnswer] says otherwise. Real answers are a
// few MB.
const DefaultMaxAnswer = 64 << 20

// DefaultTimeout bounds one exchange (request, answer and its body) unless
// [WithTimeout] says otherwise. Real queries take 0.1–2 s.
const DefaultTimeout = 30 * time.Second

// MaxRetries is how many times a request is repeated after an answer of
// HTTP 429 or 5xx (but 501), waiting 0.5 s, 1 s, then 2 s, or the answer's
// Retry-After when it asks for at most 10 s: at most 4 attempts in all.
const MaxRetries = 3

// maxRetryAfter bounds the Retry-After the client honours.
const maxRetryAfter = 10 * time.Second

// ErrTooLarge is wrapped by the error of an answer longer than the
// client's bound ([DefaultMaxAnswer], [WithMaxAnswer]).
var ErrTooLarge = errors.New("pyroscope answer too large")

// ErrTimeout is wrapped by the error of an exchange that took longer than
// the client's timeout ([DefaultTimeout], [WithTimeout]).
var ErrTimeout = errors.New("pyroscope answer too slow")

// ErrUnreachable is wrapped by the errors of requests that got no HTTP
// answer: a wrong URL, a server that is down, a refused connection.
var ErrUnreachable = errors.New("pyroscope server unreachable")

// Error is an error answer of the server: a Connect error (Code and
// Message from its JSON body), or another HTTP status (Code empty) from
// something that is not a Pyroscope query API.
type Error struct {
	Procedure string // the method, e.g. "SelectSeries"
	URL       string // the request's URL
	Status    int    // HTTP status
	Code      string // Connect code such as "invalid_argument"; "" if none
	Message   string // the server's message
	Attempts  int    // requests made, when more than one (retries)
}

// Error returns the server's message with the method and status.
func (e *Error) Error() string {
	tries := ""
	if e.Attempts > 1 {
		tries = fmt.Sprintf(" (after %d attempts)", e.Attempts)
	}
	if e.Code != "" {
		return fmt.Sprintf("pyroscope %s: HTTP %d %s%s: %s: %s", e.Procedure, e.Status, http.StatusText(e.Status), tries, e.Code, e.Message)
	}
	msg := fmt.Sprintf("pyroscope %s: HTTP %d %s%s from %s", e.Procedure, e.Status, http.StatusText(e.Status), tries, e.URL)
	if e.Message != "" {
		msg += ": " + e.Message
	}
	switch {
	case e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden:
		return msg + ": check the credentials (--user and K6LABELS_PYROSCOPE_PASSWORD, or K6LABELS_PYROSCOPE_TOKEN) and --tenant"
	case retryable(e.Status):
		return msg + ": the server is busy or failing; try again later"
	}
	return msg + ": is the URL a Pyroscope server (its HTTP port, 4040 by default)?"
}

// Client asks one Pyroscope server. It is safe for concurrent use.
type Client struct {
	base      string
	hc        *http.Client
	tenant    string
	user      string
	password  string
	hasBasic  bool
	token     string
	maxAnswer int64
	timeout   time.Duration
	backoff   time.Duration
}

// An Option configures a [Client].
type Option func(*Client)

// WithTenant sends X-Scope-OrgID: tenant with every request, for servers
// with multi-tenancy on.
func WithTenant(tenant string) Option { return func(c *Client) { c.tenant = tenant } }

// WithBasicAuth sends HTTP basic auth with every request (Grafana Cloud
// Profiles: the stack's user id and an access token). It replaces the
// userinfo of the base URL. Neither appears in any error or URL.
func WithBasicAuth(user, password string) Option {
	return func(c *Client) { c.user, c.password, c.hasBasic = user, password, true }
}

// WithBearerToken sends Authorization: Bearer token with every request.
// The token appears in no error or URL.
func WithBearerToken(token string) Option { return func(c *Client) { c.token = token } }

// WithMaxAnswer bounds one answer to n bytes after decompression (n <= 0:
// [DefaultMaxAnswer]); a longer one is an error wrapping [ErrTooLarge].
func WithMaxAnswer(n int64) Option { return func(c *Client) { c.maxAnswer = n } }

// WithTimeout bounds each exchange, body included, to d (d <= 0:
// [DefaultTimeout]); a slower one is an error wrapping [ErrTimeout].
func WithTimeout(d time.Duration) Option { return func(c *Client) { c.timeout = d } }

// Redact returns rawURL with any userinfo (user:password@) replaced by
// "xxxxx@", also when rawURL does not parse; other text is unchanged.
func Redact(rawURL string) string {
	i := strings.Index(rawURL, "://")
	if i < 0 {
		i = -3
	}
	rest := rawURL[i+3:]
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	if at := strings.LastIndex(rest[:end], "@"); at >= 0 {
		return rawURL[:i+3] + "xxxxx" + rest[at:]
	}
	return rawURL
}

// NewClient returns a client of the server at baseURL (such as
// http://pyroscope:4040, a path prefix allowed) that sends its requests
// with hc (nil: http.DefaultClient). Userinfo in baseURL becomes basic auth
// and is left out of [Client.URL] and every message. It fails only for a
// malformed URL.
func NewClient(baseURL string, hc *http.Client, opts ...Option) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil {
		return nil, fmt.Errorf("pyroscope URL %q: %w", Redact(baseURL), unwrapURL(err))
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("pyroscope URL %q: want http://host:port or https://host:port", Redact(baseURL))
	}
	if hc == nil {
		hc = http.DefaultClient
	}
	c := &Client{hc: hc, maxAnswer: DefaultMaxAnswer, timeout: DefaultTimeout, backoff: 500 * time.Millisecond}
	if u.User != nil {
		c.user = u.User.Username()
		c.password, _ = u.User.Password()
		c.hasBasic = true
		u.User = nil
	}
	u.RawQuery, u.Fragment = "", ""
	c.base = strings.TrimSuffix(u.String(), "/")
	for _, o := range opts {
		o(c)
	}
	if c.maxAnswer <= 0 {
		c.maxAnswer = DefaultMaxAnswer
	}
	if c.timeout <= 0 {
		c.timeout = DefaultTimeout
	}
	if c.backoff <= 0 {
		c.backoff = 500 * time.Millisecond
	}
	return c, nil
}

// URL returns the server's base URL as the client uses it, without
// userinfo.
func (c *Client) URL() string { return c.base }

// Query is what most methods select: profiles of ProfileType whose labels
// match Selector (such as {service_name="checkout"}) between Start and End.
// The API has millisecond resolution.
type Query struct {
	ProfileType string // e.g. CPUProfileType; ignored by label queries
	Selector    string // a label selector; see Selector
	Start, End  time.Time
}

// A Matcher selects the profiles whose label Name equals Value; an empty
// Value selects the profiles without that label. Not selects the others
// (name!="value"; name!="" selects the profiles with the label).
type Matcher struct {
	Name, Value string
	Not         bool
}

// Selector returns the label selector {service_name="service",name="value",…}
// with the matchers in their order, values quoted as Go strings.
func Selector(service string, ms ...Matcher) string {
	var b strings.Builder
	b.WriteString("{" + ServiceLabel + "=")
	b.WriteString(strconv.Quote(service))
	for _, m := range ms {
		op := "="
		if m.Not {
			op = "!="
		}
		b.WriteString("," + m.Name + op)
		b.WriteString(strconv.Quote(m.Value))
	}
	b.WriteString("}")
	return b.String()
}

// call posts body (JSON unless contentType says otherwise) to procedure
// and returns the answer's body; non-200 answers become errors. Answers of
// HTTP 429 and 5xx are retried (see [MaxRetries]).
func (c *Client) call(ctx context.Context, procedure, contentType string, body []byte) ([]byte, error) {
	wait := c.backoff
	for attempt := 0; ; attempt++ {
		data, retryAfter, err := c.once(ctx, procedure, contentType, body)
		var pe *Error
		isAnswer := errors.As(err, &pe)
		if err == nil || attempt == MaxRetries || !isAnswer || !retryable(pe.Status) {
			if err != nil && pe != nil && attempt > 0 {
				pe.Attempts = attempt + 1
			}
			return data, err
		}
		d := wait
		if retryAfter > 0 && retryAfter <= maxRetryAfter {
			d = retryAfter
		}
		wait *= 2
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("pyroscope %s: %w (after %v)", procedure, ctx.Err(), err)
		case <-t.C:
		}
	}
}

// retryable tells whether an answer's status is worth a retry: too many
// requests, and server errors but "not implemented".
func retryable(status int) bool {
	return status == http.StatusTooManyRequests || status >= 500 && status != http.StatusNotImplemented
}

// once makes one exchange within the client's timeout.
func (c *Client) once(ctx context.Context, procedure, contentType string, body []byte) ([]byte, time.Duration, error) {
	u := c.base + servicePath + procedure
	ctx, cancel := context.WithTimeoutCause(ctx, c.timeout, ErrTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, 0, fmt.Errorf("pyroscope %s: %w", procedure, unwrapURL(err))
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Connect-Protocol-Version", "1")
	if c.tenant != "" {
		req.Header.Set("X-Scope-OrgID", c.tenant)
	}
	if c.hasBasic {
		req.SetBasicAuth(c.user, c.password)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if err := c.ctxErr(ctx, procedure); err != nil {
			return nil, 0, err
		}
		return nil, 0, fmt.Errorf("%w at %s (%s: %v)", ErrUnreachable, c.base, procedure, unwrapURL(err))
	}
	defer resp.Body.Close()
	// resp.Body is already decompressed when the server sent gzip: the
	// bound is on what is held in memory.
	data, err := io.ReadAll(io.LimitReader(resp.Body, c.maxAnswer+1))
	if err != nil {
		if err := c.ctxErr(ctx, procedure); err != nil {
			return nil, 0, err
		}
		return nil, 0, fmt.Errorf("pyroscope %s: reading the answer from %s: %v", procedure, c.base, err)
	}
	if int64(len(data)) > c.maxAnswer {
		return nil, 0, fmt.Errorf("pyroscope %s: %w: the answer from %s is longer than %s (--pyroscope-max-answer): is the URL the Pyroscope server's, and the window (--start, --end, --since) no longer than needed?",
			procedure, ErrTooLarge, c.base, FormatBytes(c.maxAnswer))
	}
	if resp.StatusCode != http.StatusOK {
		var after time.Duration
		if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && secs >= 0 {
			after = time.Duration(secs) * time.Second
		}
		e := answerError(procedure, u, resp, data)
		e.Message = c.scrub(e.Message)
		return nil, after, e
	}
	return data, 0, nil
}

// ctxErr returns the error of an exchange cut short by its context: the
// client's timeout, or the caller's cancellation; nil otherwise.
func (c *Client) ctxErr(ctx context.Context, procedure string) error {
	if ctx.Err() == nil {
		return nil
	}
	if cause := context.Cause(ctx); errors.Is(cause, ErrTimeout) {
		return fmt.Errorf("pyroscope %s: %w: no complete answer from %s within %s (--timeout)", procedure, ErrTimeout, c.base, c.timeout)
	}
	return fmt.Errorf("pyroscope %s: %w", procedure, ctx.Err())
}

// FormatBytes returns n in the largest binary unit that divides it, such
// as "64MiB", the form --pyroscope-max-answer takes.
func FormatBytes(n int64) string {
	for _, u := range []struct {
		s    string
		size int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.size && n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + u.s
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}

// ParseBytes parses a size such as 64MiB, 512KiB, 1GiB or 1048576 (bytes).
func ParseBytes(s string) (int64, error) {
	units := []struct {
		s    string
		size int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}}
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range units {
		if strings.HasSuffix(t, u.s) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.s)), u.size
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n <= 0 || n > math.MaxInt64/mult {
		return 0, fmt.Errorf("size %q: want a positive number of bytes such as 64MiB, 512KiB or 1GiB", s)
	}
	return n * mult, nil
}

// unwrapURL drops the *url.Error wrapper, whose text repeats the URL.
func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// scrub replaces the client's secrets in s, such as a server's message
// that echoes the request, with "xxxxx".
func (c *Client) scrub(s string) string {
	var secrets []string
	if c.hasBasic && c.password != "" {
		secrets = append(secrets, c.password, base64.StdEncoding.EncodeToString([]byte(c.user+":"+c.password)))
	}
	if c.token != "" {
		secrets = append(secrets, c.token)
	}
	for _, x := range secrets {
		s = strings.ReplaceAll(s, x, "xxxxx")
	}
	return s
}

// answerError makes the error of a non-200 answer.
func answerError(procedure, u string, resp *http.Response, data []byte) *Error {
	e := &Error{Procedure: procedure, URL: u, Status: resp.StatusCode}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	var ce struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	if mt == "application/json" && json.Unmarshal(data, &ce) == nil && ce.Code != "" {
		e.Code, e.Message = ce.Code, ce.Message
		return e
	}
	if s := strings.TrimSpace(string(data)); s != "" {
		if len(s) > 200 {
			s = s[:200] + "…"
		}
		e.Message = s
	}
	return e
}

// callJSON posts req as JSON to procedure and decodes the answer into resp.
func (c *Client) callJSON(ctx context.Context, procedure string, req, resp any) error {
	body, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("pyroscope %s: %w", procedure, err)
	}
	data, err := c.call(ctx, procedure, "application/json", body)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, resp); err != nil {
		return fmt.Errorf("pyroscope %s: the answer from %s is not the API's JSON: %w", procedure, c.base, err)
	}
	return nil
}

// labelsRequest is the body of LabelValues.
type labelsRequest struct {
	Name     string   `json:"name,omitempty"`
	Matchers []string `json:"matchers,omitempty"`
	Start    int64    `json:"start"`
	End      int64    `json:"end"`
}

func (q Query) matchers() []string {
	if q.Selector == "" {
		return nil
	}
	return []string{q.Selector}
}

// LabelValues returns the values label name has on the profiles
// q.Selector matches, in the server's order; none for an unknown service.
func (c *Client) LabelValues(ctx context.Context, name string, q Query) ([]string, error) {
	var resp struct {
		Names []string `json:"names"`
	}
	err := c.callJSON(ctx, "LabelValues", labelsRequest{Name: name, Matchers: q.matchers(), Start: q.Start.UnixMilli(), End: q.End.UnixMilli()}, &resp)
	return resp.Names, err
}

type labelPair struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

func pairs(ls []labelPair) map[string]string {
	m := make(map[string]string, len(ls))
	for _, l := range ls {
		m[l.Name] = l.Value
	}
	return m
}

// A Point is the value of a series in one step.
type Point struct {
	Time  time.Time // the end of the step the point sums
	Value float64   // in the profile type's unit (nanoseconds of CPU)
}

// maxSeriesSum bounds the sum of the points of one SelectSeries answer.
const maxSeriesSum = 1 << 62

// ErrBadAnswer is wrapped by the errors for answers whose values no
// Pyroscope server sends (negative or overflowing CPU).
var ErrBadAnswer = errors.New("pyroscope: implausible answer")

// Series is one time series of SelectSeries.
type Series struct {
	// Labels are the group_by labels the series has; a series of the
	// profiles lacking them has none (nil map lookups give "").
	Labels map[string]string
	Points []Point
}

// Sum returns the sum of the series' points, in the profile type's unit.
func (s Series) Sum() float64 {
	var t float64
	for _, p := range s.Points {
		t += p.Value
	}
	return t
}

// SelectSeries returns the sum of q's profiles per step, one series per
// value tuple of groupBy. Each point is stamped with the end of its step,
// and the first step reaches back one step before q.Start.
func (c *Client) SelectSeries(ctx context.Context, q Query, groupBy []string, step time.Duration) ([]Series, error) {
	if step <= 0 {
		return nil, fmt.Errorf("pyroscope SelectSeries: step %s: want a positive step", step)
	}
	req := struct {
		ProfileType string   `json:"profile_typeID"`
		Selector    string   `json:"label_selector"`
		Start       int64    `json:"start"`
		End         int64    `json:"end"`
		GroupBy     []string `json:"group_by,omitempty"`
		Step        float64  `json:"step"`
	}{q.ProfileType, q.Selector, q.Start.UnixMilli(), q.End.UnixMilli(), groupBy, step.Seconds()}
	var resp struct {
		Series []struct {
			Labels []labelPair `json:"labels"`
			Points []struct {
				Value     float64 `json:"value"`
				Timestamp jint    `json:"timestamp"`
			} `json:"points"`
		} `json:"series"`
	}
	if err := c.callJSON(ctx, "SelectSeries", req, &resp); err != nil {
		return nil, err
	}
	out := make([]Series, 0, len(resp.Series))
	var total float64
	for _, s := range resp.Series {
		ser := Series{Labels: pairs(s.Labels)}
		for _, p := range s.Points {
			// CPU nanoseconds: never negative, and summed below 2^62
			// (146 years), so that every sum the command makes fits int64.
			total += p.Value
			if !(p.Value >= 0) || !(total < maxSeriesSum) {
				return nil, fmt.Errorf("%w: SelectSeries: a point of %g (or a sum past 2^62 ns): no CPU time; is %s a Pyroscope server?", ErrBadAnswer, p.Value, c.URL())
			}
			ser.Points = append(ser.Points, Point{Time: time.UnixMilli(int64(p.Timestamp)), Value: p.Value})
		}
		out = append(out, ser)
	}
	return out, nil
}

// selectRequest is SelectMergeProfile's request message.
type selectRequest struct {
	ProfileType string
	Selector    string
	Start, End  int64 // ms
}

// marshal encodes the request as protobuf (querier.v1 field numbers).
func (r selectRequest) marshal() []byte {
	var b []byte
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendString(b, r.ProfileType)
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	b = protowire.AppendString(b, r.Selector)
	b = protowire.AppendTag(b, 3, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(r.Start))
	b = protowire.AppendTag(b, 4, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(r.End))
	return b
}

// SelectMergeProfile returns the profiles q selects merged into one pprof
// profile. It carries no labels. An unknown service gives a profile with no
// sample types; a known one with nothing in the window, no samples.
func (c *Client) SelectMergeProfile(ctx context.Context, q Query) (*profile.Profile, error) {
	r := selectRequest{ProfileType: q.ProfileType, Selector: q.Selector, Start: q.Start.UnixMilli(), End: q.End.UnixMilli()}
	data, err := c.call(ctx, "SelectMergeProfile", "application/proto", r.marshal())
	if err != nil {
		return nil, err
	}
	if len(data) == 0 {
		return &profile.Profile{}, nil
	}
	p, err := profile.ParseData(data)
	if err != nil {
		return nil, fmt.Errorf("pyroscope SelectMergeProfile: the profile from %s: %w", c.base, err)
	}
	return p, nil
}

// jint is an int64 of protojson: a JSON string, or a number.
type jint int64

func (j *jint) UnmarshalJSON(b []byte) error {
	s := string(b)
	if s == "null" {
		return nil
	}
	if uq, err := strconv.Unquote(s); err == nil {
		s = uq
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		f, ferr := strconv.ParseFloat(s, 64)
		if ferr != nil || f != math.Trunc(f) {
			return fmt.Errorf("int64 %s: %w", b, err)
		}
		n = int64(f)
	}
	*j = jint(n)
	return nil
}
