package pyroscopetest_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/k6labels/k6labels/cmd/k6labels/pyroscope/pyroscopetest"
)

func post(t *testing.T, url, procedure, body string) string {
	t.Helper()
	resp, err := http.Post(url+"/querier.v1.QuerierService/"+procedure, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("%s: %d %v %s", procedure, resp.StatusCode, err, b)
	}
	return string(b)
}

const cpuType = `"profile_typeID":"process_cpu:cpu:nanoseconds:cpu:nanoseconds"`

// TestDerived: queries the recordings do not hold are answered from them:
// one run's series is 07's series of that run (README: fx1 23.77 s, one
// point at 1796234565000); a 1 s series over a shorter window is 36's
// points in it, summed; one run's k6_name values are those whose recorded
// merged profile of that run has samples (fx1 has none of "/": 24); an
// unknown service is empty for every query, as 13–16 are.
func TestDerived(t *testing.T) {
	srv := pyroscopetest.NewServer(t, load(t))
	got := post(t, srv.URL, "SelectSeries", `{`+cpuType+`,"label_selector":"{service_name=\"rideshare.k6labels\",k6_test_run_id=\"fx1\"}","start":1796234535000,"end":1796234640000,"step":15}`)
	if want := `{"series":[{"points":[{"value":23770000000,"timestamp":"1796234565000"}]}]}`; got != want {
		t.Errorf("fx1 series:\n%s\nwant\n%s", got, want)
	}
	got = post(t, srv.URL, "SelectSeries", `{`+cpuType+`,"label_selector":"{service_name=\"rideshare.k6labels\"}","start":1796234571000,"end":1796234603000,"step":1}`)
	if want := `{"series":[{"points":[{"value":15970000000,"timestamp":"1796234591000"}]}]}`; got != want {
		t.Errorf("1 s series of the service:\n%s\nwant\n%s", got, want)
	}
	got = post(t, srv.URL, "LabelValues", `{"name":"k6_name","matchers":["{service_name=\"rideshare.k6labels\",k6_test_run_id=\"fx1\"}"],"start":1796234535000,"end":1796234640000}`)
	if want := `{"names":["http://127.0.0.1:18080/bike","http://127.0.0.1:18080/car","http://127.0.0.1:18080/scooter"]}`; got != want {
		t.Errorf("fx1 names: %s, want %s", got, want)
	}
	got = post(t, srv.URL, "SelectSeries", `{`+cpuType+`,"label_selector":"{service_name=\"no-such-service\",k6_test_run_id=\"x\"}","start":1796234540000,"end":1796234600000,"step":1}`)
	if got != "{}" {
		t.Errorf("unknown service: %s", got)
	}
	if srv.Unmatched() != 0 {
		t.Errorf("%d unmatched", srv.Unmatched())
	}
}

// TestClock: with SetClock, a SelectSeries point is hidden until its
// step's start plus the window: 07's fx2 point at 1796234595000 (15 s
// step) shows from 1796234610000, not a millisecond before.
func TestClock(t *testing.T) {
	srv := pyroscopetest.NewServer(t, load(t))
	var now time.Time
	srv.SetClock(func() time.Time { return now }, 30*time.Second)
	body := `{` + cpuType + `,"label_selector":"{service_name=\"rideshare.k6labels\",k6_test_run_id=\"fx2\"}","start":1796234535000,"end":1796234640000,"step":15}`
	now = time.UnixMilli(1796234609999)
	if got, want := post(t, srv.URL, "SelectSeries", body), `{"series":[{"points":[{"value":7550000000,"timestamp":"1796234565000"}]}]}`; got != want {
		t.Errorf("before the upload: %s, want %s", got, want)
	}
	now = time.UnixMilli(1796234610000)
	if got := post(t, srv.URL, "SelectSeries", body); !strings.Contains(got, `"value":15540000000,"timestamp":"1796234595000"`) {
		t.Errorf("after the upload: %s", got)
	}
}

// TestDerivedGroupedSeries: one run's SelectSeries grouped by k6_scenario,
// which no recording holds (05 sums both runs), is the CPU of the run's
// recorded merged profile of each scenario (12, 23: README fx1 rush_hour
// 17.66 s, off_peak 6.11 s), one point at the end of the first step.
func TestDerivedGroupedSeries(t *testing.T) {
	srv := pyroscopetest.NewServer(t, load(t))
	got := post(t, srv.URL, "SelectSeries", `{`+cpuType+`,"label_selector":"{service_name=\"rideshare.k6labels\",k6_test_run_id=\"fx1\"}","start":1796234535000,"end":1796234640000,"group_by":["k6_scenario"],"step":15}`)
	want := `{"series":[{"labels":[{"name":"k6_scenario","value":"off_peak"}],"points":[{"value":6110000000,"timestamp":"1796234550000"}]},` +
		`{"labels":[{"name":"k6_scenario","value":"rush_hour"}],"points":[{"value":17660000000,"timestamp":"1796234550000"}]}]}`
	if got != want {
		t.Errorf("fx1 by scenario:\n%s\nwant\n%s", got, want)
	}
	if srv.Unmatched() != 0 {
		t.Errorf("%d unmatched", srv.Unmatched())
	}
}
