package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"regexp"
	"strings"
	"testing"
)

// startServer serves newServer on 127.0.0.1 at a free port and returns its address.
func startServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := newServer()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.Serve(ln)
	}()
	t.Cleanup(func() {
		s.Stop()
		<-done
	})
	return ln.Addr().String()
}

// The client sends the k6 baggage on the unary call and the stream, and
// prints the labels the server's handlers ran with.
func TestClient(t *testing.T) {
	addr := startServer(t)
	var out bytes.Buffer
	if err := runClient(context.Background(), addr, defaultClientBaggage, &out); err != nil {
		t.Fatal(err)
	}
	want := "k6_name=labels, k6_scenario=rides, k6_test_run_id=123456"
	got := out.String()
	if !strings.Contains(got, "Labels:      "+want+"\n") || strings.Count(got, "WatchLabels: "+want+"\n") != 2 {
		t.Errorf("client output:\n%s\nwant the unary reply and both stream messages labelled %s", got, want)
	}

	out.Reset()
	if err := runClient(context.Background(), addr, "userId=alice", &out); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); strings.Count(got, "(no labels)") != 3 {
		t.Errorf("without k6 members the client printed:\n%s\nwant (no labels) three times", got)
	}
}

// A client of a server that is not there says so and what to do.
func TestClientNoServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	err = runClient(context.Background(), addr, defaultClientBaggage, new(bytes.Buffer))
	if err == nil || !strings.Contains(err.Error(), "go run ./grpc") {
		t.Errorf("runClient without a server: %v, want an error naming the command that starts it", err)
	}
}

// labels.proto, which k6 and grpcurl load, describes the service the server
// registers: package, service, and each method with its streaming.
func TestProtoMatchesService(t *testing.T) {
	proto, err := os.ReadFile("labels.proto")
	if err != nil {
		t.Fatal(err)
	}
	text := string(proto)
	name := labelServiceDesc.ServiceName
	i := strings.LastIndex(name, ".")
	pkg, svc := name[:i], name[i+1:]
	if !strings.Contains(text, "\npackage "+pkg+";\n") || !strings.Contains(text, "\nservice "+svc+" {\n") {
		t.Errorf("labels.proto does not declare package %s and service %s", pkg, svc)
	}
	rpcs := regexp.MustCompile(`rpc (\w+)\(google\.protobuf\.Empty\) returns \((stream )?google\.protobuf\.Struct\);`).FindAllStringSubmatch(text, -1)
	want := map[string]bool{}
	for _, m := range labelServiceDesc.Methods {
		want[m.MethodName] = false
	}
	for _, s := range labelServiceDesc.Streams {
		want[s.StreamName] = s.ServerStreams
	}
	if len(rpcs) != len(want) {
		t.Fatalf("labels.proto has %d rpcs, the service %d", len(rpcs), len(want))
	}
	for _, r := range rpcs {
		stream, ok := want[r[1]]
		if !ok || stream != (r[2] != "") {
			t.Errorf("labels.proto: rpc %s (stream %v) is not the service's", r[1], r[2] != "")
		}
	}
	for _, m := range []string{labelsMethod, watchLabelsMethod} {
		if !strings.HasPrefix(m, "/"+labelServiceDesc.ServiceName+"/") {
			t.Errorf("method %s is not of service %s", m, labelServiceDesc.ServiceName)
		}
	}
}
