#!/usr/bin/env bash
# Issue 44's peers figures, 3 runs: core/benches/peers.rs's alternated rows (ours and ferroid's
# AtomicSnowflakeGenerator, 1, 2, 4 and 8 threads on one generator) run 3 times; for each row,
# the median of the 3 runs' median ratios and their range, with the CPU and each run's load.
# A benchmark, not a test: it prints figures and asserts nothing (CI does not run it).
#
#   scripts/bench-peers.sh            # builds the bench once (the bench profile), runs it 3 times
#   RUNS=5 scripts/bench-peers.sh
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-3}
# A directory of its own for the host's records the default generator opens.
export SNOWFLAKE_SHM_DIR=${SNOWFLAKE_SHM_DIR:-$(mktemp -d)}
bin=$(cargo bench -p snowflake-core --bench peers --no-run --message-format=json 2>/dev/null |
  python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "peers" and m.get("executable"):
        print(m["executable"])')
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for i in $(seq "$runs"); do
  echo "== run $i of $runs"
  "$bin" --bench --alternated | tee -a "$out"
done
python3 - "$out" "$runs" <<'PY'
import re, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    m = re.match(r"RATIO threads=(\d+) median=([\d.]+) min=([\d.]+) max=([\d.]+)", line)
    if m:
        rows.setdefault(int(m[1]), []).append((float(m[2]), float(m[3]), float(m[4])))
print(f"== {sys.argv[2]} runs: ratio libsnowflake / ferroid (ns per ID, aggregate), per row:")
for threads, runs in sorted(rows.items()):
    medians = [r[0] for r in runs]
    print(f"  {threads} thread(s): median {statistics.median(medians):.2f}, runs' medians "
          f"{min(medians):.2f}-{max(medians):.2f}, rounds {min(r[1] for r in runs):.2f}-{max(r[2] for r in runs):.2f}"
          + ("  [target <= 1.0]" if threads <= 2 else ""))
PY
