#!/usr/bin/env bash
# wrk.sh: throughput of a null handler served bare, wrapped by k6labels and
# wrapped by the x/k6-like baseline, under wrk, with the server and wrk
# pinned to different cores. Prints requests/s per round and, at the end,
# the median of each mode and its ratio to bare. CI does not run it.
#
#   bash bench/wrk.sh                 # or: make bench-wrk
#   ROUNDS=5 DURATION=10s bash bench/wrk.sh
#
# Needs wrk (Debian/Ubuntu: apt-get install wrk; macOS: brew install wrk) and,
# to pin, taskset (util-linux). Without wrk it says so and exits 0. Traffic
# goes to 127.0.0.1 only.
set -euo pipefail

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-5s}
CONNS=${CONNS:-32}
SERVER_CPU=${SERVER_CPU:-0}
WRK_CPU=${WRK_CPU:-1}
MODES=${MODES:-bare k6labels baseline}

if ! command -v wrk >/dev/null; then
	echo "wrk.sh: wrk is not installed; skipping. Install it with 'apt-get install wrk' (Debian/Ubuntu) or 'brew install wrk' (macOS)."
	exit 0
fi
pin_server=() pin_wrk=()
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
	pin_server=(taskset -c "$SERVER_CPU") pin_wrk=(taskset -c "$WRK_CPU")
	echo "server on CPU $SERVER_CPU (GOMAXPROCS=1), wrk on CPU $WRK_CPU"
else
	echo "wrk.sh: taskset or a second core missing: server and wrk are not pinned, the ratios mean less"
fi

here=$(cd "$(dirname "$0")" && pwd)
# Scratch files in the repository's (ignored) bench-out folder.
tmp="$here/../bench-out/wrk"
mkdir -p "$tmp"
server_pid=
cleanup() {
	if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; fi
}
trap cleanup EXIT
(cd "$here" && go build -o "$tmp/wrkserver" ./wrkserver)

# k6's helper 1.0.2: one Baggage line; the varying run puts a new id in the
# URL of each request, as k6 does for untagged requests.
cat >"$tmp/jslib.lua" <<'LUA'
wrk.headers["Baggage"] = "k6.test_run_id=123456,k6.scenario=default,k6.name=http://localhost:5000/bike?id=3"
wrk.path = "/bike?id=3"
LUA
cat >"$tmp/newid.lua" <<'LUA'
local i = 0
request = function()
  i = i + 1
  return wrk.format("GET", "/bike?id=" .. i, {["Baggage"] =
    "k6.test_run_id=123456,k6.scenario=default,k6.name=http://localhost:5000/bike?id=" .. i})
end
LUA

# run MODE SCRIPT: one wrk run against a fresh server; prints requests/s.
run() {
	: >"$tmp/addr"
	"${pin_server[@]}" env GOMAXPROCS=1 "$tmp/wrkserver" -mode "$1" >"$tmp/addr" 2>"$tmp/server.err" &
	server_pid=$!
	for _ in $(seq 200); do [ -s "$tmp/addr" ] && break; sleep 0.05; done
	local addr
	addr=$(head -1 "$tmp/addr")
	case "$addr" in 127.0.0.1:*) ;; *) echo "wrk.sh: the $1 server did not start; its errors are in $tmp/server.err" >&2; exit 1 ;; esac
	# A short warm-up, then the measured run.
	"${pin_wrk[@]}" wrk -t1 -c"$CONNS" -d1s -s "$2" "http://$addr" >/dev/null
	"${pin_wrk[@]}" wrk -t1 -c"$CONNS" -d"$DURATION" -s "$2" "http://$addr" | awk '/^Requests\/sec:/ {print $2}'
	kill "$server_pid"
	wait "$server_pid" 2>/dev/null || true
	server_pid=
}

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

for traffic in jslib newid; do
	: >"$tmp/$traffic.txt"
	for r in $(seq "$ROUNDS"); do
		for m in $MODES; do # interleaved: every round runs each mode once
			rps=$(run "$m" "$tmp/$traffic.lua")
			echo "$traffic round $r $m: $rps requests/s"
			echo "$m $rps" >>"$tmp/$traffic.txt"
		done
	done
done

echo
echo "traffic  mode       median req/s  vs bare"
for traffic in jslib newid; do
	bare=$(awk '$1=="bare" {print $2}' "$tmp/$traffic.txt" | median)
	for m in $MODES; do
		med=$(awk -v m="$m" '$1==m {print $2}' "$tmp/$traffic.txt" | median)
		awk -v t="$traffic" -v m="$m" -v x="$med" -v b="$bare" 'BEGIN {printf "%-8s %-10s %12.0f  %6.1f%%\n", t, m, x, 100*x/b}'
	done
done
