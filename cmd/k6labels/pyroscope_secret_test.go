package main

import (
	"compress/gzip"
	"encoding/base64"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/k6labels/k6labels/cmd/k6labels/internal/fixture"
	"github.com/k6labels/k6labels/cmd/k6labels/pyroscope/pyroscopetest"
)

const (
	secretUser     = "stack-123"
	secretPassword = "pw-9f3c-secret"
	secretToken    = "glc_tok-7d1e-secret"
	secretTenant   = "tenant-a"
)

// authProxy starts a server on 127.0.0.1 that checks the credentials of
// every request (basic auth of secretUser and secretPassword, or the
// bearer token, and the tenant) and passes the good ones to the replay
// server; others get 401 with the Authorization header echoed back.
func authProxy(t *testing.T, replay string) (string, *atomic.Int64) {
	t.Helper()
	target, _ := url.Parse(replay)
	proxy := httputil.NewSingleHostReverseProxy(target)
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte(secretUser+":"+secretPassword))
	var ok atomic.Int64
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		if (auth != basic && auth != "Bearer "+secretToken) || r.Header.Get("X-Scope-OrgID") != secretTenant {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"code":"unauthenticated","message":"invalid credentials ` + auth + `"}`))
			return
		}
		ok.Add(1)
		proxy.ServeHTTP(w, r)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String(), &ok
}

// TestPyroscopeSecretsNeverShown runs report, diff and runs with
// credentials from the URL, the environment and the flags, in every
// format and through every error path, and finds the password, the token
// and the basic auth header in no output, error or written profile.
func TestPyroscopeSecretsNeverShown(t *testing.T) {
	srv, _, fx := pyrServer(t)
	// Not recorded: the service list, as TestPyroscopeErrors adds it.
	srv.Add(pyroscopetest.Exchange{Name: "service names", Method: "POST", Path: "/querier.v1.QuerierService/LabelValues", ContentType: "application/json",
		Body:   []byte(`{"name":"service_name","start":1796234535000,"end":1796234640000}`),
		Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, Response: []byte(`{"names":["rideshare.k6labels"]}`)})
	front, accepted := authProxy(t, srv.URL)
	withUserinfo := strings.Replace(front, "http://", "http://"+secretUser+":"+secretPassword+"@", 1)
	down := strings.Replace(fixture.ClosedURL(t), "http://", "http://"+secretUser+":"+secretPassword+"@", 1)
	fx1 := filepath.Join(fx, "k6", "run-fx1.json.gz")
	fx2 := filepath.Join(fx, "k6", "run-fx2.json.gz")
	dir := t.TempDir()
	secrets := []string{secretPassword, secretToken, base64.StdEncoding.EncodeToString([]byte(secretUser + ":" + secretPassword))}

	type env map[string]string
	basicEnv := env{envUser: secretUser, envPassword: secretPassword, envTenant: secretTenant}
	tokenEnv := env{envToken: secretToken, envTenant: secretTenant}
	args := func(cmd, u string, rest ...string) []string {
		a := append([]string{cmd, "--pyroscope", u, "--service", pyrService}, pyrWindow...)
		return append(a, rest...)
	}
	var cases []struct {
		name string
		env  env
		args []string
		code int
	}
	add := func(name string, e env, code int, a ...string) {
		cases = append(cases, struct {
			name string
			env  env
			args []string
			code int
		}{name, e, a, code})
	}
	for _, f := range []string{"text", "markdown", "json"} {
		add("report env "+f, basicEnv, exitOK, args("report", front, "--k6", fx1, "--run-id", "fx1", "--by", "run,scenario,name", "--format", f)...)
		add("report userinfo "+f, env{envTenant: secretTenant}, exitOK, args("report", withUserinfo, "--k6", fx1, "--run-id", "fx1", "--by", "scenario", "--format", f)...)
		add("report token "+f, tokenEnv, exitOK, args("report", front, "--k6", fx1, "--run-id", "fx1", "--by", "scenario", "--format", f)...)
		add("diff "+f, basicEnv, exitOK, args("diff", withUserinfo, "--base-k6", fx1, "--base-run-id", "fx1", "--k6", fx2, "--run-id", "fx2",
			"--by", "scenario,name", "--format", f, "--write-profiles", filepath.Join(dir, "d-"+f))...)
		add("runs "+f, basicEnv, exitOK, args("runs", withUserinfo, "--format", f)...)
	}
	add("flags", nil, exitOK, args("report", front, "--user", secretUser, "--password", secretPassword, "--tenant", secretTenant,
		"--k6", fx1, "--run-id", "fx1", "--by", "scenario")...)
	add("token flag", nil, exitOK, args("runs", front, "--token", secretToken, "--tenant", secretTenant)...)
	add("wrong password", env{envTenant: secretTenant}, exitError,
		args("report", strings.Replace(withUserinfo, secretPassword, secretPassword+"x", 1), "--k6", fx1, "--run-id", "fx1")...)
	add("wrong token", env{envToken: secretToken + "x", envTenant: secretTenant}, exitError, args("runs", front)...)
	add("unreachable", basicEnv, exitError, args("report", down, "--k6", fx1, "--run-id", "fx1")...)
	add("unreachable runs", nil, exitError, args("runs", down)...)
	add("unknown service", basicEnv, exitError, "report", "--pyroscope", withUserinfo, "--service", "no-such-service", "--k6", fx1,
		pyrWindow[0], pyrWindow[1], pyrWindow[2], pyrWindow[3])
	add("two runs", basicEnv, exitError, args("report", withUserinfo, "--k6", fx1)...)
	add("wrong run id", basicEnv, exitError, args("report", withUserinfo, "--k6", fx1, "--run-id", "fx3")...)
	add("answer too large", basicEnv, exitError, args("runs", withUserinfo, "--pyroscope-max-answer", "100B")...)
	add("bad URL", nil, exitUsage, args("runs", "ftp://"+secretUser+":"+secretPassword+"@host")...)
	add("bad flag", nil, exitUsage, args("report", withUserinfo, "--timeout", "-1s", "--k6", fx1)...)
	add("password without user", env{envPassword: secretPassword}, exitUsage, args("runs", front)...)
	add("user and token", env{envUser: secretUser, envPassword: secretPassword, envToken: secretToken}, exitUsage, args("runs", front)...)
	add("help", basicEnv, exitOK, "report", "-h")

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range []string{envUser, envPassword, envToken, envTenant} {
				t.Setenv(k, tc.env[k])
			}
			code, out, errOut := pyrRun(t, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d\n%s%s", code, tc.code, out, errOut)
			}
			for _, s := range secrets {
				if strings.Contains(out, s) || strings.Contains(errOut, s) {
					t.Errorf("the output shows a secret (%.6s…):\n%s%s", s, out, errOut)
				}
			}
			if strings.Contains(out+errOut, secretUser+":") {
				t.Errorf("the output shows userinfo:\n%s%s", out, errOut)
			}
		})
	}
	if accepted.Load() == 0 {
		t.Error("no request passed the credentials check")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(files) == 0 {
		t.Error("diff wrote no profiles")
	}
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(fh)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		b, err := io.ReadAll(zr)
		fh.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range secrets {
			if strings.Contains(string(b), s) {
				t.Errorf("%s holds a secret", f)
			}
		}
	}
}
