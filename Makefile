# Every target works on a fresh machine with Go installed: tools the checks
# need are run through `go run` at the versions pinned here, and modules come
# through the Go module proxy.

# The modules of this repository, from go.work.
MODULES := $(shell go list -m -f '{{.Dir}}')
FUZZTIME ?= 15s

.PHONY: test vet lint fmt-check fuzz bench bench-compare bench-tables bench-wrk bench-crafted ci demo-smoke ci-recipe soak \
	test-gowork-off test-go1.27 release release-check consumer-check test-clone proxy

# Each test binary gets at most TEST_TIMEOUT: more than all of `make test`
# takes on a quiet 2-core machine (under 5 minutes), room for a loaded one.
# The full-size tests are `make soak`'s.
TEST_TIMEOUT ?= 6m

## test: every module's tests with the race detector: a line per module as it
## ends (result, seconds), every module even when one fails, then a summary.
test:
	@bash .ci/modtest.sh -race -count=1 -timeout $(TEST_TIMEOUT)

## test-clone: `make test` in a fresh clone of HEAD in an empty temporary
## folder (nothing beside it), as a user who clones the repository runs it.
test-clone:
	@set -e; d=$$(mktemp -d); trap 'rm -rf "$$d"' EXIT; \
	git clone --quiet --no-hardlinks "$(CURDIR)" "$$d/k6labels"; \
	echo "test-clone: make test in a clone of $$(git rev-parse --short HEAD) in $$d/k6labels"; \
	s=$$(date +%s); rc=0; $(MAKE) --no-print-directory -C "$$d/k6labels" test || rc=$$?; \
	echo "test-clone: make test took $$(( $$(date +%s) - s ))s"; exit $$rc

## test-gowork-off: run every module's tests without the workspace, as each
## go.mod alone resolves its dependencies (siblings through their replace).
test-gowork-off:
	@GOWORK=off bash .ci/modtest.sh -count=1 -timeout $(TEST_TIMEOUT)

# The other Go release tested; the go command fetches it through the module proxy.
GO_NEXT := go1.27.3
NEXT_MODULES := . ./k6grpc

## test-go1.27: the root and k6grpc modules' tests (the goroutine-label
## restore a new runtime could break) under $(GO_NEXT) as well.
test-go1.27:
	@GOTOOLCHAIN=$(GO_NEXT) go version && \
		GOTOOLCHAIN=$(GO_NEXT) bash .ci/modtest.sh -m "$(NEXT_MODULES)" -race -count=1 -timeout $(TEST_TIMEOUT)

## vet: go vet every module.
vet:
	@set -e; for d in $(MODULES); do (cd $$d && go vet ./...); done

GOLANGCI_LINT := go run github.com/golangci/golangci-lint/v2/cmd/golangci-lint@v2.15.0

## lint: golangci-lint (.golangci.yml) over every module. The first run builds
## the pinned linter, which takes minutes; later runs use the build cache.
lint:
	@set -e; for d in $(MODULES); do echo "== lint $$d"; \
		(cd $$d && $(GOLANGCI_LINT) run --allow-parallel-runners --config $(CURDIR)/.golangci.yml ./...); done

## fmt-check: fail if any Go file is not gofmt-formatted.
fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

## fuzz: run each fuzz target for FUZZTIME.
fuzz:
	FUZZTIME=$(FUZZTIME) bash .ci/fuzz.sh

BENCHSTAT := go run golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da

## diff-rates: the diff's false-alarm and detection rates on real in-process
## runs of the demo: DIFF_PAIRS no-change pairs (each its own two runs),
## DIFF_UNIFORM pairs with every route +20%, DIFF_EFFECT pairs per /car +10%,
## +20%, +30%, DIFF_REQUESTS requests per run (20-35 s each on a shared 2-core
## machine). About 40 minutes; not part of test. docs/report.md shows the tables.
DIFF_PAIRS ?= 20
DIFF_UNIFORM ?= 5
DIFF_EFFECT ?= 8
DIFF_REQUESTS ?= 4500
.PHONY: diff-rates
diff-rates:
	cd examples/rideshare && K6LABELS_DIFF_PAIRS=$(DIFF_PAIRS) K6LABELS_DIFF_UNIFORM=$(DIFF_UNIFORM) \
		K6LABELS_DIFF_EFFECT=$(DIFF_EFFECT) K6LABELS_DIFF_REQUESTS=$(DIFF_REQUESTS) \
		go test -run '^TestDiffRates$$' -count=1 -timeout 0 -v . | grep --line-buffered -v '^=== RUN'

## bench: the root package's benchmarks.
bench:
	go test -run '^$$' -bench . -benchmem -count 10 -timeout 30m . | tee bench.txt

# Rounds and time per benchmark of bench-compare (docs/internals/performance.md).
BENCH_ROUNDS ?= 10
BENCH_TIME ?= 500ms
BENCH_OUT ?= bench-out

## bench-crafted: instructions per Labeler.Context call for each crafted header
## of BenchmarkCrafted, counted by Valgrind (needs valgrind): unlike times,
## they do not depend on what else the machine runs. Each figure is
## (I(3N) - I(N)) / 2N over the whole program, which cancels start-up and
## set-up (callgrind's per-function split of Go code is not stable).
CRAFTED_N ?= 2000
bench-crafted:
	@command -v valgrind >/dev/null || { echo "bench-crafted needs valgrind (Debian: apt-get install valgrind)"; exit 1; }
	@set -e; d=$$(mktemp -d); trap 'rm -rf "$$d"' EXIT; go test -c -o "$$d/k6labels.test" .; \
	count() { GOGC=off GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off GOMAXPROCS=1 valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
		"$$d/k6labels.test" -test.run '^$$' -test.bench "Crafted/header=$$1\$$" -test.benchtime "$$2x" 2>&1 | \
		awk '/I *refs/ { gsub(",", "", $$NF); print $$NF }'; }; \
	for h in $$(sed -n 's/^\t\t{"\([A-Za-z0-9]*\)", \(true\|false\),.*/\1/p' crafted_test.go); do \
		a=$$(count $$h $(CRAFTED_N)); b=$$(count $$h $$((3 * $(CRAFTED_N)))); \
		awk -v h=$$h -v a=$$a -v b=$$b -v n=$(CRAFTED_N) 'BEGIN { printf "%-14s %6.1fk instructions\n", h, (b - a) / (2 * n) / 1000 }'; \
	done

## bench-compare: docs/internals/performance.md's tables in one run: BENCH_ROUNDS
## interleaved rounds of each test binary (the bench module against the
## x/k6-like baseline, side-by-side ratios, the -cpu 1,2,4,8 scaling, the
## root and k6grpc rows), raw output in BENCH_OUT, then benchstat.
bench-compare:
	@set -e; mkdir -p $(BENCH_OUT); \
	(cd bench && go test -c -o $(CURDIR)/$(BENCH_OUT)/bench.test .); \
	go test -c -o $(BENCH_OUT)/root.test .; \
	(cd k6grpc && go test -c -o $(CURDIR)/$(BENCH_OUT)/k6grpc.test .); \
	rm -f $(BENCH_OUT)/*.txt; \
	for i in $$(seq $(BENCH_ROUNDS)); do echo "round $$i of $(BENCH_ROUNDS)"; \
		$(BENCH_OUT)/bench.test -test.run '^$$' -test.bench 'Handler|Mux|Unary' -test.benchmem -test.benchtime $(BENCH_TIME) >> $(BENCH_OUT)/compare.txt; \
		$(BENCH_OUT)/bench.test -test.run '^$$' -test.bench 'Ratio' -test.benchtime $(BENCH_TIME) >> $(BENCH_OUT)/ratio.txt; \
		$(BENCH_OUT)/bench.test -test.run '^$$' -test.bench 'Parallel' -test.cpu 1,2,4,8 -test.benchmem -test.benchtime $(BENCH_TIME) >> $(BENCH_OUT)/parallel.txt; \
		$(BENCH_OUT)/root.test -test.run '^$$' -test.bench 'Counters|LabelsNames' -test.cpu 1,2,4,8 -test.benchmem -test.benchtime $(BENCH_TIME) >> $(BENCH_OUT)/root.txt; \
		$(BENCH_OUT)/k6grpc.test -test.run '^$$' -test.bench 'UnaryServerInterceptor' -test.benchmem -test.benchtime $(BENCH_TIME) >> $(BENCH_OUT)/k6grpc.txt; \
	done
	$(MAKE) --no-print-directory bench-tables

## bench-tables: benchstat tables of the output bench-compare left in BENCH_OUT.
bench-tables:
	@cd $(BENCH_OUT) && \
	$(BENCHSTAT) -filter '.unit:(%of-base OR base-ns/req OR ns/req)' -row .fullname ratio.txt && \
	$(BENCHSTAT) -filter '.name:Handler' -col '/impl@(baseline k6labels bare)' -row /header compare.txt && \
	$(BENCHSTAT) -filter '.name:Mux' -col '/impl@(k6labels k6labels-servemux k6labels-route k6labels-formatter baseline bare)' -row /traffic compare.txt && \
	$(BENCHSTAT) -filter '.name:Unary' -col '/impl@(baseline k6labels)' -row /header compare.txt && \
	$(BENCHSTAT) -col '/impl@(baseline k6labels)' -row '/header /gomaxprocs' parallel.txt && \
	$(BENCHSTAT) -filter '.name:Counters' -col '/impl@(shared striped)' -row /gomaxprocs root.txt && \
	$(BENCHSTAT) -filter '.name:LabelsNames' -row '/names /gomaxprocs' root.txt && \
	$(BENCHSTAT) k6grpc.txt

## bench-wrk: throughput of a null handler bare, with k6labels and with the
## baseline under wrk, server and wrk pinned to different cores (needs wrk:
## apt-get install wrk; skips without it). Not run by CI.
bench-wrk:
	bash bench/wrk.sh

## demo-smoke: the README's first command, shortened: fails unless it prints the CPU table.
demo-smoke:
	@set -e; d=$$(mktemp -d); trap 'rm -rf "$$d"' EXIT; \
	go run ./examples/rideshare -duration 3s -o "$$d/demo.pprof" > "$$d/out.txt" || { cat "$$d/out.txt"; exit 1; }; \
	cat "$$d/out.txt"; \
	for want in '^  k6_scenario ' '^  rush_hour ' '^  off_peak ' '^  k6_name ' '(no k6 labels)' 'go tool pprof -tags'; do \
		grep -q -- "$$want" "$$d/out.txt" || { echo "demo-smoke: the output lacks $$want"; exit 1; }; \
	done; \
	test -s "$$d/demo.pprof" || { echo "demo-smoke: no profile written"; exit 1; }; \
	grep -q 'class="fg"' "$$d/demo.html" || { echo "demo-smoke: no html report with a flame graph written"; exit 1; }

ACTIONLINT := go run github.com/rhysd/actionlint/cmd/actionlint@v1.7.12

## ci-recipe: docs/ci.md's GitHub Actions workflow passes actionlint and is the file docs/ci/k6labels.yml; its
## steps run on this machine against the demo service (docs/ci/run-local.sh).
ci-recipe:
	$(ACTIONLINT) docs/ci/k6labels.yml
	@awk '/^```yaml$$/ {on = 1; next} on && /^```$$/ {exit} on' docs/ci.md | diff -u docs/ci/k6labels.yml - || \
		{ echo "ci-recipe: docs/ci.md shows another workflow than docs/ci/k6labels.yml"; exit 1; }
	@set -e; d=$$(mktemp -d); trap 'rm -rf "$$d"' EXIT; OUT="$$d/out" bash docs/ci/run-local.sh

## soak: the tests `make test` runs small, at full size (K6LABELS_SOAK=1): the root
## module's exhaustive character, rune and memory tests, k6results' streaming test
## (two copies of a fixture), the command's 2 GiB gzip bombs, and the README's reliability figures (10^6-request
## cardinality flood, 10^5 keep-alive requests per protocol, 10^5 gRPC calls).
## About 3 minutes on 2 cores: `make ci` runs it last; `.ci/run soak` runs it alone.
SOAK_TIMEOUT ?= 3h
soak:
	@K6LABELS_SOAK=1 bash .ci/modtest.sh -m ". ./integration ./cmd/k6labels" -count=1 -timeout $(SOAK_TIMEOUT)

# The upcoming release: every inter-module requirement is at this version.
RELEASE_VERSION := v0.1.0

## release: set every inter-module requirement to VERSION, check each module
## with GOWORK=off and print the tags to push (docs/release.md).
release:
	@test -n "$(VERSION)" || { echo "usage: make release VERSION=v0.1.0"; exit 2; }
	go run ./tools/release $(VERSION)

## release-check: fail unless every inter-module requirement is RELEASE_VERSION.
release-check:
	go run ./tools/release -check $(RELEASE_VERSION)

## consumer-check: install every published module at RELEASE_VERSION from a
## file-based module proxy of the working tree, as a user would, and run it.
consumer-check:
	go run ./tools/consumercheck $(RELEASE_VERSION)

## proxy: a file-based module proxy of the working tree in PROXY_DIR (default:
## the user cache folder's k6labels/proxy), every published module at
## RELEASE_VERSION; prints the GOPROXY, GONOSUMDB, GOFLAGS and GOWORK to use it.
proxy:
	@go run ./tools/proxy $(if $(PROXY_DIR),-dir $(PROXY_DIR)) $(RELEASE_VERSION)

## ci: everything .ci/run checks. Its test step is test-clone: `make test` in a
## fresh clone, which is what a user who clones the repository runs.
ci: fmt-check vet lint test-clone test-gowork-off test-go1.27 fuzz demo-smoke release-check consumer-check ci-recipe soak
