// Package modproxy builds a file-based Go module proxy of the repository's
// working tree: every published module of go.work at one version, zipped as
// the module proxy would serve its release tag. The consumer check and the
// local proxy command (tools/proxy) share it.
package modproxy

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"

	"github.com/k6labels/k6labels/tools/internal/workspace"
)

// Served is one module version the proxy holds.
type Served struct {
	Module *workspace.Module
	Files  int // files in its zip
}

// Build writes every published module of the go.work in root at version
// into the file proxy folder proxyDir (made if missing; versions already in
// it are replaced). The zips hold the files a commit of root's working tree
// would hold (tracked by git, or not ignored), with the go.mod each release
// tag will hold. stage is an empty scratch folder for that copy.
func Build(root, proxyDir, stage, version string) ([]Served, error) {
	if err := workspace.CheckVersion(version); err != nil {
		return nil, err
	}
	mods, err := workspace.Load(root)
	if err != nil {
		return nil, fmt.Errorf("%w (give the repository root)", err)
	}
	if err := StageTree(root, stage); err != nil {
		return nil, err
	}
	var served []Served
	for _, m := range mods {
		if !m.Published {
			continue
		}
		n, err := Add(proxyDir, filepath.Join(stage, filepath.FromSlash(m.Dir)), m, version)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m.Dir, err)
		}
		served = append(served, Served{Module: m, Files: n})
	}
	return served, nil
}

// StageTree copies the files a commit of root's working tree would hold
// (git tracks them, or would: not ignored) to dst, so that build outputs
// and other ignored files stay out of the zips.
func StageTree(root, dst string) error {
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("git ls-files in %s: %w", root, err)
	}
	for name := range strings.SplitSeq(strings.TrimRight(string(out), "\x00"), "\x00") {
		if name == "" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted in the working tree
		}
		if err != nil {
			return err
		}
		to := filepath.Join(dst, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(to, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Add writes m at version into the file proxy in proxyDir, from the
// module's staged folder dir (whose go.mod it replaces with the one the
// release tag will hold), and returns the number of files in the zip.
func Add(proxyDir, dir string, m *workspace.Module, version string) (int, error) {
	esc, err := module.EscapePath(m.Path)
	if err != nil {
		return 0, err
	}
	vdir := filepath.Join(proxyDir, filepath.FromSlash(esc), "@v")
	if err := os.MkdirAll(vdir, 0o755); err != nil {
		return 0, err
	}
	gomod, err := workspace.ReleasedGoMod(m)
	if err != nil {
		return 0, err
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), gomod, 0o644); err != nil {
		return 0, err
	}
	var z bytes.Buffer
	if err := modzip.CreateFromDir(&z, module.Version{Path: m.Path, Version: version}, dir); err != nil {
		return 0, err
	}
	n, err := checkZip(z.Bytes(), m, version)
	if err != nil {
		return 0, err
	}
	info, err := json.Marshal(struct{ Version, Time string }{version, time.Now().UTC().Format(time.RFC3339)})
	if err != nil {
		return 0, err
	}
	for name, data := range map[string][]byte{
		version + ".zip":  z.Bytes(),
		version + ".mod":  gomod,
		version + ".info": info,
		"list":            []byte(version + "\n"),
	} {
		if err := os.WriteFile(filepath.Join(vdir, name), data, 0o644); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// checkZip reports a zip without its go.mod or with files of another module,
// and otherwise returns its number of files.
func checkZip(data []byte, m *workspace.Module, version string) (int, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return 0, err
	}
	prefix := m.Path + "@" + version + "/"
	hasMod := false
	for _, f := range zr.File {
		if !strings.HasPrefix(f.Name, prefix) {
			return 0, fmt.Errorf("zip holds %s, outside %s", f.Name, prefix)
		}
		hasMod = hasMod || f.Name == prefix+"go.mod"
	}
	if !hasMod {
		return 0, errors.New("zip holds no go.mod")
	}
	return len(zr.File), nil
}

// FileURL is the GOPROXY entry of the file proxy in folder dir.
func FileURL(dir string) string { return "file://" + filepath.ToSlash(dir) }

// Env returns the environment under which the go command resolves this
// repository's modules from the file proxy in proxyDir, then from goproxy
// (the user's GOPROXY; "off" for nothing else), outside any workspace, with
// no checksum database lookup for them: GOPROXY, GONOSUMDB, GOFLAGS (goflags
// plus -mod=mod) and GOWORK, in that order.
func Env(proxyDir, goproxy, goflags string) []string {
	return []string{
		"GOPROXY=" + FileURL(proxyDir) + "," + goproxy,
		"GONOSUMDB=github.com/k6labels",
		"GOFLAGS=" + strings.TrimSpace(goflags+" -mod=mod"),
		"GOWORK=off",
	}
}
