module github.com/k6labels/k6labels/integration

go 1.26.0

require github.com/k6labels/k6labels v0.0.0

replace github.com/k6labels/k6labels => ..

require (
	github.com/google/pprof v0.0.0-20261105003125-4bf881d7fb0b
	github.com/k6labels/k6labels/internal/profiletest v0.0.0
	go.opentelemetry.io/otel v1.47.0
	go.uber.org/goleak v1.3.0
)

replace github.com/k6labels/k6labels/internal/profiletest => ../internal/profiletest
