// Package workspace reads the modules of the repository's go.work and knows
// which of them are published, how they are tagged and how their
// inter-module requirements are written: the rules the release command and
// the consumer check share.
package workspace

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/semver"
)

// Unpublished lists the go.work folders that are never tagged: examples,
// tests and tools. Every other module in go.work is published.
var Unpublished = []string{"examples", "examples/rideshare", "integration", "bench", "tools"}

// A Module is one module of go.work.
type Module struct {
	Dir       string // folder relative to the repository root, slash-separated; "." for the root
	Path      string // module path
	File      *modfile.File
	Published bool
}

// Command reports whether m is a command to be installed with
// `go install path@version`, which refuses a go.mod with replace directives.
func (m *Module) Command() bool { return strings.HasPrefix(m.Dir, "cmd/") }

// Tag returns the git tag that releases m at version: "v0.1.0" for the root
// module, "k6grpc/v0.1.0" for the module in folder k6grpc.
func (m *Module) Tag(version string) string {
	if m.Dir == "." {
		return version
	}
	return m.Dir + "/" + version
}

// Load reads go.work in root and the go.mod of every module it uses, in
// go.work's order.
func Load(root string) ([]*Module, error) {
	name := filepath.Join(root, "go.work")
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	work, err := modfile.ParseWork(name, data, nil)
	if err != nil {
		return nil, err
	}
	var mods []*Module
	for _, u := range work.Use {
		dir := path.Clean(filepath.ToSlash(u.Path))
		name := filepath.Join(root, filepath.FromSlash(dir), "go.mod")
		data, err := os.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("go.work uses %s: %w", u.Path, err)
		}
		f, err := modfile.Parse(name, data, nil)
		if err != nil {
			return nil, err
		}
		if f.Module == nil {
			return nil, fmt.Errorf("%s has no module line", name)
		}
		mods = append(mods, &Module{Dir: dir, Path: f.Module.Mod.Path, File: f, Published: !slices.Contains(Unpublished, dir)})
	}
	return mods, nil
}

// CheckVersion returns an error unless version is a canonical semantic
// version such as v0.1.0, the only form a module proxy serves as a release.
func CheckVersion(version string) error {
	if !semver.IsValid(version) || semver.Canonical(version) != version || semver.Build(version) != "" {
		return fmt.Errorf("version %q is not a release version: give vMAJOR.MINOR.PATCH, e.g. v0.1.0", version)
	}
	if semver.Major(version) != "v0" && semver.Major(version) != "v1" {
		return fmt.Errorf("version %s needs /%s module paths, which this repository does not have", version, semver.Major(version))
	}
	return nil
}

// siblings returns the modules of mods that m requires.
func siblings(m *Module, mods []*Module) []*Module {
	var deps []*Module
	for _, r := range m.File.Require {
		for _, d := range mods {
			if d != m && d.Path == r.Mod.Path {
				deps = append(deps, d)
			}
		}
	}
	return deps
}

// relDir returns the replace target for module to in module from's go.mod:
// to's folder relative to from's, starting with "./" or "../".
func relDir(from, to *Module) string {
	rel, err := filepath.Rel(filepath.FromSlash(from.Dir), filepath.FromSlash(to.Dir))
	if err != nil { // both are relative to the same root: cannot happen
		panic(err)
	}
	rel = filepath.ToSlash(rel)
	if !strings.HasPrefix(rel, "..") {
		rel = "./" + rel
	}
	return rel
}

// SetRequirements makes every requirement of a sibling module be version,
// with a replace directive to the sibling's folder, in every module's
// go.mod. It returns the folders of the modules whose go.mod changed.
func SetRequirements(mods []*Module, version string) ([]string, error) {
	var errs []error
	for _, m := range mods {
		for _, d := range siblings(m, mods) {
			if m.Published && !d.Published {
				errs = append(errs, fmt.Errorf("%s is published but requires %s, which is not: a user could not build it", m.Dir, d.Dir))
			}
			if err := m.File.AddRequire(d.Path, version); err != nil {
				errs = append(errs, err)
			}
			if err := m.File.AddReplace(d.Path, "", relDir(m, d), ""); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	var changed []string
	for _, m := range mods {
		m.File.Cleanup()
		out, err := m.File.Format()
		if err != nil {
			return nil, err
		}
		name := m.File.Syntax.Name
		old, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		if string(old) == string(out) {
			continue
		}
		changed = append(changed, m.Dir)
		if err := os.WriteFile(name, out, 0o644); err != nil {
			return nil, err
		}
	}
	return changed, nil
}

// ReleasedGoMod returns m's go.mod as the release tag holds it: as it is,
// except that a command's has no replace directives (see Module.Command).
func ReleasedGoMod(m *Module) ([]byte, error) {
	if !m.Command() || len(m.File.Replace) == 0 {
		return os.ReadFile(m.File.Syntax.Name)
	}
	f, err := modfile.Parse(m.File.Syntax.Name, mustRead(m.File.Syntax.Name), nil)
	if err != nil {
		return nil, err
	}
	for _, r := range slices.Clone(f.Replace) {
		if err := f.DropReplace(r.Old.Path, r.Old.Version); err != nil {
			return nil, err
		}
	}
	f.Cleanup()
	return f.Format()
}

func mustRead(name string) []byte {
	data, _ := os.ReadFile(name) // Load read it already; a failure shows as a parse error
	return data
}

// ReleaseOrder returns the published modules of mods in dependency order:
// each after every sibling it requires, the root first, ties by folder.
func ReleaseOrder(mods []*Module) ([]*Module, error) {
	depth := map[*Module]int{}
	state := map[*Module]int{} // 1 visiting, 2 done
	var visit func(m *Module, stack []string) error
	visit = func(m *Module, stack []string) error {
		switch state[m] {
		case 1:
			return fmt.Errorf("modules require each other in a cycle: %s", strings.Join(append(stack, m.Dir), " → "))
		case 2:
			return nil
		}
		state[m] = 1
		for _, d := range siblings(m, mods) {
			if err := visit(d, append(stack, m.Dir)); err != nil {
				return err
			}
			depth[m] = max(depth[m], depth[d]+1)
		}
		state[m] = 2
		return nil
	}
	var out []*Module
	for _, m := range mods {
		if err := visit(m, nil); err != nil {
			return nil, err
		}
		if m.Published {
			out = append(out, m)
		}
	}
	slices.SortStableFunc(out, func(a, b *Module) int {
		if c := depth[a] - depth[b]; c != 0 {
			return c
		}
		if a.Dir == "." || b.Dir == "." {
			return boolInt(b.Dir == ".") - boolInt(a.Dir == ".")
		}
		return strings.Compare(a.Dir, b.Dir)
	})
	return out, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Go runs the go command in dir with env added to the environment, its
// output going to the process's.
func Go(dir string, env []string, args ...string) error {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout = os.Stdout
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: go %s: %w", dir, strings.Join(args, " "), err)
	}
	return nil
}
