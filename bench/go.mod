module github.com/k6labels/k6labels/bench

go 1.26.0

require (
	github.com/k6labels/k6labels v0.1.0
	github.com/k6labels/k6labels/k6grpc v0.1.0
	go.opentelemetry.io/otel v1.47.0
	google.golang.org/grpc v1.85.0
)

require (
	golang.org/x/net v0.60.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
	golang.org/x/text v0.42.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260817212433-ac3dfec99bb1 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)

replace (
	github.com/k6labels/k6labels => ..
	github.com/k6labels/k6labels/internal/profiletest => ../internal/profiletest
	github.com/k6labels/k6labels/k6grpc => ../k6grpc
)
