package main

import (
	"context"
	"maps"
	"net/http"
	"testing"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/k6labels/k6labels/examples/internal/servetest"
)

// call makes the RPC with a real Connect client and returns the labels the
// handler saw.
func call(t *testing.T, client *connect.Client[emptypb.Empty, structpb.Struct], baggage ...string) map[string]string {
	t.Helper()
	req := connect.NewRequest(&emptypb.Empty{})
	for _, b := range baggage {
		req.Header().Add("Baggage", b)
	}
	resp, err := client.CallUnary(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for k, v := range resp.Msg.GetFields() {
		got[k] = v.GetStringValue()
	}
	return got
}

func TestLabels(t *testing.T) {
	base := servetest.Start(t, newMux())
	h2c := &http.Client{Transport: &http.Transport{Protocols: servetest.Protocols()}}
	h2c.Transport.(*http.Transport).Protocols.SetHTTP1(false)
	for _, tt := range []struct {
		name   string
		client *connect.Client[emptypb.Empty, structpb.Struct]
	}{
		{"connect", connect.NewClient[emptypb.Empty, structpb.Struct](http.DefaultClient, base+labelsProcedure)},
		{"connect+json", connect.NewClient[emptypb.Empty, structpb.Struct](http.DefaultClient, base+labelsProcedure, connect.WithProtoJSON())},
		{"grpc", connect.NewClient[emptypb.Empty, structpb.Struct](h2c, base+labelsProcedure, connect.WithGRPC())},
		{"grpc-web", connect.NewClient[emptypb.Empty, structpb.Struct](http.DefaultClient, base+labelsProcedure, connect.WithGRPCWeb())},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := call(t, tt.client, servetest.Baggage); !maps.Equal(got, servetest.Want()) {
				t.Errorf("with k6 baggage: labels %v, want %v", got, servetest.Want())
			}
			if got := call(t, tt.client); len(got) != 0 {
				t.Errorf("without baggage: labels %v, want none", got)
			}
		})
	}
}
