package pprofread

import (
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestURLSeconds: a URL's seconds, net/http/pprof's default of the
// endpoint without one (profile 30 s, trace 1 s), and an error naming a
// value that is no positive number of seconds.
func TestURLSeconds(t *testing.T) {
	for _, c := range []struct {
		url  string
		def  time.Duration
		want time.Duration
	}{
		{"http://h/debug/pprof/profile", DefaultProfileDuration, 30 * time.Second},
		{"http://h/debug/pprof/trace", DefaultTraceDuration, time.Second},
		{"http://h/debug/pprof/profile?seconds=5", DefaultProfileDuration, 5 * time.Second},
		{"http://h/debug/pprof/trace?seconds=0.5", DefaultTraceDuration, 500 * time.Millisecond},
	} {
		u, _ := url.Parse(c.url)
		if got, err := URLSeconds(u, c.def); err != nil || got != c.want {
			t.Errorf("URLSeconds(%s) = %v, %v; want %v", c.url, got, err, c.want)
		}
	}
	for _, v := range []string{"0", "-1", "abc", "NaN", "Inf", "1e7"} {
		u, _ := url.Parse("http://h/debug/pprof/profile?seconds=" + v)
		if got, err := URLSeconds(u, DefaultProfileDuration); err == nil || !strings.Contains(err.Error(), `seconds="`+v+`"`) {
			t.Errorf("seconds=%s: %v, %v; want an error naming it", v, got, err)
		}
	}
}
