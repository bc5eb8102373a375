module github.com/k6labels/k6labels/bench

go 1.26.0

require (
	github.com/k6labels/k6labels v0.1.0
	go.opentelemetry.io/otel v1.47.0
)

replace github.com/k6labels/k6labels => ..
