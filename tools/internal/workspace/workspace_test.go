package workspace

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"
)

// tree writes files (slash paths relative to a new folder) and returns the folder.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, data := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

const repo = "github.com/k6labels/k6labels"

// repoLike is this repository's module graph, written the old way: v0.0.0
// requirements, one replace missing, modules listed out of order.
var repoLike = map[string]string{
	"go.work": "go 1.26.0\n\nuse (\n\t./k6otel\n\t.\n\t./cmd/k6labels\n\t./examples\n\t./internal/profiletest\n\t./k6grpc\n\t./tools\n)\n",
	"go.mod":  "module " + repo + "\n\ngo 1.24\n",
	"internal/profiletest/go.mod": "module " + repo + "/internal/profiletest\n\ngo 1.26.0\n\n" +
		"require github.com/google/pprof v0.0.0-20261105003125-4bf881d7fb0b\n",
	"k6grpc/go.mod": "module " + repo + "/k6grpc\n\ngo 1.26.0\n\nrequire (\n\t" + repo + " v0.0.0\n\t" +
		repo + "/internal/profiletest v0.0.0\n\tgoogle.golang.org/grpc v1.85.0\n)\n\nreplace " + repo + " => ..\n",
	"k6otel/go.mod": "module " + repo + "/k6otel\n\ngo 1.26.0\n\nrequire (\n\t" + repo + " v0.0.0\n\t" +
		repo + "/k6grpc v0.0.0\n)\n\nreplace " + repo + " => ..\n\nreplace " + repo + "/k6grpc => ../k6grpc\n",
	"cmd/k6labels/go.mod": "module " + repo + "/cmd/k6labels\n\ngo 1.26.0\n\nrequire " + repo + " v0.0.0\n\nreplace " + repo + " => ../..\n",
	"examples/go.mod":     "module " + repo + "/examples\n\ngo 1.26.0\n\nrequire " + repo + "/k6grpc v0.0.0\n\nreplace " + repo + "/k6grpc => ../k6grpc\n",
	"tools/go.mod":        "module " + repo + "/tools\n\ngo 1.26.0\n\nrequire golang.org/x/mod v0.43.0\n",
}

func load(t *testing.T, root string) []*Module {
	t.Helper()
	mods, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	return mods
}

func TestReleaseOrder(t *testing.T) {
	mods := load(t, tree(t, repoLike))
	order, err := ReleaseOrder(mods)
	if err != nil {
		t.Fatal(err)
	}
	var tags []string
	for _, m := range order {
		tags = append(tags, m.Tag("v0.1.0"))
	}
	want := []string{"v0.1.0", "internal/profiletest/v0.1.0", "cmd/k6labels/v0.1.0", "k6grpc/v0.1.0", "k6otel/v0.1.0"}
	if !slices.Equal(tags, want) {
		t.Errorf("tags %v\nwant %v", tags, want)
	}
}

func TestReleaseOrderCycle(t *testing.T) {
	files := map[string]string{
		"go.work":  "go 1.26.0\n\nuse (\n\t./a\n\t./b\n)\n",
		"a/go.mod": "module example.com/a\n\nrequire example.com/b v0.1.0\n",
		"b/go.mod": "module example.com/b\n\nrequire example.com/a v0.1.0\n",
	}
	_, err := ReleaseOrder(load(t, tree(t, files)))
	if err == nil || !strings.Contains(err.Error(), "cycle") {
		t.Errorf("ReleaseOrder of a cycle: %v, want a cycle error", err)
	}
}

func TestSetRequirements(t *testing.T) {
	root := tree(t, repoLike)
	changed, err := SetRequirements(load(t, root), "v0.1.0")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"k6otel", "cmd/k6labels", "examples", "k6grpc"}; !slices.Equal(changed, want) {
		t.Errorf("changed %v, want %v", changed, want)
	}
	// Every sibling requirement is v0.1.0 with a replace to its folder, and
	// nothing else moved.
	wantReplace := map[string]map[string]string{
		"k6grpc":       {repo: "..", repo + "/internal/profiletest": "../internal/profiletest"},
		"k6otel":       {repo: "..", repo + "/k6grpc": "../k6grpc"},
		"cmd/k6labels": {repo: "../.."},
		"examples":     {repo + "/k6grpc": "../k6grpc"},
	}
	for _, m := range load(t, root) {
		got := map[string]string{}
		for _, r := range m.File.Replace {
			got[r.Old.Path] = r.New.Path
		}
		if want := wantReplace[m.Dir]; len(got) != len(want) || !mapsEqual(got, want) {
			t.Errorf("%s: replace %v, want %v", m.Dir, got, want)
		}
		for _, r := range m.File.Require {
			sibling := strings.HasPrefix(r.Mod.Path, repo)
			if sibling && r.Mod.Version != "v0.1.0" {
				t.Errorf("%s requires %s", m.Dir, r.Mod)
			}
			if !sibling && r.Mod.Version == "v0.1.0" {
				t.Errorf("%s: third-party requirement changed to %s", m.Dir, r.Mod)
			}
		}
	}
	// A second run changes nothing.
	if changed, err := SetRequirements(load(t, root), "v0.1.0"); err != nil || len(changed) != 0 {
		t.Errorf("second SetRequirements changed %v (%v), want nothing", changed, err)
	}
}

func mapsEqual(a, b map[string]string) bool {
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return len(a) == len(b)
}

func TestSetRequirementsRefusesUnpublished(t *testing.T) {
	files := map[string]string{
		"go.work":      "go 1.26.0\n\nuse (\n\t.\n\t./bench\n)\n",
		"go.mod":       "module " + repo + "\n\nrequire " + repo + "/bench v0.0.0\n",
		"bench/go.mod": "module " + repo + "/bench\n",
	}
	_, err := SetRequirements(load(t, tree(t, files)), "v0.1.0")
	if err == nil || !strings.Contains(err.Error(), "not") {
		t.Errorf("a published module requiring bench: %v, want an error", err)
	}
}

func TestReleasedGoMod(t *testing.T) {
	mods := load(t, tree(t, repoLike))
	for _, m := range mods {
		data, err := ReleasedGoMod(m)
		if err != nil {
			t.Fatal(err)
		}
		f, err := modfile.Parse("go.mod", data, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := len(m.File.Replace) // as in the tree, but a command has none
		if m.Command() {
			want = 0
		}
		if len(f.Replace) != want {
			t.Errorf("%s: released go.mod has %d replace directives, want %d", m.Dir, len(f.Replace), want)
		}
		if len(f.Require) != len(m.File.Require) {
			t.Errorf("%s: released go.mod has %d requirements, the tree's %d", m.Dir, len(f.Require), len(m.File.Require))
		}
	}
}

func TestCheckVersion(t *testing.T) {
	for v, ok := range map[string]bool{
		"v0.1.0": true, "v1.2.3": true, "v0.1.0-rc.1": true,
		"0.1.0": false, "v0.1": false, "v2.0.0": false, "v0.1.0+meta": false, "": false,
	} {
		if err := CheckVersion(v); (err == nil) != ok {
			t.Errorf("CheckVersion(%q) = %v", v, err)
		}
	}
}
