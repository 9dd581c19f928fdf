#!/usr/bin/env bash
# `snowflake serve`'s figures (issue 41), a benchmark, not a test: wrk (Debian's `wrk`,
# scripts/install-deps.sh) with 16 keep-alive connections on loopback against one service:
#   1. single-ID requests (/v1/ids) beside /healthz, alternated in one run (healthz, ids, and
#      again, ROUNDS times, default 5): the rate of each, each round's ratio, and the rounds'
#      median ratio with its range (target: ids >= 0.9 x healthz);
#   2. the p50, p99 and p99.9 latency of single-ID requests (Leaf: 1 ms at p99.9);
#   3. batches of 1,000 (/v1/ids?n=1000&format=text): IDs a second (target: >= 10 M/s).
# The layout is time:41,worker:1,sequence:22 (4M IDs a ms): twitter's 4,096 IDs a ms would cap
# step 3 at 4.1 M IDs/s, which is the layout's limit, not the service's.
#
#   bash scripts/bench-serve.sh                # SNOWFLAKE_BIN, else target/release/snowflake
#   SECONDS_EACH=10 THREADS=2 ROUNDS=7 bash scripts/bench-serve.sh
# The CLI must have `serve` (cargo build --release -p snowflake-cli --features full, or the
# packaged one). On a shared, busy machine the figures say as much about the neighbours.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${SNOWFLAKE_BIN:-$PWD/target/release/snowflake}
SECONDS_EACH=${SECONDS_EACH:-5}
ROUNDS=${ROUNDS:-5}
THREADS=${THREADS:-2}
CONNECTIONS=16
command -v wrk >/dev/null || { echo "bench-serve.sh: wrk is not installed (apt-get install wrk; scripts/install-deps.sh)" >&2; exit 1; }

WORK=$(mktemp -d)
export SNOWFLAKE_SHM_DIR=$WORK/shm
mkdir -m 1777 "$SNOWFLAKE_SHM_DIR"
cat >"$WORK/latency.lua" <<'LUA'
done = function(summary, latency, requests)
  io.write(string.format("RESULT %.0f %d %d %d %d\n", summary.requests / (summary.duration / 1e6),
    latency:percentile(50), latency:percentile(99), latency:percentile(99.9), summary.errors.status))
end
LUA

coproc SERVE { exec "$BIN" serve --listen 127.0.0.1:0 --layout 'time:41,worker:1,sequence:22;epoch=0' \
  --max-connections 64 2>"$WORK/serve.log"; }
SERVE_PID=$SERVE_PID
trap 'kill "$SERVE_PID" 2>/dev/null; wait "$SERVE_PID" 2>/dev/null; rm -rf "$WORK"' EXIT
# The service's ready line: it answers from then on.
read -r ready <&"${SERVE[0]}" || { cat "$WORK/serve.log" >&2; exit 1; }
url=$(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["url"])' "$ready")

# run PATH: "requests/s p50_us p99_us p99.9_us non-2xx" of one wrk run.
run() {
  wrk -t"$THREADS" -c"$CONNECTIONS" -d"${SECONDS_EACH}s" -s "$WORK/latency.lua" "$url$1" | sed -n 's/^RESULT //p'
}

echo "snowflake serve, wrk -t$THREADS -c$CONNECTIONS, ${SECONDS_EACH}s a run, $ROUNDS rounds, $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load $(cut -d' ' -f1-3 /proc/loadavg)"
declare -a H I
for ((round = 1; round <= ROUNDS; round++)); do
  read -r -a h <<<"$(run /healthz)"
  read -r -a i <<<"$(run /v1/ids)"
  H+=("${h[0]}")
  I+=("${i[0]}")
  printf 'round %d: /healthz %8.0f req/s | /v1/ids %8.0f req/s (%.3f)  p50 %d us  p99 %d us  p99.9 %d us  non-2xx %d\n' \
    "$round" "${h[0]}" "${i[0]}" "$(python3 -c "print(${i[0]} / ${h[0]})")" "${i[1]}" "${i[2]}" "${i[3]}" "${i[4]}"
done
# Each round's ratio is of two runs side by side; the rounds' median is the figure (a neighbour's
# burst moves one round, not the median), with the range beside it.
python3 - "${H[@]}" "${I[@]}" <<'PY'
import statistics, sys
v = list(map(float, sys.argv[1:]))
n = len(v) // 2
ratios = sorted(i / h for h, i in zip(v[:n], v[n:]))
print(f"single-ID requests / healthz requests: {statistics.median(ratios):.3f}, median of {n} rounds "
      f"(range {ratios[0]:.3f}-{ratios[-1]:.3f}; target >= 0.9)")
PY
read -r -a b <<<"$(run '/v1/ids?n=1000&format=text')"
python3 - "${b[@]}" <<'PY'
import sys
rate, p50, p99, p999, bad = sys.argv[1:6]
print(f"batches of 1,000: {float(rate):.0f} req/s = {float(rate) * 1000 / 1e6:.1f} M IDs/s (target >= 10), "
      f"p50 {p50} us, p99 {p99} us, p99.9 {p999} us, non-2xx {bad}")
PY
grep -q . "$WORK/serve.log" && sed 's/^/service: /' "$WORK/serve.log" | tail -n 2 || true
