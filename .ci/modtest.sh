#!/usr/bin/env bash
# Runs `go test` in each module and prints one line per module as it ends
# (result and seconds), then a summary. Every module runs even when one fails;
# the exit status is 1 if any failed. A failing module's whole output follows
# its line.
#
# Usage: .ci/modtest.sh [-m "DIR..."] [go test flags...]
#   -m   the modules to test (default: every module of go.work)
# The flags go to `go test` before ./... and should include -timeout.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
if [ "${1:-}" = "-m" ]; then
	mods=$2
	shift 2
else
	mods=$(GOWORK= go list -m -f '{{.Dir}}') # go.work's modules, also under GOWORK=off
fi
start=$(date +%s)
failed=()
n=0
for dir in $mods; do
	rel=${dir#"$root"}
	rel=${rel#/}
	rel=${rel#./}
	rel=${rel:-.}
	log=$(mktemp)
	t0=$(date +%s)
	(cd "$dir" && go test "$@" ./...) >"$log" 2>&1
	rc=$?
	secs=$(($(date +%s) - t0))
	n=$((n + 1))
	if [ $rc -eq 0 ]; then
		printf 'ok    %-24s %4ds\n' "$rel" "$secs"
	else
		printf 'FAIL  %-24s %4ds\n' "$rel" "$secs"
		sed 's/^/      /' "$log"
		failed+=("$rel")
	fi
	rm -f "$log"
done
total=$(($(date +%s) - start))
if [ ${#failed[@]} -eq 0 ]; then
	echo "PASS: all $n modules in ${total}s (go test $*)"
	exit 0
fi
echo "FAIL: ${#failed[@]} of $n modules failed in ${total}s: ${failed[*]} (go test $*)"
exit 1
