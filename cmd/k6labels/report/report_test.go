package report_test

import (
	"strings"
	"testing"

	"github.com/k6labels/k6labels/cmd/k6labels/pprofsource"
	"github.com/k6labels/k6labels/cmd/k6labels/report"
)

// TestReportSetupRequests: http_reqs made in setup() or teardown() (group
// ::setup or ::teardown, no scenario tag) carry no baggage, so their CPU is
// unlabelled: the k6_name row counts only the scenario's requests, and a
// note says how many were left out.
func TestReportSetupRequests(t *testing.T) {
	p := buildProfile(
		sample{labels: map[string]string{"k6_test_run_id": "r1", "k6_scenario": "s", "k6_name": "http://h:1/login"}, n: 100},
		sample{n: 900}, // setup's logins: unlabelled
	)
	src, err := pprofsource.New("cpu.pb.gz", p)
	if err != nil {
		t.Fatal(err)
	}
	var k6 strings.Builder
	for range 900 {
		k6.WriteString(`{"metric":"http_reqs","type":"Point","data":{"time":"2026-12-02T18:15:50Z","value":1,"tags":{"group":"::setup","method":"POST","name":"http://h:1/login","proto":"HTTP/1.1","status":"200","url":"http://h:1/login","expected_response":"true"}}}` + "\n")
	}
	for range 100 {
		k6.WriteString(`{"metric":"http_reqs","type":"Point","data":{"time":"2026-12-02T18:15:54Z","value":1,"tags":{"group":"","method":"POST","name":"http://h:1/login","proto":"HTTP/1.1","scenario":"s","status":"200","url":"http://h:1/login","expected_response":"true"}}}` + "\n")
	}
	k := readK6(t, k6.String())
	r := newReport(t, src, k)
	if row := r.Row(report.ByName, "http://h:1/login"); row == nil || row.Requests != 100 {
		t.Fatalf("k6_name /login: %+v; want the scenario's 100 requests, not the 900 of setup()", row)
	}
	if r.Requests != 100 || !strings.Contains(strings.Join(r.Notes, "\n"), "900 http_reqs made outside the scenarios (setup(), teardown()) are left out") {
		t.Errorf("requests %d, notes %q; want 100 and a note on the 900 left out", r.Requests, r.Notes)
	}
}
