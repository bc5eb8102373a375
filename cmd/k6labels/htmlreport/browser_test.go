package htmlreport

import (
	"context"
	"encoding/json"
	"flag"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/k6labels/k6labels/cmd/k6labels/report"
)

var screenshots = flag.String("screenshots", "", "with the browser test: write screenshots of the report and diff pages to this `dir`")

// chromium returns the headless browser's path. Without one the test is
// skipped, unless CI=true: the project's CI installs Debian's chromium.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no chromium on PATH: CI must run the browser test (.ci/run installs Debian's chromium package)")
	}
	t.Skip("no chromium on PATH: the html pages are not checked in a browser (Debian: apt-get install chromium)")
	return ""
}

// runChromium runs headless chromium with args and returns its stdout and
// stderr; a fresh profile directory keeps parallel runs apart.
func runChromium(t *testing.T, bin string, args ...string) (string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--disable-extensions",
		"--user-data-dir=" + t.TempDir(), "--enable-logging=stderr", "--v=0"}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	return out.String(), errb.String()
}

// console matches chromium's log lines of the page's console messages and
// uncaught errors.
var console = regexp.MustCompile(`(?m)^.*(CONSOLE|Uncaught).*$`)

// TestBrowser loads the report and diff pages in headless Chromium with
// #selftest: the page's own script counts the flame graphs, clicks a frame
// and checks that it zooms to the graph's width, clicks the top frame and
// checks that it zooms out, and lists any script error; the test reads the
// result from the dumped DOM and checks the browser's console log.
func TestBrowser(t *testing.T) {
	bin := chromium(t)
	p, k := readFixture(t)
	before := newReport(t, p, k)
	d, err := report.NewDiff(before, newReport(t, scaled(p, "/car", 1.5), k), report.DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	pages := map[string]func(*os.File) error{
		"report": func(f *os.File) error { return WriteReport(f, before) },
		"diff":   func(f *os.File) error { return WriteDiff(f, d) },
	}
	for name, write := range pages {
		path := filepath.Join(dir, name+".html")
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := write(f); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		dom, log := runChromium(t, bin, "--dump-dom", "file://"+path+"#selftest")
		m := regexp.MustCompile(`<pre id="selftest">(.*?)</pre>`).FindStringSubmatch(dom)
		if m == nil {
			t.Fatalf("%s: the page wrote no self-test result (did its script run?)\n%s", name, log)
		}
		var res struct {
			Graphs, Frames   int
			Zoomed, Unzoomed bool
			Clicked          string
			Errors           []string
			WidthBefore      float64
			WidthAfter       float64
			Hidden           int
		}
		if err := json.Unmarshal([]byte(html.UnescapeString(m[1])), &res); err != nil {
			t.Fatalf("%s: self-test result %q: %v", name, m[1], err)
		}
		t.Logf("%s: %+v", name, res)
		if res.Graphs == 0 || res.Frames < 10 {
			t.Errorf("%s: %d flame graphs, %d frames", name, res.Graphs, res.Frames)
		}
		if !res.Zoomed || !res.Unzoomed {
			t.Errorf("%s: clicking %q: zoomed in %v (width %.1f → %.1f, %d frames hidden), zoomed out %v",
				name, res.Clicked, res.Zoomed, res.WidthBefore, res.WidthAfter, res.Hidden, res.Unzoomed)
		}
		if len(res.Errors) > 0 {
			t.Errorf("%s: script errors: %q", name, res.Errors)
		}
		if c := console.FindAllString(log, -1); len(c) > 0 {
			t.Errorf("%s: console messages:\n%s", name, strings.Join(c, "\n"))
		}
		if *screenshots != "" {
			out, err := filepath.Abs(filepath.Join(*screenshots, "html-"+name+".png"))
			if err != nil {
				t.Fatal(err)
			}
			runChromium(t, bin, "--hide-scrollbars", "--window-size=1250,1500", "--screenshot="+out, "file://"+path)
		}
	}
}
