module github.com/k6labels/k6labels/cmd/k6labels

go 1.26.0

require (
	github.com/creack/pty v1.1.24
	github.com/google/pprof v0.0.0-20261105003125-4bf881d7fb0b
	github.com/k6labels/k6labels v0.1.0
	golang.org/x/exp v0.0.0-20261120182113-8801fbdfac81
	golang.org/x/term v0.48.0
	google.golang.org/protobuf v1.36.12
)

require golang.org/x/sys v0.50.0 // indirect

replace github.com/k6labels/k6labels => ../..
