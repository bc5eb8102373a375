// Package pprofread reads pprof CPU profiles from files and
// /debug/pprof/profile URLs within bounds: the bytes once decompressed,
// the memory once decoded, and the time of a URL's exchange.
package pprofread

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/pprof/profile"

	"github.com/k6labels/k6labels/cmd/k6labels/internal/bounded"
	"github.com/k6labels/k6labels/cmd/k6labels/report"
)

// Defaults of [ReadOptions].
const (
	// DefaultMaxProfileBytes bounds one profile once decompressed: a
	// service's 30 s CPU profile is a few MB, a gzip bomb as many GiB.
	DefaultMaxProfileBytes = 256 << 20
	// DefaultURLMargin is added to a profile URL's seconds (30 when it
	// gives none) for the timeout of the whole exchange.
	DefaultURLMargin = time.Minute
)

// What net/http/pprof records when a URL gives no seconds: a CPU profile
// (/debug/pprof/profile) of 30 s, an execution trace (/debug/pprof/trace)
// of 1 s.
const (
	DefaultProfileDuration = 30 * time.Second
	DefaultTraceDuration   = time.Second
)

// maxURLSeconds bounds a URL's seconds: past it, no exchange is waited for.
const maxURLSeconds = 1e6

// ReadOptions bound what [ReadProfileWith] reads.
type ReadOptions struct {
	MaxBytes  int64         // of a profile once decompressed; 0: DefaultMaxProfileBytes
	MaxFlag   string        // the flag that raises MaxBytes, named in the error; "": --max-profile-bytes
	URLMargin time.Duration // see DefaultURLMargin; 0: DefaultURLMargin
}

// URLSeconds returns how long a /debug/pprof URL records: its seconds
// query parameter, or def without one ([DefaultProfileDuration],
// [DefaultTraceDuration]); an error when seconds is no positive number
// below 10⁶.
func URLSeconds(u *url.URL, def time.Duration) (time.Duration, error) {
	v := u.Query().Get("seconds")
	if v == "" {
		return def, nil
	}
	s, err := strconv.ParseFloat(v, 64)
	if err != nil || !(s > 0 && s < maxURLSeconds) {
		return 0, fmt.Errorf("URL %s: seconds=%q is not a positive number of seconds below %.0f", u.Redacted(), v, float64(maxURLSeconds))
	}
	return time.Duration(s * float64(time.Second)), nil
}

// ReadProfileWith reads a pprof CPU profile from a file or an http(s) URL
// (given its [URLSeconds] and o.URLMargin), decompressing it within o.MaxBytes, and stops when ctx
// is done. It returns an error wrapping [report.ErrNotCPU] for another kind of
// profile, [bounded.ErrTooLarge] past the limit, and [report.ErrBadValues] for
// values no CPU profile has (see [report.CheckValues]).
func ReadProfileWith(ctx context.Context, hc *http.Client, where string, o ReadOptions) (*profile.Profile, error) {
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxProfileBytes
	}
	if o.MaxFlag == "" {
		o.MaxFlag = "--max-profile-bytes"
	}
	if o.URLMargin <= 0 {
		o.URLMargin = DefaultURLMargin
	}
	what := "profile " + where
	var data []byte
	if u, err := url.Parse(where); err == nil && (u.Scheme == "http" || u.Scheme == "https") {
		if data, err = readURL(ctx, hc, u, o, what); err != nil {
			return nil, err
		}
	} else {
		f, err := bounded.Open(ctx, where)
		if err != nil {
			return nil, fmt.Errorf("reading profile: %w (give pprof CPU profile files or /debug/pprof/profile URLs)", err)
		}
		defer f.Close()
		if data, err = bounded.ReadAll(ctx, f, o.MaxBytes, what, o.MaxFlag); err != nil {
			return nil, readErr(ctx, where, err)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, context.Cause(ctx)
	}
	if err := checkDecoded(where, data, o.MaxBytes, o.MaxFlag); err != nil {
		return nil, err
	}
	p, err := profile.ParseData(data)
	if err != nil {
		return nil, fmt.Errorf("profile %s: not a pprof profile: %w (give a CPU profile such as /debug/pprof/profile writes; go tool pprof reads it)", where, err)
	}
	if err := report.CheckCPU(p); err != nil {
		return nil, fmt.Errorf("profile %s: %w", where, err)
	}
	if err := report.CheckValues(p); err != nil {
		return nil, fmt.Errorf("profile %s: %w", where, err)
	}
	return p, nil
}

// errURLTimeout is the cause of a profile URL's context past its time.
var errURLTimeout = errors.New("profile URL timeout")

// readURL reads the decompressed body of a profile URL within its
// URLSeconds and o.URLMargin.
func readURL(ctx context.Context, hc *http.Client, u *url.URL, o ReadOptions, what string) ([]byte, error) {
	secs, err := URLSeconds(u, DefaultProfileDuration)
	if err != nil {
		return nil, fmt.Errorf("reading profile: %w", err)
	}
	timeout := secs + o.URLMargin
	tctx, cancel := context.WithTimeoutCause(ctx, timeout, errURLTimeout)
	defer cancel()
	timedOut := func(err error) error {
		if ctx.Err() == nil && errors.Is(context.Cause(tctx), errURLTimeout) {
			return fmt.Errorf("reading profile %s: no whole answer within %s (its seconds, or 30 s, plus %s): is the service overloaded, or is this no /debug/pprof/profile URL?",
				u.Redacted(), timeout, o.URLMargin)
		}
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		return err
	}
	req, err := http.NewRequestWithContext(tctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, timedOut(fmt.Errorf("reading profile: %w (is the service running and serving /debug/pprof/?)", err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, timedOut(fmt.Errorf("reading profile %s: %s: %s (the CPU profile of a Go service is at /debug/pprof/profile once it imports net/http/pprof)",
			u.Redacted(), resp.Status, strings.TrimSpace(string(body))))
	}
	data, err := bounded.ReadAll(tctx, resp.Body, o.MaxBytes, what, o.MaxFlag)
	if err != nil {
		return nil, timedOut(readErr(ctx, u.Redacted(), err))
	}
	return data, nil
}

// readErr returns err of reading the profile at where: as it is past the
// limit or once ctx is done, else naming the profile.
func readErr(ctx context.Context, where string, err error) error {
	switch {
	case ctx.Err() != nil:
		return context.Cause(ctx)
	case errors.Is(err, bounded.ErrTooLarge):
		return err
	}
	return fmt.Errorf("profile %s: %w", where, err)
}
