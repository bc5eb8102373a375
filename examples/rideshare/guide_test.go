package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// guidePath is the user guide whose commands TestGuide runs.
const guidePath = "../../docs/guide.md"

// guideMarker precedes each fenced sh block TestGuide runs; a fenced text
// block right after such a block is (an excerpt of) its output.
const guideMarker = "<!-- guide-test -->"

// guideAddr is the service address the guide uses; the test serves on a
// free port instead.
const guideAddr = "127.0.0.1:18080"

type guideStep struct {
	line int    // of the sh fence in the guide
	code string // the shell commands
	want string // the text block after it, if any
}

// parseGuide returns the marked sh blocks of a guide and their outputs.
func parseGuide(text string) ([]guideStep, error) {
	var steps []guideStep
	lines := strings.Split(text, "\n")
	block := func(i int, lang string) (string, int, error) {
		if strings.TrimSpace(lines[i]) != "```"+lang {
			return "", i, fmt.Errorf("line %d: want a ```%s fence, got %q", i+1, lang, lines[i])
		}
		for j := i + 1; j < len(lines); j++ {
			if strings.TrimSpace(lines[j]) == "```" {
				return strings.Join(lines[i+1:j], "\n") + "\n", j, nil
			}
		}
		return "", i, fmt.Errorf("line %d: the ```%s block does not end", i+1, lang)
	}
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != guideMarker {
			continue
		}
		code, end, err := block(i+1, "sh")
		if err != nil {
			return nil, err
		}
		st := guideStep{line: i + 2, code: code}
		// The output block: the next fence, if it is a text block.
		for j := end + 1; j < len(lines); j++ {
			t := strings.TrimSpace(lines[j])
			if t == guideMarker || (strings.HasPrefix(t, "```") && t != "```text") {
				break
			}
			if t == "```text" {
				if st.want, end, err = block(j, "text"); err != nil {
					return nil, err
				}
				break
			}
		}
		steps = append(steps, st)
		i = end
	}
	return steps, nil
}

// numbers are the figures that differ from run to run: digit runs of two
// or more characters, with their decimal and thousands separators. Single
// digits (exit statuses, the 6 of k6) must match.
var numbers = regexp.MustCompile(`\d[\d.,]*\d`)

// normalize masks the figures of a line and collapses its spaces.
func normalize(line string) string {
	return strings.Join(strings.Fields(numbers.ReplaceAllString(line, "#")), " ")
}

// matchOutput reports the first line of want (an excerpt: "..." lines skip
// any number of lines, a line ending in "..." matches by prefix) that does
// not come, in order, in got, figures masked.
func matchOutput(want, got string) error {
	gotLines := strings.Split(got, "\n")
	pos := 0
	for _, w := range strings.Split(strings.TrimRight(want, "\n"), "\n") {
		if strings.TrimSpace(w) == "..." || strings.TrimSpace(w) == "" {
			continue
		}
		nw := normalize(w)
		prefix := strings.HasSuffix(nw, "...")
		nw = strings.TrimSuffix(nw, "...")
		found := false
		for ; pos < len(gotLines); pos++ {
			ng := normalize(gotLines[pos])
			if ng == nw || prefix && strings.HasPrefix(ng, nw) {
				found = true
				pos++
				break
			}
		}
		if !found {
			return fmt.Errorf("the output lacks, in order, the line\n\t%s", w)
		}
	}
	return nil
}

func TestMatchOutput(t *testing.T) {
	got := "a 1.25s of 3\n  rows  12,000  +4.5%\nexit status 3\nk6 tail end\n"
	for _, ok := range []string{
		"a 9.99s of 3\n...\nexit status 3\n",
		"  rows   99   +1.0%\n",
		"k6 tail...\n",
	} {
		if err := matchOutput(ok, got); err != nil {
			t.Errorf("matchOutput(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{
		"exit status 1\n",               // single digits must match
		"exit status 3\na 1.25s of 3\n", // out of order
		"k7 tail...\n",
		"rows 12,000 -4.5%\n", // the sign is not a figure
	} {
		if err := matchOutput(bad, got); err == nil {
			t.Errorf("matchOutput(%q) matched", bad)
		}
	}
}

// TestGuide runs the commands of docs/guide.md, in order, in one shell in
// an empty folder, with the guide's programs (k6labels and rideshare) built
// from this tree first on PATH, and checks each output block the guide shows
// against what the commands print, figures masked: the guide cannot drift
// from the tool.
func TestGuide(t *testing.T) {
	for _, tool := range []string{"bash", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("the guide's commands need %s: %v", tool, err)
		}
	}
	text, err := os.ReadFile(guidePath)
	if err != nil {
		t.Fatal(err)
	}
	steps, err := parseGuide(string(text))
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) < 4 {
		t.Fatalf("%s has %d steps marked %s, want the whole flow", guidePath, len(steps), guideMarker)
	}

	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	// Each is built in its own module's folder, so that with GOWORK=off
	// the command's dependencies come from its own go.sum.
	for src, name := range map[string]string{".": "rideshare", filepath.Join("..", "..", "cmd", "k6labels"): "k6labels"} {
		build := exec.Command("go", "build", "-o", filepath.Join(bin, name), ".")
		build.Dir = src
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build in %s: %v\n%s", src, err, out)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()

	// One script: the steps share the shell's variables ($svc), each
	// preceded by a line that splits the output.
	var script strings.Builder
	script.WriteString("set -e\n")
	for i, st := range steps {
		fmt.Fprintf(&script, "echo '@@step %d'\n%s", i, strings.ReplaceAll(st.code, guideAddr, addr))
	}
	work := filepath.Join(dir, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", "-c", script.String())
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	raw, err := cmd.CombinedOutput()
	out := strings.ReplaceAll(string(raw), addr, guideAddr)
	if err != nil {
		t.Fatalf("the guide's commands failed: %v\n%s", err, out)
	}

	outputs := map[int]string{}
	cur := -1
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var n int
		if _, err := fmt.Sscanf(sc.Text(), "@@step %d", &n); err == nil {
			cur = n
			continue
		}
		outputs[cur] += sc.Text() + "\n"
	}
	for i, st := range steps {
		if st.want == "" {
			continue
		}
		if err := matchOutput(st.want, outputs[i]); err != nil {
			t.Errorf("%s, the step at line %d: %v\nits output:\n%s", guidePath, st.line, err, outputs[i])
		}
	}
}
