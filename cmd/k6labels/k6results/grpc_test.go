package k6results_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/k6labels/k6labels/cmd/k6labels/k6results"
)

// grpcJSON and grpcCSV are shaped after what k6 run --out json / --out csv
// writes for calls of k6/net/grpc (no recording of a gRPC run exists): a
// grpc_req_duration Trend point per call, its value the duration in ms,
// tagged name (the full method), method (the RPC's name), service, url
// (address + full method), status (the gRPC code), scenario and group.
const grpcJSON = `{"type":"Metric","data":{"name":"grpc_req_duration","type":"trend","contains":"time","thresholds":[],"submetrics":null},"metric":"grpc_req_duration"}
{"metric":"grpc_req_duration","type":"Point","data":{"time":"2026-12-02T18:02:45.100000000Z","value":1.5,"tags":{"group":"","method":"GetFeature","name":"/main.RouteGuide/GetFeature","proto":"HTTP/2","scenario":"lookups","service":"main.RouteGuide","status":"0","url":"127.0.0.1:10000/main.RouteGuide/GetFeature"}}}
{"metric":"grpc_req_duration","type":"Point","data":{"time":"2026-12-02T18:02:45.200000000Z","value":2.25,"tags":{"group":"","method":"GetFeature","name":"/main.RouteGuide/GetFeature","proto":"HTTP/2","scenario":"lookups","service":"main.RouteGuide","status":"0","url":"127.0.0.1:10000/main.RouteGuide/GetFeature"}}}
{"metric":"grpc_req_duration","type":"Point","data":{"time":"2026-12-02T18:02:45.300000000Z","value":0.75,"tags":{"group":"","method":"GetFeature","name":"/main.RouteGuide/GetFeature","proto":"HTTP/2","scenario":"lookups","service":"main.RouteGuide","status":"5","url":"127.0.0.1:10000/main.RouteGuide/GetFeature"}}}
{"metric":"grpc_req_duration","type":"Point","data":{"time":"2026-12-02T18:02:46.000000000Z","value":9,"tags":{"group":"","method":"RecordRoute","name":"/main.RouteGuide/RecordRoute","proto":"HTTP/2","scenario":"uploads","service":"main.RouteGuide","status":"0","url":"127.0.0.1:10000/main.RouteGuide/RecordRoute"}}}
{"metric":"grpc_req_duration","type":"Point","data":{"time":"2026-12-02T18:02:44.000000000Z","value":3,"tags":{"group":"::setup","method":"GetFeature","name":"/main.RouteGuide/GetFeature","proto":"HTTP/2","scenario":"","service":"main.RouteGuide","status":"0","url":"127.0.0.1:10000/main.RouteGuide/GetFeature"}}}
{"metric":"http_reqs","type":"Point","data":{"time":"2026-12-02T18:02:46.500000000Z","value":1,"tags":{"expected_response":"true","group":"","method":"GET","name":"http://127.0.0.1:18080/health","proto":"HTTP/1.1","scenario":"lookups","status":"200","url":"http://127.0.0.1:18080/health"}}}
`

const grpcCSV = `metric_name,timestamp,metric_value,check,error,error_code,expected_response,group,method,name,proto,scenario,service,status,subproto,tls_version,url,extra_tags,metadata
grpc_req_duration,1796234565,1.500000,,,,,,GetFeature,/main.RouteGuide/GetFeature,HTTP/2,lookups,main.RouteGuide,0,,,127.0.0.1:10000/main.RouteGuide/GetFeature,,
grpc_req_duration,1796234565,2.250000,,,,,,GetFeature,/main.RouteGuide/GetFeature,HTTP/2,lookups,main.RouteGuide,0,,,127.0.0.1:10000/main.RouteGuide/GetFeature,,
grpc_req_duration,1796234565,0.750000,,,,,,GetFeature,/main.RouteGuide/GetFeature,HTTP/2,lookups,main.RouteGuide,5,,,127.0.0.1:10000/main.RouteGuide/GetFeature,,
grpc_req_duration,1796234566,9.000000,,,,,,RecordRoute,/main.RouteGuide/RecordRoute,HTTP/2,uploads,main.RouteGuide,0,,,127.0.0.1:10000/main.RouteGuide/RecordRoute,,
grpc_req_duration,1796234564,3.000000,,,,,::setup,GetFeature,/main.RouteGuide/GetFeature,HTTP/2,,main.RouteGuide,0,,,127.0.0.1:10000/main.RouteGuide/GetFeature,,
http_reqs,1796234566,1.000000,,,,true,,GET,http://127.0.0.1:18080/health,HTTP/1.1,lookups,,200,,,http://127.0.0.1:18080/health,,
`

// TestGRPCCalls: each grpc_req_duration point is one request of its
// scenario and full-method name, in json and csv, counted with http_reqs;
// its method tag (the RPC's name) is no HTTP method and is not kept.
func TestGRPCCalls(t *testing.T) {
	for format, in := range map[string]string{"json": grpcJSON, "csv": grpcCSV} {
		t.Run(format, func(t *testing.T) {
			res, err := k6results.Read(strings.NewReader(in))
			if err != nil {
				t.Fatal(err)
			}
			want := map[k6results.Key]int64{
				{Scenario: "lookups", Name: "/main.RouteGuide/GetFeature"}:   3,
				{Scenario: "uploads", Name: "/main.RouteGuide/RecordRoute"}:  1,
				{Scenario: "lookups", Name: "http://127.0.0.1:18080/health"}: 1,
			}
			if fmt.Sprint(res.Requests) != fmt.Sprint(want) {
				t.Errorf("requests %v, want %v", res.Requests, want)
			}
			if res.Total != 5 || res.GRPC != 4 || res.LeftOut != 1 {
				t.Errorf("total %d, gRPC %d, left out %d; want 5, 4, 1", res.Total, res.GRPC, res.LeftOut)
			}
			for k, m := range res.Methods {
				if strings.HasPrefix(k.Name, "/main.") {
					t.Errorf("gRPC row %v has methods %v", k, m)
				}
			}
			if res.Start.Unix() != 1796234565 && format == "csv" || res.End.IsZero() {
				t.Errorf("time range %v … %v", res.Start, res.End)
			}
		})
	}
}

// TestGRPCOnly: results with gRPC calls and no http_reqs are requests.
func TestGRPCOnly(t *testing.T) {
	lines := strings.Split(grpcJSON, "\n")
	res, err := k6results.Read(strings.NewReader(strings.Join(lines[:5], "\n")))
	if err != nil {
		t.Fatal(err)
	}
	if res.Total != 4 || res.GRPC != 4 {
		t.Errorf("total %d, gRPC %d; want 4, 4", res.Total, res.GRPC)
	}
	bad := strings.Replace(lines[1], `"value":1.5`, `"value":-1`, 1)
	if _, err := k6results.Read(strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), "grpc_req_duration value -1") {
		t.Errorf("negative duration: %v", err)
	}
}
