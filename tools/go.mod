module github.com/k6labels/k6labels/tools

go 1.26.0

require golang.org/x/mod v0.43.0
