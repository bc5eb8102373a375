module github.com/k6labels/k6labels/examples/rideshare

go 1.26.0

require (
	github.com/google/pprof v0.0.0-20261105003125-4bf881d7fb0b
	github.com/grafana/pyroscope-go v1.5.0
	github.com/k6labels/k6labels v0.1.0
	github.com/k6labels/k6labels/cmd/k6labels v0.1.0
)

require (
	golang.org/x/exp v0.0.0-20261120182113-8801fbdfac81 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)

require (
	github.com/grafana/pyroscope-go/godeltaprof v0.1.12 // indirect
	github.com/k6labels/k6labels/internal/profiletest v0.1.0
	github.com/klauspost/compress v1.20.2 // indirect
)

replace github.com/k6labels/k6labels => ../..

replace github.com/k6labels/k6labels/internal/profiletest => ../../internal/profiletest

replace github.com/k6labels/k6labels/cmd/k6labels => ../../cmd/k6labels
