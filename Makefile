# Every target works on a fresh machine with Go installed: tools the checks
# need are run through `go run` at the versions pinned here, and modules come
# through the Go module proxy.

# The modules of this repository, from go.work.
MODULES := $(shell go list -m -f '{{.Dir}}')
FUZZTIME ?= 15s

.PHONY: test vet fmt-check fuzz bench ci

## test: run every module's tests with the race detector.
test:
	@set -e; for d in $(MODULES); do echo "== $$d"; (cd $$d && go test -race -count=1 ./...); done

## vet: go vet every module.
vet:
	@set -e; for d in $(MODULES); do (cd $$d && go vet ./...); done

## fmt-check: fail if any Go file is not gofmt-formatted.
fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

## fuzz: run each fuzz target for FUZZTIME.
fuzz:
	@set -e; for f in $$(git grep -l '^func Fuzz' -- '*_test.go'); do \
		dir=$$(dirname $$f); \
		for t in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' $$f); do \
			echo "== fuzz $$dir $$t"; \
			(cd $$dir && go test -run '^$$' -fuzz "^$$t\$$" -fuzztime $(FUZZTIME) .); \
		done; \
	done

## bench: the benchmarks behind the README's performance table.
bench:
	go test -run '^$$' -bench . -benchmem -count 10 . | tee bench.txt

## ci: everything .ci/run checks.
ci: fmt-check vet test fuzz
