#!/usr/bin/env bash
# bash scripts/faults.sh --minutes N [--seed S] [run.py's options]: a randomised soak of
# tests/faults/run.py (issue 38): rounds of every fault, in an order drawn from the seed, on
# every store set-up at once, until N minutes have passed; prints its seed first (and each
# round's), so that `--seed S` replays the same orders. Ends with `N passed, M failed` and
# exits non-zero if any repeat, untyped refusal or stuck state was found. Needs root, the
# package in .venv, the Node addon and the release library, as CI's earlier steps leave them.
set -euo pipefail
cd "$(dirname "$0")/.."
minutes=10
seed=""
rest=()
while [ $# -gt 0 ]; do
  case "$1" in
    --minutes) minutes=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    *) rest+=("$1"); shift ;;
  esac
done
[ -n "$seed" ] || seed=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
echo "faults.sh: seed $seed, $minutes minutes"
export SNOWFLAKE_SHM_DIR=${SNOWFLAKE_SHM_DIR:-$(mktemp -d /tmp/shm-faults-XXXXXX)}
end=$((SECONDS + minutes * 60))
round=0
failed=0
while [ $SECONDS -lt $end ]; do
  # Each round's seed comes from the soak's: a round can be replayed alone too. The mask keeps
  # the low 32 bits of a product that overflows bash's signed 64 bits (it wraps), so no seed
  # printed is negative.
  round_seed=$(((seed * 2654435761 + round) & 0xFFFFFFFF))
  echo "faults.sh: round $round, seed $round_seed"
  if ! python3 tests/faults/run.py --seed "$round_seed" --rounds 2 --shuffle "${rest[@]}"; then
    failed=$((failed + 1))
  fi
  round=$((round + 1))
done
echo "faults.sh: seed $seed: $round rounds, $failed failed"
[ "$failed" -eq 0 ]
