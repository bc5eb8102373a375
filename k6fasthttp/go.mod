module github.com/k6labels/k6labels/k6fasthttp

go 1.26.0

require (
	github.com/k6labels/k6labels v0.1.0
	github.com/k6labels/k6labels/internal/profiletest v0.1.0
	github.com/valyala/fasthttp v1.79.0
	go.uber.org/goleak v1.3.0
	golang.org/x/exp v0.0.0-20261120182113-8801fbdfac81
)

require (
	github.com/google/pprof v0.0.0-20261105003125-4bf881d7fb0b // indirect
	github.com/klauspost/compress v1.20.4 // indirect
	github.com/molecule-man/go-brrr v1.3.1 // indirect
	github.com/valyala/bytebufferpool v1.0.0 // indirect
)

replace (
	github.com/k6labels/k6labels => ..
	github.com/k6labels/k6labels/internal/profiletest => ../internal/profiletest
)
