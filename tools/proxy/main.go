// Command proxy builds a file-based Go module proxy of the working tree, so
// that the repository's modules can be used before they are published: every
// published module of go.work at one version, as its release tag will be.
// It prints the environment that points the go command at it.
//
// Usage, from the repository root (or `make proxy`):
//
//	go run ./tools/proxy [-dir DIR] [-root ROOT] VERSION
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/k6labels/k6labels/tools/internal/modproxy"
)

func main() {
	err := run(os.Args[1:], os.Stdout, os.Stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		os.Exit(0)
	case errors.Is(err, errUsage):
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "proxy:", err)
		os.Exit(1)
	}
}

var errUsage = errors.New("usage")

// defaultDir is where the proxy goes without -dir: the user's cache folder,
// outside the repository and outside any temporary folder a reboot empties.
func defaultDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "k6labels", "proxy")
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("proxy", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", defaultDir(), "`folder` to write the proxy to (made if missing; the versions it builds are replaced)")
	root := fs.String("root", ".", "the repository's root `folder`")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: go run ./tools/proxy [-dir DIR] [-root ROOT] VERSION   (e.g. VERSION=v0.1.0)")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errUsage
	}
	version := fs.Arg(0)
	proxyDir, err := filepath.Abs(*dir)
	if err != nil {
		return err
	}
	stage, err := os.MkdirTemp("", "k6labels-proxy-stage-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(stage)
	served, err := modproxy.Build(*root, proxyDir, stage, version)
	if err != nil {
		return err
	}
	out, err := exec.Command("go", "env", "GOPROXY", "GOFLAGS").Output()
	if err != nil {
		return fmt.Errorf("go env: %w", err)
	}
	goproxy, goflags, _ := strings.Cut(strings.TrimRight(string(out), "\n"), "\n")
	if goproxy == "" {
		goproxy = "off"
	}

	fmt.Fprintf(stdout, "proxy: %s holds the working tree's modules at %s:\n", proxyDir, version)
	var install string
	for _, s := range served {
		fmt.Fprintf(stdout, "  %s@%s (%d files)\n", s.Module.Path, version, s.Files)
		if s.Module.Command() {
			install = s.Module.Path + "@" + version
		}
	}
	fmt.Fprintln(stdout, "\nIn a shell, outside this repository (GOWORK=off: no go.work applies):")
	fmt.Fprintln(stdout)
	for _, kv := range modproxy.Env(proxyDir, goproxy, goflags) {
		k, v, _ := strings.Cut(kv, "=")
		fmt.Fprintf(stdout, "  export %s=%s\n", k, shellQuote(v))
	}
	fmt.Fprintf(stdout, "  go get %s@%s\n", served[0].Module.Path, version)
	if install != "" {
		fmt.Fprintf(stdout, "  go install %s\n", install)
	}
	fmt.Fprintln(stdout, "\nThe go command caches what it downloads. After building the proxy again from a")
	fmt.Fprintln(stdout, "changed tree, run `go clean -modcache` and delete the github.com/k6labels lines")
	fmt.Fprintln(stdout, "of your go.sum, or go keeps the old zip or reports a checksum mismatch.")
	return nil
}

// shellQuote returns s as one POSIX shell word.
func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`!*?[]#~;&|<>(){}") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
