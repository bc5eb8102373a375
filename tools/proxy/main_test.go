package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestProxyServesTheTree builds the proxy of this repository and has the go
// command download modules from it, with only that proxy and the printed
// environment: the zips, .mod and .info files must be what the go command
// accepts, with the working tree's files and the release go.mod.
func TestProxyServesTheTree(t *testing.T) {
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	if err := run([]string{"-dir", dir, "-root", "../..", "v0.1.0"}, &out, &errOut); err != nil {
		t.Fatalf("run: %v\n%s%s", err, out.String(), errOut.String())
	}
	printed := out.String()
	for _, want := range []string{
		"export GOPROXY=file://" + filepath.ToSlash(dir) + ",",
		"export GONOSUMDB=github.com/k6labels\n",
		"export GOWORK=off\n",
		"go get github.com/k6labels/k6labels@v0.1.0\n",
		"go install github.com/k6labels/k6labels/cmd/k6labels@v0.1.0\n",
	} {
		if !strings.Contains(printed, want) {
			t.Errorf("output lacks %q:\n%s", want, printed)
		}
	}
	if !strings.Contains(printed, "export GOFLAGS=") || !strings.Contains(printed, "-mod=mod") {
		t.Errorf("output does not set GOFLAGS with -mod=mod:\n%s", printed)
	}

	// A consumer: no workspace, only the file proxy, a cache of its own.
	consumer := t.TempDir()
	env := append(os.Environ(),
		"GOPROXY=file://"+filepath.ToSlash(dir)+",off",
		"GONOSUMDB=github.com/k6labels", "GOPRIVATE=", "GONOPROXY=",
		"GOFLAGS=-mod=mod -modcacherw", "GOWORK=off",
		"GOMODCACHE="+filepath.Join(consumer, "modcache"),
	)
	for _, c := range []struct {
		path  string
		files []string // files the downloaded module must hold
	}{
		{"github.com/k6labels/k6labels", []string{"labeler.go", "go.mod"}},
		{"github.com/k6labels/k6labels/cmd/k6labels", []string{"main.go", "go.mod", "testdata/fixtures/README.md"}},
	} {
		cmd := exec.Command("go", "mod", "download", "-json", c.path+"@v0.1.0")
		cmd.Dir = consumer
		cmd.Env = env
		raw, err := cmd.Output()
		if err != nil {
			t.Fatalf("go mod download %s: %v\n%s", c.path, err, raw)
		}
		var got struct{ Dir, GoMod, Error string }
		if err := json.Unmarshal(raw, &got); err != nil || got.Error != "" || got.Dir == "" {
			t.Fatalf("go mod download %s: %v %s\n%s", c.path, err, got.Error, raw)
		}
		for _, f := range c.files {
			if _, err := os.Stat(filepath.Join(got.Dir, filepath.FromSlash(f))); err != nil {
				t.Errorf("%s@v0.1.0 from the proxy lacks %s: %v", c.path, f, err)
			}
		}
		gomod, err := os.ReadFile(got.GoMod)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(gomod, []byte("module "+c.path+"\n")) {
			t.Errorf("%s's go.mod starts %q", c.path, gomod[:min(len(gomod), 60)])
		}
		if strings.HasSuffix(c.path, "/cmd/k6labels") && bytes.Contains(gomod, []byte("replace")) {
			t.Errorf("the command's go.mod keeps replace directives, which go install refuses:\n%s", gomod)
		}
	}
}

func TestUsage(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := run(nil, &out, &errOut); err != errUsage {
		t.Errorf("run without VERSION: %v, want errUsage", err)
	}
	if !strings.Contains(errOut.String(), "usage: go run ./tools/proxy") {
		t.Errorf("no usage line: %q", errOut.String())
	}
	if err := run([]string{"-dir", t.TempDir(), "-root", "../..", "1.0"}, &out, &errOut); err == nil {
		t.Error("run with version 1.0: no error")
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"file:///p,direct": "file:///p,direct",
		"-a -mod=mod":      "'-a -mod=mod'",
		"it's":             `'it'\''s'`,
		"":                 "''",
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}
