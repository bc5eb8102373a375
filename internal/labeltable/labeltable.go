// Package labeltable is one table of baggage headers and the labels that
// every adapter must make of them with the default options: the tests of the
// net/http handler, the gRPC interceptors, fasthttp and k6otel.Context all
// run it, so that the per-request label cap (k6's three members always keep
// their place) is the same rule everywhere.
//
// Every header is valid W3C baggage with distinct keys, so that it reaches
// OpenTelemetry's baggage (a map, without the members' order) whole.
package labeltable

import (
	"strconv"
	"strings"
)

// A Case is one request: its baggage header lines, as sent, and the pprof
// labels it must be served with (empty: none).
type Case struct {
	Name  string
	Lines []string
	Want  map[string]string
}

// k6 is what k6's helper appends to a script's own baggage.
const k6 = "k6.test_run_id=123456,k6.scenario=rides,k6.name=http://localhost/bike/42?id=42"

// core returns the labels k6 makes of k6's members, with more.
func core(more ...string) map[string]string {
	m := map[string]string{
		"k6_test_run_id": "123456",
		"k6_scenario":    "rides",
		"k6_name":        "http://localhost/bike/42",
	}
	for _, kv := range more {
		k, v, _ := strings.Cut(kv, "=")
		m["k6_"+k] = v
	}
	return m
}

// members returns the script members "k6.<prefix><i>=<i>", i in order.
func members(prefix string, order ...int) string {
	var b strings.Builder
	for _, i := range order {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString("k6." + prefix + strconv.Itoa(i) + "=" + strconv.Itoa(i))
	}
	return b.String()
}

// Cases returns the table, a new copy on each call.
func Cases() []Case {
	return []Case{
		{"k6's three", []string{k6}, core()},
		{
			// The measured case: k6's helper appends its three members
			// after a script's six; the cap of 8 keeps all three of k6's.
			"six script members then k6's three",
			[]string{members("s", 1, 2, 3, 4, 5, 6) + "," + k6},
			core("s1=1", "s2=2", "s3=3", "s4=4", "s5=5"),
		},
		{
			"eight script members then k6's three",
			[]string{members("m", 8, 7, 6, 5, 4, 3, 2, 1) + "," + k6},
			core("m1=1", "m2=2", "m3=3", "m4=4", "m5=5"),
		},
		{
			"k6's three then eight script members",
			[]string{k6 + "," + members("m", 1, 2, 3, 4, 5, 6, 7, 8)},
			core("m1=1", "m2=2", "m3=3", "m4=4", "m5=5"),
		},
		{
			// Script names that sort before, between and after k6's own.
			"script names around k6's",
			[]string{"k6.zz=1,k6.aa=2,k6.test_run=3,k6.name_x=4," + k6 + ",k6.b=5,k6.scenarios=6,k6.o=7"},
			core("aa=2", "b=5", "name_x=4", "o=7", "scenarios=6"),
		},
		{
			"two lines, other members",
			[]string{"userId=alice," + members("x", 1, 2, 3, 4, 5, 6), "tenant=acme," + k6},
			core("x1=1", "x2=2", "x3=3", "x4=4", "x5=5"),
		},
		{
			// A local k6 run sends "undefined" as its run id: no label,
			// and no place taken under the cap.
			"local run",
			[]string{members("v", 1, 2, 3, 4, 5, 6, 7) + ",k6.test_run_id=undefined,k6.scenario=rides,k6.name=/bike"},
			map[string]string{
				"k6_scenario": "rides", "k6_name": "/bike",
				"k6_v1": "1", "k6_v2": "2", "k6_v3": "3", "k6_v4": "4", "k6_v5": "5", "k6_v6": "6",
			},
		},
		{"no k6 member", []string{"userId=alice,tenant=acme"}, map[string]string{}},
	}
}
