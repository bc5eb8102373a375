package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/structpb"
)

// defaultClientBaggage is what k6's http-instrumentation-pyroscope helper
// would send for a call named "labels" in scenario "rides" (k6's gRPC
// client sends what the script puts in params.metadata).
const defaultClientBaggage = "k6.test_run_id=123456,k6.scenario=rides,k6.name=labels"

// runClient calls the service at addr as a k6 script does: the Labels
// method and the WatchLabels stream, each with the baggage metadata, and
// prints the pprof labels the server's handler ran with.
func runClient(ctx context.Context, addr, baggage string, w io.Writer) error {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	ctx = metadata.AppendToOutgoingContext(ctx, "baggage", baggage)
	fmt.Fprintf(w, "baggage: %s\n", baggage)

	out := new(structpb.Struct)
	if err := conn.Invoke(ctx, labelsMethod, new(emptypb.Empty), out); err != nil {
		return fmt.Errorf("%s: %w (is the server running? go run ./grpc)", labelsMethod, err)
	}
	fmt.Fprintf(w, "Labels:      %s\n", formatLabels(out))

	stream, err := conn.NewStream(ctx, &labelServiceDesc.Streams[0], watchLabelsMethod)
	if err != nil {
		return fmt.Errorf("%s: %w", watchLabelsMethod, err)
	}
	if err := stream.SendMsg(new(emptypb.Empty)); err != nil {
		return fmt.Errorf("%s: %w", watchLabelsMethod, err)
	}
	if err := stream.CloseSend(); err != nil {
		return fmt.Errorf("%s: %w", watchLabelsMethod, err)
	}
	for {
		out := new(structpb.Struct)
		err := stream.RecvMsg(out)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", watchLabelsMethod, err)
		}
		fmt.Fprintf(w, "WatchLabels: %s\n", formatLabels(out))
	}
}

// formatLabels prints the labels of a reply sorted by name: k=v, ...
func formatLabels(s *structpb.Struct) string {
	f := s.GetFields()
	if len(f) == 0 {
		return "(no labels)"
	}
	var out string
	for _, k := range slices.Sorted(maps.Keys(f)) {
		if out != "" {
			out += ", "
		}
		out += k + "=" + f[k].GetStringValue()
	}
	return out
}
