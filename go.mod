module github.com/k6labels/k6labels

go 1.24
