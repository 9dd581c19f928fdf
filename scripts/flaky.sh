#!/usr/bin/env bash
# bash scripts/flaky.sh [N] [SUITE...]: the suites that start servers or processes, N times
# (default 10), under a second CPU-heavy load (one busy loop per core, stopped at the end), each
# round's suites at once (SNOWFLAKE_FLAKY_JOBS, default 3, at a time).
# Prints each failure with the end of its log (proptest and hypothesis print their seeds
# there), and a summary; exits non-zero if anything failed. Builds everything once, first.
# SUITE names (default: all) pick some: the `flaky` rows of scripts/suites.sh, the one list of
# suites (`bash -c '. scripts/suites.sh; suite_rows flaky'` prints them).
#
# Run it before resolving an issue that adds such tests, and put the result in the closing
# note ("flaky.sh 10: 0 failures"). tests/servers/README.md says how to write tests that pass it.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export PATH="$HOME/.cargo/bin:$PATH"

N=${1:-10}
shift || true
# shellcheck source=scripts/suites.sh
. scripts/suites.sh
mapfile -t ALL < <(suite_rows flaky)
SUITES=("${ALL[@]}")
[ $# -eq 0 ] || SUITES=("$@")

WORK=$(mktemp -d "${TMPDIR:-/tmp}/snowflake-flaky.XXXXXX")
suite_shm_dir "$WORK/shm"
LOAD=()
stop_load() {
  local pid
  for pid in "${LOAD[@]}"; do kill "$pid" 2>/dev/null; done
  for pid in "${LOAD[@]}"; do wait "$pid" 2>/dev/null; done
  LOAD=()
}
trap 'stop_load' EXIT
trap 'exit 130' INT TERM

now() { date +%s; }
quiet() { # <description> <command...>: a build step, its output shown when it fails
  local desc=$1
  shift
  printf '%s ... ' "$desc"
  if "$@" >"$WORK/build.log" 2>&1; then
    echo ok
  else
    echo FAILED
    tail -n 60 "$WORK/build.log"
    exit 1
  fi
}

# --- build once -------------------------------------------------------------------------------
echo "== build (once)"
quiet "cargo: core and CLI tests" cargo test -p snowflake-core -p snowflake-cli --features snowflake-core/full,snowflake-cli/full --tests --no-run
quiet "cargo: release library and CLI (C, PHP, cross, arbiter)" build_release
quiet "node: the addon" node bindings-node/scripts/build.js
quiet "python: the wheel into .venv" .venv/bin/pip install -q --no-deps --force-reinstall ./bindings-python
mkdir "$WORK/lib"
ln -s "$ROOT/target/release/libsnowflake.so" "$WORK/lib/libsnowflake.so.0"
# The soname (scripts/dist.sh, ffi-c/build.rs): libsnowflake.so.<major>.<minor> before 1.0.
ln -s "$ROOT/target/release/libsnowflake.so" "$WORK/lib/libsnowflake.so.0.1"
# shellcheck disable=SC2046
quiet "C: test_api" gcc -std=c99 -Wall -Wextra -Werror -pedantic -O1 -Iinclude tests/c/test_api.c \
  -o "$WORK/test_api" -Ltarget/release -lsnowflake $(pkg-config --cflags --libs libcjson) -pthread \
  -Wl,-rpath,"$WORK/lib"

# Each suite's command is its row's function in scripts/suites.sh, in its flaky mode.
run_suite() { # <name>
  . scripts/suites.sh
  suite_run "$1" flaky
}
export -f run_suite
export WORK ROOT

# --- the load ---------------------------------------------------------------------------------
CORES=$(nproc)
for _ in $(seq "$CORES"); do
  (while :; do :; done) &
  LOAD+=($!)
done
echo "== load: $CORES busy loops (pids ${LOAD[*]})"

# Each round runs its suites at once, SNOWFLAKE_FLAKY_JOBS (default 3) at a time, as check.sh runs
# its steps (suite_pool: each with its own SNOWFLAKE_SHM_DIR): on top of the busy loops, each
# suite meets the others' processes and servers, as in CI.
JOBS=${SNOWFLAKE_FLAKY_JOBS:-3}
SUITE_POOL_DIR=$WORK/pool
declare -A RUNS=() FAILS=() SECONDS_IN=()
FAILURES=()
flaky_start() {
  # A hang is a failure too: 30 minutes is far beyond any suite's time under load.
  timeout -k 60 1800 bash -c 'run_suite "$1"' _ "$1" >"$WORK/$1-$i.log" 2>&1
}
flaky_done() { # NAME RC SECONDS CPU_SECONDS
  local suite=$1 status=$2 took=$3 log="$WORK/$1-$i.log"
  RUNS[$suite]=$((${RUNS[$suite]:-0} + 1))
  SECONDS_IN[$suite]=$((${SECONDS_IN[$suite]:-0} + took))
  if [ "$status" -eq 0 ]; then
    printf '   ok    %-15s %4d s %4d CPU-s\n' "$suite" "$took" "$4"
    rm -f "$log"
  else
    FAILS[$suite]=$((${FAILS[$suite]:-0} + 1))
    FAILURES+=("iteration $i: $suite (exit $status), log $log")
    printf '   FAIL  %-15s %4d s (exit %d)\n' "$suite" "$took" "$status"
    grep -E 'FAIL|panicked|Error|error|failed|seed|reproduce|not ok' "$log" | head -n 40 | sed 's/^/         | /'
    echo "         | ... the end of $log:"
    tail -n 40 "$log" | sed 's/^/         | /'
  fi
}
start_all=$(now)
for ((i = 1; i <= N; i++)); do
  echo "== iteration $i of $N ($JOBS at a time; $(($(now) - start_all)) s so far)"
  suite_pool "$JOBS" flaky_start flaky_done "${SUITES[@]}"
done
stop_load

echo
echo "== summary: $N iterations in $(($(now) - start_all)) s under $CORES busy loops, $JOBS suites at a time"
total=0
for suite in "${SUITES[@]}"; do
  f=${FAILS[$suite]:-0}
  total=$((total + f))
  printf '   %-15s %3d runs  %3d failures  %5d s average\n' "$suite" "${RUNS[$suite]:-0}" "$f" \
    $((${SECONDS_IN[$suite]:-0} / (${RUNS[$suite]:-1} > 0 ? ${RUNS[$suite]:-1} : 1)))
done
if [ "$total" -eq 0 ]; then
  echo "flaky.sh $N: 0 failures"
  rm -rf "$WORK"
  exit 0
fi
echo "flaky.sh $N: $total failures (logs kept in $WORK):"
printf '   %s\n' "${FAILURES[@]}"
exit 1
