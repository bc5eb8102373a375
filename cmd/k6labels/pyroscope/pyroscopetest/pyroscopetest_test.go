package pyroscopetest_test

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/k6labels/k6labels/cmd/k6labels/pyroscope/pyroscopetest"
)

func load(t *testing.T) []pyroscopetest.Exchange {
	t.Helper()
	xs, err := pyroscopetest.Load(filepath.Join(pyroscopetest.Fixtures(t), "pyroscope"))
	if err != nil {
		t.Fatal(err)
	}
	return xs
}

// TestLoad reads the 37 recorded exchanges: statuses as the README lists
// them, protobuf request bodies decoded from base64.
func TestLoad(t *testing.T) {
	xs := load(t)
	if len(xs) != 37 {
		t.Fatalf("%d exchanges, want 37", len(xs))
	}
	status := map[int]int{}
	proto := 0
	for _, x := range xs {
		status[x.Status]++
		if x.ContentType == "application/proto" {
			proto++
			if len(x.Body) == 0 || x.Body[0] != 0x0a { // field 1, bytes: profile_typeID
				t.Errorf("%s: protobuf body % x", x.Name, x.Body[:min(4, len(x.Body))])
			}
		}
		if x.Header.Get("Content-Length") != "" || x.Header.Get("Transfer-Encoding") != "" {
			t.Errorf("%s: framing headers kept: %v", x.Name, x.Header)
		}
	}
	if status[200] != 34 || status[400] != 2 || status[405] != 1 {
		t.Errorf("statuses %v, want 34×200, 2×400, 1×405", status)
	}
	if proto != 18 {
		t.Errorf("%d protobuf requests, want 18 (09, 11, 12, 16, 18, 23-34, 37)", proto)
	}
	if _, err := pyroscopetest.Load(t.TempDir()); err == nil {
		t.Error("Load of an empty folder: no error")
	}
}

// TestMatchNormalizesJSON: the recorded answer comes back for the recorded
// JSON body with its keys reordered and spaced, with the recorded headers.
func TestMatchNormalizesJSON(t *testing.T) {
	xs := load(t)
	srv := pyroscopetest.NewServer(t, xs)
	body := `{ "end": 1796234640000, "start": 1796234535000,
	  "matchers": ["{service_name=\"rideshare.k6labels\"}"], "name": "k6_scenario" }`
	resp, err := http.Post(srv.URL+"/querier.v1.QuerierService/LabelValues", "application/json; charset=utf-8", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || string(got) != `{"names":["off_peak", "rush_hour"]}` || resp.Header.Get("Accept-Encoding") != "gzip" {
		t.Errorf("%s %v %s", resp.Status, resp.Header, got)
	}
	if h := srv.Hits(); h["03-label-values-k6_scenario"] != 1 || len(h) != 1 || srv.Unmatched() != 0 {
		t.Errorf("hits %v, unmatched %d", h, srv.Unmatched())
	}
}

// TestUnmatchedFails runs a test that sends a request no recording has (a
// protobuf SelectMergeProfile one millisecond later than 09's) in a child
// process: it must fail, with the request and the closest recording shown.
func TestUnmatchedFails(t *testing.T) {
	if os.Getenv("PYROSCOPETEST_CHILD") == "1" {
		xs := load(t)
		srv := pyroscopetest.NewServer(t, xs)
		var x09 pyroscopetest.Exchange
		for _, x := range xs {
			if strings.HasPrefix(x.Name, "09-") {
				x09 = x
			}
		}
		body := bytes.Clone(x09.Body)
		body[len(body)-1-5]++ // a byte of the varint of end (field 4)
		resp, err := http.Post(srv.URL+x09.Path, "application/proto", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("status %s", resp.Status)
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestUnmatchedFails$", "-test.count=1")
	cmd.Env = append(os.Environ(), "PYROSCOPETEST_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the child test passed:\n%s", out)
	}
	for _, want := range []string{"no recorded exchange matches the request", "got:  POST /querier.v1.QuerierService/SelectMergeProfile (application/proto)",
		"closest recorded 09-select-merge-profile-fx1-proto", `2:"{service_name=\"rideshare.k6labels\",k6_test_run_id=\"fx1\"}"`, "4:1796234640000"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("child output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "status 404") {
		t.Errorf("unmatched request not answered 404:\n%s", out)
	}
}
