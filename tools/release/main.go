// Command release prepares a release of every published module of the
// repository at one version and prints the git tags to push.
//
// Usage, from the repository root:
//
//	go run ./tools/release VERSION           # set the requirements, check, print the tags
//	go run ./tools/release -check VERSION    # fail if a go.mod is not at VERSION already
//	go run ./tools/release -commands VERSION # step 2: the command modules (see docs/release.md)
//
// Every requirement of a sibling module (one that go.work uses) is set to
// VERSION with a replace directive to the sibling's folder; then each module
// must be `go mod tidy`-clean, build, and pass `go vet` with GOWORK=off.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/k6labels/k6labels/tools/internal/workspace"
)

func main() {
	check := flag.Bool("check", false, "only verify that every go.mod already requires its siblings at VERSION (for CI)")
	commands := flag.Bool("commands", false, "drop the replace directives of the command modules and print their tags: run after the library tags are on the module proxy")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: go run ./tools/release [-check | -commands] VERSION   (from the repository root, e.g. VERSION=v0.1.0)")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 || (*check && *commands) {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *check, *commands); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

func run(version string, check, commands bool) error {
	if err := workspace.CheckVersion(version); err != nil {
		return err
	}
	mods, err := workspace.Load(".")
	if err != nil {
		return fmt.Errorf("%w (run from the repository root)", err)
	}
	order, err := workspace.ReleaseOrder(mods)
	if err != nil {
		return err
	}
	if commands {
		return releaseCommands(order, version)
	}
	changed, err := setRequirements(mods, version, check)
	if err != nil {
		return err
	}
	if check {
		if len(changed) > 0 {
			return fmt.Errorf("these go.mod files do not require their siblings at %s with a replace to the folder: %s; run `make release VERSION=%s`",
				version, strings.Join(changed, ", "), version)
		}
		fmt.Printf("release: every inter-module requirement is %s, with a replace to its folder\n", version)
		return nil
	}
	for _, d := range changed {
		fmt.Printf("release: updated %s/go.mod\n", d)
	}
	if err := verify(mods); err != nil {
		return err
	}
	printTags(order, version)
	return nil
}

// setRequirements applies workspace.SetRequirements, or with dryRun only
// reports which go.mod files it would change.
func setRequirements(mods []*workspace.Module, version string, dryRun bool) ([]string, error) {
	if !dryRun {
		return workspace.SetRequirements(mods, version)
	}
	// Apply to a scratch copy of the tree's go.mod files, then put them back.
	saved := map[string][]byte{}
	for _, m := range mods {
		data, err := os.ReadFile(m.File.Syntax.Name)
		if err != nil {
			return nil, err
		}
		saved[m.File.Syntax.Name] = data
	}
	changed, err := workspace.SetRequirements(mods, version)
	for name, data := range saved {
		if werr := os.WriteFile(name, data, 0o644); werr != nil {
			err = errors.Join(err, werr)
		}
	}
	return changed, err
}

// verify checks each module as a user's build would see it, without the
// workspace: tidy, building, vetted (tests included).
func verify(mods []*workspace.Module) error {
	off := []string{"GOWORK=off"}
	var errs []error
	for _, m := range mods {
		fmt.Printf("== %s: go mod tidy -diff, go build, go vet (GOWORK=off)\n", m.Dir)
		for _, args := range [][]string{{"mod", "tidy", "-diff"}, {"build", "./..."}, {"vet", "./..."}} {
			if err := workspace.Go(m.Dir, off, args...); err != nil {
				errs = append(errs, err)
				break
			}
		}
	}
	return errors.Join(errs...)
}

func printTags(order []*workspace.Module, version string) {
	var libs, cmds []string
	for _, m := range order {
		if m.Command() {
			cmds = append(cmds, m.Tag(version))
		} else {
			libs = append(libs, m.Tag(version))
		}
	}
	fmt.Printf("\nTags to push, in dependency order (a module after the modules it requires):\n\n")
	for _, t := range libs {
		fmt.Printf("  %s\n", t)
	}
	fmt.Printf("\nCommit the go.mod changes, then tag that commit and push:\n\n")
	for _, t := range libs {
		fmt.Printf("  git tag -a %s -m 'k6labels %s'\n", t, t)
	}
	fmt.Printf("  git push origin %s\n", strings.Join(libs, " "))
	if len(cmds) > 0 {
		fmt.Printf("\nCommand modules (%s) install with `go install path@%s`, which refuses a go.mod\n", strings.Join(cmds, ", "), version)
		fmt.Printf("with replace directives. Once the tags above are on the module proxy, on a release branch:\n\n")
		fmt.Printf("  go run ./tools/release -commands %s\n", version)
	}
}

// releaseCommands drops the replace directives of the command modules,
// tidies them against the published libraries and prints their tags.
func releaseCommands(order []*workspace.Module, version string) error {
	var tags []string
	for _, m := range order {
		if !m.Command() {
			continue
		}
		data, err := workspace.ReleasedGoMod(m)
		if err != nil {
			return err
		}
		if err := os.WriteFile(m.File.Syntax.Name, data, 0o644); err != nil {
			return err
		}
		fmt.Printf("== %s: replace directives dropped; go mod tidy, go vet (GOWORK=off, libraries from the module proxy)\n", m.Dir)
		for _, args := range [][]string{{"mod", "tidy"}, {"vet", "./..."}} {
			if err := workspace.Go(m.Dir, []string{"GOWORK=off"}, args...); err != nil {
				return fmt.Errorf("%w: are the library tags pushed and on the module proxy?", err)
			}
		}
		tags = append(tags, m.Tag(version))
	}
	if len(tags) == 0 {
		fmt.Println("release: go.work has no command module")
		return nil
	}
	fmt.Printf("\nCommit the go.mod and go.sum changes (on the release branch only), then:\n\n")
	for _, t := range tags {
		fmt.Printf("  git tag -a %s -m 'k6labels %s'\n", t, t)
	}
	fmt.Printf("  git push origin %s\n", strings.Join(tags, " "))
	return nil
}
