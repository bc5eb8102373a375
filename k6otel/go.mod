module github.com/k6labels/k6labels/k6otel

go 1.26.0

require github.com/k6labels/k6labels v0.1.0

replace github.com/k6labels/k6labels => ..

require (
	github.com/google/pprof v0.0.0-20261105003125-4bf881d7fb0b
	github.com/grafana/otel-profiling-go v0.7.0
	github.com/k6labels/k6labels/internal/profiletest v0.1.0
	github.com/k6labels/k6labels/k6grpc v0.1.0
	go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc v0.72.0
	go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp v0.72.0
	go.opentelemetry.io/otel v1.47.0
	go.opentelemetry.io/otel/sdk v1.47.0
	go.opentelemetry.io/otel/trace v1.47.0
	google.golang.org/grpc v1.85.0
	google.golang.org/protobuf v1.36.12
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/felixge/httpsnoop v1.1.0 // indirect
	github.com/go-logr/logr v1.4.4 // indirect
	github.com/go-logr/stdr v1.2.2 // indirect
	github.com/google/uuid v1.6.0 // indirect
	go.opentelemetry.io/auto/sdk v1.2.1 // indirect
	go.opentelemetry.io/otel/log v1.47.0 // indirect
	go.opentelemetry.io/otel/metric v1.47.0 // indirect
	golang.org/x/net v0.60.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
	golang.org/x/text v0.42.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260928230214-8a89bd6388cc // indirect
)

replace github.com/k6labels/k6labels/internal/profiletest => ../internal/profiletest

replace github.com/k6labels/k6labels/k6grpc => ../k6grpc
