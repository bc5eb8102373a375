module github.com/k6labels/k6labels/integration

go 1.26.0

require (
	github.com/google/pprof v0.0.0-20261105003125-4bf881d7fb0b
	github.com/k6labels/k6labels v0.1.0
	github.com/k6labels/k6labels/internal/profiletest v0.1.0
	github.com/k6labels/k6labels/k6grpc v0.1.0
	go.opentelemetry.io/otel v1.47.0
	go.uber.org/goleak v1.3.0
	golang.org/x/exp v0.0.0-20261120182113-8801fbdfac81
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
