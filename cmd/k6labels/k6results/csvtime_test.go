package k6results_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/k6labels/k6labels/cmd/k6labels/k6results"
)

// TestCSVTimeFormats: every time format of k6's csv output
// (K6_CSV_TIME_FORMAT) reads as the same instant; a number that is no
// plausible unix time in any unit, or text that is no time, is an error.
func TestCSVTimeFormats(t *testing.T) {
	want := time.Date(2026, 12, 2, 18, 15, 53, 0, time.UTC)
	const header = "metric_name,timestamp,metric_value,check,error,error_code,expected_response,group,method,name,proto,scenario,service,status,subproto,tls_version,url,extra_tags,metadata\n"
	csv := func(ts string) string {
		return header + "http_reqs," + ts + ",1.000000,,,,true,,GET,http://h:1/car,HTTP/1.1,default,,200,,,http://h:1/car,,\n"
	}
	for format, ts := range map[string]string{
		"unix":         "1796235353",
		"unix_milli":   "1796235353000",
		"unix_micro":   "1796235353000000",
		"unix_nano":    "1796235353000000000",
		"rfc3339":      "2026-12-02T18:15:53Z",
		"rfc3339_nano": "2026-12-02T18:15:53.000000000Z",
		"offset":       "2026-12-02T19:15:53+01:00",
		"float":        "1796235353.000",
	} {
		res, err := k6results.Read(strings.NewReader(csv(ts)))
		if err != nil {
			t.Errorf("timeFormat %s: %v", format, err)
			continue
		}
		if !res.Start.Equal(want) || res.Start.Location() != time.UTC {
			t.Errorf("timeFormat %s (%s): run starts %v, want %v", format, ts, res.Start, want)
		}
	}
	if res, err := k6results.Read(strings.NewReader(csv("1796235353123456789"))); err != nil || res.Start.Nanosecond() != 123456789 {
		t.Errorf("unix_nano keeps nanoseconds: %v, %v", res, err)
	}
	for ts, text := range map[string]string{
		"17962353530":          "no unix time between 2000 and 2100",
		"42":                   "no unix time between 2000 and 2100",
		"1899-12-02T18:15:53Z": "not between 2000 and 2100",
		"yesterday":            "neither a number nor RFC 3339",
	} {
		_, err := k6results.Read(strings.NewReader(csv(ts)))
		if !errors.Is(err, k6results.ErrFormat) || !strings.Contains(err.Error(), text) {
			t.Errorf("timestamp %s: %v, want an error saying %q", ts, err, text)
		}
	}
}
