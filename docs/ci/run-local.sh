#!/usr/bin/env bash
# Runs the steps of docs/ci/k6labels.yml on this machine against the demo
# service, without k6: the demo's load driver sends the same requests and
# baggage as examples/rideshare/load.js and writes k6's --out json format.
# Two runs: the first stands for the main branch's baseline, the second for
# the pull request. It checks that each output is there and prints where.
#
#   bash docs/ci/run-local.sh            # outputs in a temporary directory
#   OUT=/tmp/k6labels-ci bash docs/ci/run-local.sh
#   DURATION=30s bash docs/ci/run-local.sh
set -euo pipefail
cd "$(dirname "$0")/../.."

DURATION=${DURATION:-4s}
PROFILE_SECONDS=${PROFILE_SECONDS:-6}
work=$(mktemp -d)
OUT=${OUT:-$work/k6labels-out}
mkdir -p "$OUT" "$work/baseline"
summary=$OUT/step-summary.md
service_pid=
cleanup() {
	if [ -n "$service_pid" ]; then kill "$service_pid" 2>/dev/null || true; wait "$service_pid" 2>/dev/null || true; fi
	rm -rf "$work/bin" "$work/baseline"
	# Outputs elsewhere (OUT set): nothing of ours left in the temporary directory.
	[ "$OUT" = "$work/k6labels-out" ] || rm -rf "$work"
}
trap cleanup EXIT

step() { printf '== %s\n' "$*"; }
fail() { printf 'run-local: %s\n' "$*" >&2; exit 1; }

step "Install k6labels (here: built from this checkout)"
go build -o "$work/bin/k6labels" ./cmd/k6labels
go build -o "$work/bin/rideshare" ./examples/rideshare
k6labels() { "$work/bin/k6labels" "$@"; }

step "Start the service"
"$work/bin/rideshare" -serve 127.0.0.1:0 > "$OUT/service.log" 2>&1 &
service_pid=$!
SERVICE=
for _ in $(seq 100); do
	SERVICE=$(sed -n 's/^rideshare service listening on \(http:[^ ]*\).*/\1/p' "$OUT/service.log")
	[ -n "$SERVICE" ] && break
	kill -0 "$service_pid" 2>/dev/null || { cat "$OUT/service.log"; fail "the service exited"; }
	sleep 0.1
done
[ -n "$SERVICE" ] || fail "the service did not say where it listens"
echo "service at $SERVICE"

# load_and_profile DIR RUN_ID: the "Run k6 and profile the service" step,
# with the demo's driver in k6's place.
load_and_profile() {
	local dir=$1 id=$2
	curl -fsS -o "$dir/cpu.pprof" "$SERVICE/debug/pprof/profile?seconds=$PROFILE_SECONDS" &
	local profiler=$!
	"$work/bin/rideshare" -target "$SERVICE" -duration "$DURATION" -test-run-id "$id" -k6-out "$dir/run.json" > "$dir/load.log"
	wait "$profiler" || fail "reading the CPU profile failed"
}

step "Baseline: the main branch's run (kept as the k6labels-baseline artifact in CI)"
load_and_profile "$work/baseline" local-main

step "Run k6 and profile the service (the pull request's run)"
load_and_profile "$OUT" local-pr

step "Report (html)"
k6labels report --k6 "$OUT/run.json" --format html "$OUT/cpu.pprof" > "$OUT/report.html"
k6labels report --k6 "$OUT/run.json" --format markdown "$OUT/cpu.pprof" > "$OUT/report.md"

step "Compare with main (k6labels diff)"
set +e
k6labels diff --base-profile "$work/baseline/cpu.pprof" --base-k6 "$work/baseline/run.json" \
	--profile "$OUT/cpu.pprof" --k6 "$OUT/run.json" --fail-above 10% \
	--format markdown --write-profiles "$OUT/diff" --svg "$OUT/worst-row.svg" >> "$summary"
code=$?
set -e
case $code in
0) echo "diff: no regression (exit 0)" ;;
3) echo "diff: a regression beyond --fail-above (exit 3): CI fails the job after keeping the artifacts" ;;
4) echo "diff: could not tell (exit 4): CI warns and does not fail the job" ;;
*) fail "k6labels diff failed with exit status $code" ;;
esac
k6labels diff --base-profile "$work/baseline/cpu.pprof" --base-k6 "$work/baseline/run.json" \
	--profile "$OUT/cpu.pprof" --k6 "$OUT/run.json" --format html --write-profiles "" > "$OUT/diff.html"

step "Check the outputs"
grep -q '^## k6labels diff' "$summary" || fail "the step summary has no diff table"
for f in report.html diff.html; do
	grep -q '<svg xmlns="http://www.w3.org/2000/svg" id="fg1" class="fg' "$OUT/$f" || fail "$f has no flame graph"
done
grep -q '^<svg ' "$OUT/worst-row.svg" || fail "worst-row.svg is no SVG"
for f in diff.before.pb.gz diff.after.pb.gz report.md; do
	[ -s "$OUT/$f" ] || fail "$f is missing"
done
echo "run-local: every step ran; the artifacts are in $OUT:"
ls "$OUT"
