// Command consumercheck installs the repository's published modules the way a
// user does, from a module proxy, and runs a small program against each.
//
// Usage, from the repository root:
//
//	go run ./tools/consumercheck [-keep] VERSION
//
// It builds a file-based module proxy holding every published module of
// go.work at VERSION (zips of the working tree's files that git tracks or
// would track, .info, .mod and list files), then in a new module in a
// temporary folder outside the repository, with GOWORK=off, GOFLAGS=-mod=mod,
// GOPROXY=file://<proxy>,<the go command's GOPROXY> and no checksum database
// for github.com/k6labels, runs `go get` for each module at VERSION, builds
// and runs its program, and checks the labels it prints.
package main

import (
	"context"
	"embed"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/k6labels/k6labels/tools/internal/modproxy"
	"github.com/k6labels/k6labels/tools/internal/workspace"
)

// A check is what a user does with one published module.
type check struct {
	dir string // the module's folder in go.work
	// program is a folder of testdata/ with a main package that prints
	// "labels: ..." (or, with install, the package path to go install);
	// testdata/shared/shared.go is copied next to it.
	program string
	install string   // for a command module: the package to `go install path@VERSION`
	args    []string // arguments for the installed command
	want    []string // the output must contain each
}

// wantLabels are the labels of the baggage every program sends.
var wantLabels = []string{"k6_test_run_id=4242", "k6_scenario=rush_hour", "k6_name="}

// checks has one entry per published module; adding a module is one entry
// (and for a library, its program in testdata/).
var checks = []check{
	{dir: ".", program: "root", want: wantLabels},
	{dir: "k6grpc", program: "k6grpc", want: wantLabels},
	{dir: "k6otel", program: "k6otel", want: append([]string{"baggage sent on: ", "k6.scenario=rush_hour"}, wantLabels...)},
	{dir: "k6fasthttp", program: "k6fasthttp", want: wantLabels},
	// Internal: only this repository's modules import it (their tests), so
	// the proxy serves it and the go get of k6grpc fetches it.
	{dir: "internal/profiletest"},
	{dir: "cmd/k6labels", install: "github.com/k6labels/k6labels/cmd/k6labels", args: []string{"-h"}},
}

//go:embed testdata
var programs embed.FS

func main() {
	keep := flag.Bool("keep", false, "keep the temporary proxy and consumer folders")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: go run ./tools/consumercheck [-keep] VERSION   (from the repository root, e.g. VERSION=v0.1.0)")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *keep); err != nil {
		fmt.Fprintln(os.Stderr, "consumercheck: FAIL:", err)
		os.Exit(1)
	}
	fmt.Println("consumercheck: ok")
}

func run(version string, keep bool) error {
	if err := workspace.CheckVersion(version); err != nil {
		return err
	}
	mods, err := workspace.Load(".")
	if err != nil {
		return fmt.Errorf("%w (run from the repository root)", err)
	}
	byDir := map[string]*workspace.Module{}
	for _, m := range mods {
		byDir[m.Dir] = m
	}
	var todo []check
	for _, c := range checks {
		if byDir[c.dir] == nil {
			fmt.Printf("consumercheck: skipped %s: go.work does not use it (yet)\n", c.dir)
			continue
		}
		todo = append(todo, c)
	}
	for _, m := range mods {
		if m.Published && !slices.ContainsFunc(checks, func(c check) bool { return c.dir == m.Dir }) {
			return fmt.Errorf("published module %s has no entry in tools/consumercheck's checks: add one", m.Dir)
		}
	}

	tmp, err := os.MkdirTemp("", "k6labels-consumer-")
	if err != nil {
		return err
	}
	env, err := consumerEnv(tmp)
	if err != nil {
		return err
	}
	if keep {
		fmt.Println("consumercheck: keeping", tmp)
	} else {
		defer func() {
			// The module cache is read-only; the go command removes it.
			_ = goCmd(tmp, env, "clean", "-modcache")
			os.RemoveAll(tmp)
		}()
	}
	fmt.Println("consumercheck: GOPROXY=" + envValue(env, "GOPROXY"))

	served, err := modproxy.Build(".", filepath.Join(tmp, "proxy"), filepath.Join(tmp, "stage"), version)
	if err != nil {
		return err
	}
	for _, s := range served {
		fmt.Printf("consumercheck: proxy has %s@%s (%d files)\n", s.Module.Path, version, s.Files)
	}

	var errs []error
	for i, c := range todo {
		if err := runCheck(filepath.Join(tmp, fmt.Sprint("consumer", i)), env, byDir[c.dir], c, version); err != nil {
			fmt.Printf("consumercheck: %s: FAIL: %v\n", c.dir, err)
			errs = append(errs, fmt.Errorf("%s: %w", c.dir, err))
		}
	}
	return errors.Join(errs...)
}

// consumerEnv is the environment of a user outside the repository, with
// tmp's own module cache: a release version cached in the shared cache would
// hide later changes to the tree. The shared cache's download folder, a
// proxy layout itself, comes before the network so that third-party modules
// already downloaded are not fetched again.
func consumerEnv(tmp string) ([]string, error) {
	out, err := exec.Command("go", "env", "GOPROXY", "GOFLAGS", "GOMODCACHE").Output()
	if err != nil {
		return nil, fmt.Errorf("go env: %w", err)
	}
	v := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(v) != 3 {
		return nil, fmt.Errorf("go env printed %q", out)
	}
	goproxy, goflags, modcache := v[0], v[1], v[2]
	return append(modproxy.Env(filepath.Join(tmp, "proxy"), modproxy.FileURL(filepath.Join(modcache, "cache", "download"))+","+goproxy, goflags),
		"GOPRIVATE=",
		"GONOPROXY=",
		"GOMODCACHE="+filepath.Join(tmp, "modcache"),
		"GOBIN="+filepath.Join(tmp, "bin"),
	), nil
}

func envValue(env []string, key string) string {
	for _, kv := range slices.Backward(env) {
		if v, ok := strings.CutPrefix(kv, key+"="); ok {
			return v
		}
	}
	return ""
}

// runCheck does what a new user of c's module does: in a new module in
// folder consumer, go get (or go install) it at version, then build and run
// the program. A module of its own per check, so that no other module's
// requirement raises a version this one asks for.
func runCheck(consumer string, env []string, m *workspace.Module, c check, version string) error {
	fmt.Printf("\n== %s@%s\n", m.Path, version)
	if c.program == "" && c.install == "" {
		fmt.Println("served by the proxy, not imported by users")
		return nil
	}
	if err := os.MkdirAll(consumer, 0o755); err != nil {
		return err
	}
	if err := goCmd(consumer, env, "mod", "init", "example.com/consumer"); err != nil {
		return err
	}
	var out string
	switch {
	case c.install != "":
		if err := goCmd(consumer, env, "install", c.install+"@"+version); err != nil {
			return err
		}
		bin := filepath.Join(envValue(env, "GOBIN"), path.Base(c.install))
		var err error
		out, err = runProgram(consumer, env, bin, c.args...)
		var exit *exec.ExitError
		if errors.As(err, &exit) && exit.ExitCode() == 2 && slices.Contains(c.args, "-h") {
			err = nil // the flag package's exit status for -h
		}
		if err != nil {
			return err
		}
	default:
		src, err := fs.Sub(programs, "testdata/"+c.program)
		if err != nil {
			return err
		}
		if err := os.CopyFS(consumer, src); err != nil {
			return fmt.Errorf("program testdata/%s: %w", c.program, err)
		}
		shared, err := fs.ReadFile(programs, "testdata/shared/shared.go")
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(consumer, "shared.go"), shared, 0o644); err != nil {
			return err
		}
		if err := goCmd(consumer, env, "get", m.Path+"@"+version); err != nil {
			return err
		}
		bin := filepath.Join(consumer, c.program)
		if err := goCmd(consumer, env, "build", "-o", bin, "."); err != nil {
			return err
		}
		if out, err = runProgram(consumer, env, bin); err != nil {
			return err
		}
	}
	for _, w := range c.want {
		if !strings.Contains(out, w) {
			return fmt.Errorf("output lacks %q", w)
		}
	}
	return nil
}

func runProgram(dir string, env []string, bin string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	fmt.Printf("$ %s %s\n%s", filepath.Base(bin), strings.Join(args, " "), out)
	if err != nil {
		return string(out), fmt.Errorf("%s: %w", filepath.Base(bin), err)
	}
	return string(out), nil
}

// goCmd runs the go command as the consumer, echoing it.
func goCmd(dir string, env []string, args ...string) error {
	fmt.Printf("$ go %s\n", strings.Join(args, " "))
	return workspace.Go(dir, env, args...)
}
