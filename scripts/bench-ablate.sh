#!/usr/bin/env bash
# Issue 44: what each part of the default generator's fast path costs on this machine. Builds
# core/benches/fastpath.rs from the tree as it is ("as-is") and from a copy of the tree with each
# patch of core/benches/ablate/ applied (ours with one part changed: without the count's store,
# with the ID composed before the compare-and-swap, without the record's check, without the
# pause after a lost compare-and-swap), then runs every build once a round, alternated, for
# ROUNDS rounds: load that comes and goes meets every build alike. Prints each build's median ns per ID (ours, ferroid, the lean path's lease=local, the bare
# compare-and-swap on the heap and in a shared mapping, ours and ferroid on two threads sharing
# one generator) and the medians of each round's ratios, with their range.
# A benchmark, not a test: it asserts nothing (CI only checks that the patches still apply).
#
#   scripts/bench-ablate.sh              # 15 rounds
#   ROUNDS=5 scripts/bench-ablate.sh
#   PATCHES="no-count compose-before" scripts/bench-ablate.sh    # those builds alone, and as-is
#   scripts/bench-ablate.sh --check      # only: does every patch apply to the tree?
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
patches=(core/benches/ablate/*.patch)
# PATCHES="no-count pause-on-lost-swap": those alone (the names of core/benches/ablate/'s files).
if [ -n "${PATCHES:-}" ]; then
  patches=()
  for name in $PATCHES; do
    [ -f "core/benches/ablate/$name.patch" ] || { echo "bench-ablate.sh: no core/benches/ablate/$name.patch" >&2; exit 2; }
    patches+=("core/benches/ablate/$name.patch")
  done
fi

for p in "${patches[@]}"; do
  git apply --check "$p" || {
    echo "bench-ablate.sh: $p no longer applies to the tree: make it again from the change it names" >&2
    exit 1
  }
done
[ "${1:-}" = --check ] && exit 0

rounds=${ROUNDS:-15}
work=$(mktemp -d "${TMPDIR:-/tmp}/snowflake-ablate.XXXXXX")
trap 'rm -rf "$work"' EXIT
# One target directory for every copy: the dependencies are built once (each copy's own crates
# are built apart, as their paths differ). Kept between runs.
export CARGO_TARGET_DIR=${ABLATE_TARGET_DIR:-$PWD/target/ablate}
export SNOWFLAKE_SHM_DIR=$work/shm
mkdir -p "$SNOWFLAKE_SHM_DIR"

# The bench's binary, built from the tree at $1, copied to $work/bin-$2 (every copy's build has
# the same file name in the target directory).
build() {
  local bin
  bin=$( (cd "$1" && cargo bench -q -p snowflake-core --features lease-local --bench fastpath --no-run \
    --message-format=json 2>/dev/null) | python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "fastpath" and m.get("executable"):
        print(m["executable"])')
  [ -x "$bin" ] || { echo "bench-ablate.sh: $2 did not build" >&2; exit 1; }
  cp "$bin" "$work/bin-$2"
  echo "$work/bin-$2"
}

names=(as-is)
bins=("$(build "$PWD" as-is)")
for p in "${patches[@]}"; do
  name=$(basename "$p" .patch)
  # The tree as it is (tracked files, with their changes), and the patch.
  mkdir -p "$work/$name"
  git ls-files -z | tar --null -T - -cf - | tar -xf - -C "$work/$name"
  (cd "$work/$name" && git apply "$root/$p")
  names+=("$name")
  bins+=("$(build "$work/$name" "$name")")
done

out=$work/rounds
echo "cpu: $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1), $(nproc) CPUs; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "$rounds rounds, every build once a round ..."
for r in $(seq "$rounds"); do
  for i in "${!bins[@]}"; do
    "${bins[$i]}" | sed "s/^/${names[$i]} $r /" >> "$out"
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$out" "${names[@]}" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    build, rnd, rest = line.split(" ", 2)
    row, figure = rest.split(":", 1)
    rows.setdefault(build, {}).setdefault(int(rnd), {})[row] = float(figure.split()[0])
med = statistics.median
print(f"{'build':34} {'ours':>5} {'ferroid':>7} {'lease-local':>11} {'cas':>5} {'cas-shm':>7} {'ours x2':>7} {'ferroid x2':>10}"
      f"   {'ours/ferroid':17} {'lease-local/ours':17} two threads: ours/ferroid")
for build in sys.argv[2:]:
    rounds = rows[build].values()
    col = lambda row: med(r[row] for r in rounds)
    ratio = lambda a, b: [r[a] / r[b] for r in rounds]
    spread = lambda v: f"{med(v):.3f} ({min(v):.2f}-{max(v):.2f})"
    of, lo, two = ratio("ours", "ferroid"), ratio("lease-local", "ours"), ratio("ours x2", "ferroid x2")
    print(f"{build:34} {col('ours'):5.2f} {col('ferroid'):7.2f} {col('lease-local'):11.2f} {col('cas'):5.2f} {col('cas-shm'):7.2f}"
          f" {col('ours x2'):7.2f} {col('ferroid x2'):10.2f}   {spread(of):17} {spread(lo):17} {spread(two)}")
PY
