package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/google/pprof/profile"
	"github.com/grafana/pyroscope-go"
)

// pusher sends the process's profiles to a Pyroscope server with the
// pyroscope-go client and, when asked, keeps the CPU profiles it uploads
// merged into one.
//
// The copy is how the demo still prints its local report while pushing: Go
// allows one CPU profile per process, and pyroscope-go's collector holds it,
// so the local report is built from exactly the CPU profiles that were sent.
// Merged as they come, the copy grows with the distinct stacks and labels,
// not with the uploads; -serve, which prints no report, keeps none.
type pusher struct {
	profiler *pyroscope.Profiler
	tee      *teeClient
}

// startPush starts pyroscope-go, pushing to serverURL under app at
// pyroscope-go's default upload rate. If progress
// is not nil, a line is written to it after each upload with its outcome and
// the counts so far. keepCPU keeps the CPU profiles sent for stop.
func startPush(serverURL, app string, progress io.Writer, keepCPU bool) (*pusher, error) {
	tee := &teeClient{progress: progress, keepCPU: keepCPU, next: &http.Client{
		Timeout: 30 * time.Second,
		// As pyroscope-go's own client: a redirect would drop credentials.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
	p, err := pyroscope.Start(pyroscope.Config{
		ApplicationName: app,
		ServerAddress:   serverURL,
		HTTPClient:      tee,
		Logger:          tee,
	})
	if err != nil {
		return nil, err
	}
	return &pusher{profiler: p, tee: tee}, nil
}

// stop uploads what is left, waits for the uploads and stops the client. It
// returns the CPU profiles sent, merged into one (with keepCPU; else nil).
func (p *pusher) stop() (*profile.Profile, error) {
	p.profiler.Flush(true) // uploads the last CPU profile and waits for it
	if err := p.profiler.Stop(); err != nil {
		return nil, err
	}
	if !p.tee.keepCPU {
		return nil, nil
	}
	return p.tee.cpuProfile()
}

// teeClient is the HTTP client and the logger given to pyroscope-go. It
// passes every upload on unchanged and, with keepCPU, merges the CPU
// profiles into one copy.
type teeClient struct {
	next     *http.Client
	progress io.Writer // nil: silent
	keepCPU  bool

	mu       sync.Mutex
	cpu      *profile.Profile // the CPU profiles uploaded, merged; nil: none
	mergeErr error
	uploads  int // answered 200
	failed   int
	firstErr error
}

// Do implements pyroscope-go's remote.HTTPClient.
func (t *teeClient) Do(req *http.Request) (*http.Response, error) {
	cpu := false
	if req.Body != nil {
		body, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		if p := cpuFromUpload(req.Header.Get("Content-Type"), body); p != nil {
			cpu = true
			if t.keepCPU {
				t.keep(p)
			}
		}
	}
	resp, err := t.next.Do(req)
	t.mu.Lock()
	defer t.mu.Unlock()
	// The query string (application name, times) is long and says nothing
	// about what went wrong: errors name only the endpoint.
	endpoint := req.Method + " " + req.URL.Scheme + "://" + req.URL.Host + req.URL.Path
	var failure error
	switch {
	case err != nil:
		cause := err
		var uerr *url.Error
		if errors.As(err, &uerr) {
			cause = uerr.Err
		}
		failure = fmt.Errorf("%s: %w", endpoint, cause)
	case resp.StatusCode != http.StatusOK:
		failure = fmt.Errorf("%s: %s", endpoint, resp.Status)
	}
	if failure != nil {
		t.failed++
		t.firstErr = cmpErr(t.firstErr, failure)
	} else {
		t.uploads++
	}
	if t.progress != nil {
		kind := "profile"
		if cpu {
			kind = "CPU profile"
		}
		outcome := "accepted"
		if failure != nil {
			outcome = "failed: " + failure.Error()
		}
		fmt.Fprintf(t.progress, "  pyroscope: %s upload %s (%d accepted, %d failed so far)\n", kind, outcome, t.uploads, t.failed)
	}
	return resp, err
}

func cmpErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

// cpuFromUpload returns the CPU profile in one pyroscope-go upload, or nil if
// the upload holds another profile type. pyroscope-go sends a
// multipart/form-data body whose "profile" part is the pprof data.
func cpuFromUpload(contentType string, body []byte) *profile.Profile {
	data, err := uploadedProfile(contentType, body)
	if err != nil {
		return nil
	}
	p, err := profile.ParseData(data)
	if err != nil || len(p.SampleType) == 0 || p.SampleType[cpuIndex(p)].Type != "cpu" {
		return nil
	}
	return p
}

// uploadedProfile returns the "profile" part of a pyroscope-go upload body.
func uploadedProfile(contentType string, body []byte) ([]byte, error) {
	_, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return nil, err
	}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	for {
		part, err := mr.NextPart()
		if err != nil {
			return nil, err
		}
		if part.FormName() == "profile" {
			return io.ReadAll(part)
		}
	}
}

// keep merges p into the copy of the CPU profiles uploaded.
func (t *teeClient) keep(p *profile.Profile) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cpu == nil {
		t.cpu = p
		return
	}
	merged, err := profile.Merge([]*profile.Profile{t.cpu, p})
	if err != nil {
		t.mergeErr = cmpErr(t.mergeErr, err)
		return
	}
	t.cpu = merged
}

// cpuProfile returns the CPU profiles uploaded so far, merged.
func (t *teeClient) cpuProfile() (*profile.Profile, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.mergeErr != nil:
		return nil, fmt.Errorf("merging the CPU profiles uploaded: %w", t.mergeErr)
	case t.cpu == nil:
		return nil, errors.New("pyroscope-go uploaded no CPU profile")
	}
	return t.cpu, nil
}

// status returns how many uploads succeeded and failed, and the first error.
func (t *teeClient) status() (ok, failed int, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.uploads, t.failed, t.firstErr
}

// Infof, Debugf and Errorf make teeClient pyroscope-go's logger: upload
// errors are counted in Do already, so it only keeps errors the client
// reports about itself.
func (t *teeClient) Infof(string, ...any)  {}
func (t *teeClient) Debugf(string, ...any) {}
func (t *teeClient) Errorf(format string, args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.firstErr == nil {
		t.firstErr = fmt.Errorf(format, args...)
	}
}
