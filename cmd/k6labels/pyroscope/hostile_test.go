package pyroscope_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/k6labels/k6labels/cmd/k6labels/pyroscope"
)

// serve starts a server on 127.0.0.1 with h, closed when the test ends.
func serve(t *testing.T, h http.HandlerFunc) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// authServer answers {} to requests with the wanted credentials and 401
// with the request's Authorization header echoed back to the others.
func authServer(t *testing.T, wantAuth, wantTenant string) (string, *atomic.Int64) {
	var ok atomic.Int64
	url := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != wantAuth || r.Header.Get("X-Scope-OrgID") != wantTenant {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"code":"unauthenticated","message":"bad credentials: ` + r.Header.Get("Authorization") + `"}`))
			return
		}
		ok.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte("{}"))
	})
	return url, &ok
}

// TestAuth: basic auth from the options or the URL's userinfo, bearer
// tokens and the tenant reach the server; the secret is in no error or
// URL, even when the server echoes it back.
func TestAuth(t *testing.T) {
	const secret = "s3cr3t-pw"
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("12345:"+secret))
	for _, tc := range []struct {
		name, auth, tenant, url string
		opts                    []pyroscope.Option
	}{
		{name: "basic", auth: basic, tenant: "t1", opts: []pyroscope.Option{pyroscope.WithBasicAuth("12345", secret), pyroscope.WithTenant("t1")}},
		{name: "userinfo", auth: basic, url: "12345:" + secret + "@"},
		{name: "bearer", auth: "Bearer " + secret, opts: []pyroscope.Option{pyroscope.WithBearerToken(secret)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url, ok := authServer(t, tc.auth, tc.tenant)
			c := newClient(t, strings.Replace(url, "http://", "http://"+tc.url, 1), tc.opts...)
			if _, err := c.LabelValues(context.Background(), "k6_scenario", q(sel())); err != nil || ok.Load() != 1 {
				t.Fatalf("%v (%d accepted)", err, ok.Load())
			}
			if strings.Contains(c.URL(), secret) || strings.Contains(c.URL(), "@") {
				t.Errorf("URL() = %s", c.URL())
			}
			// The same client against a server that wants other credentials.
			other, _ := authServer(t, "Basic other", "")
			c = newClient(t, strings.Replace(other, "http://", "http://"+tc.url, 1), tc.opts...)
			_, err := c.LabelValues(context.Background(), "k6_scenario", q(sel()))
			var pe *pyroscope.Error
			if !errors.As(err, &pe) || pe.Status != 401 || !strings.Contains(err.Error(), "HTTP 401") || !strings.Contains(err.Error(), "bad credentials") {
				t.Errorf("401: %v", err)
			}
			if msg := err.Error(); strings.Contains(msg, secret) || strings.Contains(msg, strings.TrimPrefix(basic, "Basic ")) {
				t.Errorf("the error shows the secret: %s", msg)
			}
		})
	}
	if _, err := pyroscope.NewClient("ftp://u:"+secret+"@host", nil); err == nil || strings.Contains(err.Error(), secret) {
		t.Errorf("bad URL with userinfo: %v", err)
	}
	if _, err := pyroscope.NewClient("http://u:"+secret+"@[::1", nil); err == nil || strings.Contains(err.Error(), secret) {
		t.Errorf("unparsable URL with userinfo: %v", err)
	}
}

// TestRetries: 503 and 429 are retried with backoff and the answer after
// them is used; a server that keeps answering 429 gets MaxRetries+1
// requests and an error naming the status, the message and the attempts;
// a 400 is not retried.
func TestRetries(t *testing.T) {
	var n atomic.Int64
	status := []int{503, 429, 200}
	url := serve(t, func(w http.ResponseWriter, r *http.Request) {
		i := int(n.Add(1)) - 1
		w.Header().Set("Content-Type", "application/json")
		if i < len(status) && status[i] != 200 {
			w.WriteHeader(status[i])
			w.Write([]byte(`{"code":"unavailable","message":"ingesters busy"}`))
			return
		}
		w.Write([]byte(`{"names":["a"]}`))
	})
	c := newClient(t, url, pyroscope.WithBackoff(time.Millisecond))
	names, err := c.LabelValues(context.Background(), "k6_scenario", q(sel()))
	if err != nil || len(names) != 1 || n.Load() != 3 {
		t.Fatalf("after 503, 429: %v %v, %d requests", names, err, n.Load())
	}

	var busy atomic.Int64
	url = serve(t, func(w http.ResponseWriter, r *http.Request) {
		busy.Add(1)
		w.Header().Set("Retry-After", "0")
		http.Error(w, "slow down", http.StatusTooManyRequests)
	})
	_, err = newClient(t, url, pyroscope.WithBackoff(time.Millisecond)).LabelValues(context.Background(), "k6_scenario", q(sel()))
	if busy.Load() != pyroscope.MaxRetries+1 || err == nil || !strings.Contains(err.Error(), "HTTP 429 Too Many Requests (after 4 attempts)") ||
		!strings.Contains(err.Error(), "slow down") {
		t.Errorf("%d requests, %v", busy.Load(), err)
	}

	var bad atomic.Int64
	url = serve(t, func(w http.ResponseWriter, r *http.Request) {
		bad.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(`{"code":"invalid_argument","message":"parse error"}`))
	})
	if _, err = newClient(t, url, pyroscope.WithBackoff(time.Millisecond)).LabelValues(context.Background(), "k6_scenario", q(sel())); bad.Load() != 1 || err == nil {
		t.Errorf("400: %d requests, %v", bad.Load(), err)
	}
}

// TestMaxAnswer: a server that streams without end, and one that sends a
// small gzip body inflating past the bound, give ErrTooLarge naming the
// bound and its flag; what is read stays within the bound.
func TestMaxAnswer(t *testing.T) {
	const limit = 1 << 20
	endless := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		chunk := bytes.Repeat([]byte(" "), 64<<10)
		for {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	var bomb bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&bomb, gzip.BestCompression)
	zw.Write(bytes.Repeat([]byte(" "), 4<<20)) // 4 MiB of spaces, ~4 KiB compressed
	zw.Close()
	gz := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(bomb.Bytes())
	})
	if bomb.Len() >= limit {
		t.Fatalf("the bomb is %d bytes compressed: not past the bound only after decompression", bomb.Len())
	}
	for name, url := range map[string]string{"endless": endless, "gzip": gz} {
		_, err := newClient(t, url, pyroscope.WithMaxAnswer(limit)).LabelValues(context.Background(), "k6_scenario", q(sel()))
		if !errors.Is(err, pyroscope.ErrTooLarge) || !strings.Contains(err.Error(), "1MiB (--pyroscope-max-answer)") {
			t.Errorf("%s: %v", name, err)
		}
	}
	// Within the bound, a gzip answer is read decompressed.
	var small bytes.Buffer
	zw = gzip.NewWriter(&small)
	zw.Write([]byte(`{"names":["a","b"]}`))
	zw.Close()
	ok := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(small.Bytes())
	})
	if names, err := newClient(t, ok, pyroscope.WithMaxAnswer(limit)).LabelValues(context.Background(), "k6_scenario", q(sel())); err != nil || len(names) != 2 {
		t.Errorf("gzip answer: %v %v", names, err)
	}
}

// TestTimeout: a server that accepts and never answers, and one that
// trickles its answer a byte at a time, give ErrTimeout naming --timeout;
// neither is retried.
func TestTimeout(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	var silentHits, trickleHits atomic.Int64
	silent := serve(t, func(w http.ResponseWriter, r *http.Request) {
		silentHits.Add(1)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	trickle := serve(t, func(w http.ResponseWriter, r *http.Request) {
		trickleHits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte("{"))
		for {
			w.(http.Flusher).Flush()
			select {
			case <-release:
				return
			case <-r.Context().Done():
				return
			case <-time.After(20 * time.Millisecond):
			}
			if _, err := w.Write([]byte(" ")); err != nil {
				return
			}
		}
	})
	for name, url := range map[string]string{"silent": silent, "trickle": trickle} {
		_, err := newClient(t, url, pyroscope.WithTimeout(300*time.Millisecond), pyroscope.WithBackoff(time.Millisecond)).LabelValues(context.Background(), "k6_scenario", q(sel()))
		if !errors.Is(err, pyroscope.ErrTimeout) || !strings.Contains(err.Error(), "within 300ms (--timeout)") || !strings.Contains(err.Error(), url) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if silentHits.Load() != 1 || trickleHits.Load() != 1 {
		t.Errorf("requests: silent %d, trickle %d; want 1 each", silentHits.Load(), trickleHits.Load())
	}
}

// TestParseBytes: the sizes --pyroscope-max-answer takes, and FormatBytes
// prints back.
func TestParseBytes(t *testing.T) {
	for in, want := range map[string]int64{"64MiB": 64 << 20, "512KiB": 512 << 10, "1GiB": 1 << 30, "1000": 1000, "7B": 7} {
		if got, err := pyroscope.ParseBytes(in); err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %d, %v", in, got, err)
		}
		if n, _ := pyroscope.ParseBytes(pyroscope.FormatBytes(want)); n != want {
			t.Errorf("FormatBytes(%d) = %s", want, pyroscope.FormatBytes(want))
		}
	}
	for _, bad := range []string{"", "0", "-1MiB", "1TB", "x", "99999999999GiB"} {
		if _, err := pyroscope.ParseBytes(bad); err == nil {
			t.Errorf("ParseBytes(%q) accepted", bad)
		}
	}
}

// TestImplausibleSeries: SelectSeries points that no CPU series holds
// (negative, or summing past 2^62 ns) are refused, not summed into a report.
func TestImplausibleSeries(t *testing.T) {
	for name, points := range map[string]string{
		"negative": `{"value":-1e9,"timestamp":"1796234400000"}`,
		"huge":     `{"value":1e300,"timestamp":"1796234400000"}`,
		"overflow": `{"value":3e18,"timestamp":"1796234400000"},{"value":3e18,"timestamp":"1796234415000"}`,
	} {
		url := serve(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"series":[{"labels":[{"name":"k6_test_run_id","value":"fx1"}],"points":[`+points+`]}]}`)
		})
		_, err := newClient(t, url).SelectSeries(context.Background(), q(sel()), []string{"k6_test_run_id"}, 15*time.Second)
		if !errors.Is(err, pyroscope.ErrBadAnswer) {
			t.Errorf("%s: %v, want ErrBadAnswer", name, err)
		}
	}
	// A real answer's values pass.
	url := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"series":[{"labels":[{"name":"k6_test_run_id","value":"fx1"}],"points":[{"value":2.377e10,"timestamp":"1796234400000"}]}]}`)
	})
	ss, err := newClient(t, url).SelectSeries(context.Background(), q(sel()), []string{"k6_test_run_id"}, 15*time.Second)
	if err != nil || len(ss) != 1 || ss[0].Points[0].Value != 2.377e10 {
		t.Errorf("a real answer: %v, %v", ss, err)
	}
}
