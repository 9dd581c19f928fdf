#!/usr/bin/env bash
# Every test suite, without installing anything (scripts/test.sh installs first).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

# A build cache kept outside the clone: a checkout without a target directory of its own (a CI
# clone) builds in $SNOWFLAKE_BUILD_CACHE/target (default /var/cache/libsnowflake), so that the
# next clone on this machine rebuilds only this project's crates, not its ~250 dependencies,
# the standard library of four targets and the wheels' and packages' builds. Correct on any
# machine: cargo rebuilds whatever changed (a fresh clone's sources are newer than every
# artifact), and a machine without the directory builds it all, as before. An empty
# SNOWFLAKE_BUILD_CACHE, or a target directory already there, keeps target/ in the checkout.
BUILD_CACHE=${SNOWFLAKE_BUILD_CACHE-/var/cache/libsnowflake}
if [ -n "$BUILD_CACHE" ] && [ ! -e target ] && mkdir -p "$BUILD_CACHE/target" 2>/dev/null; then
  ln -s "$BUILD_CACHE/target" target
  echo "check.sh: target/ is $BUILD_CACHE/target (the build cache; SNOWFLAKE_BUILD_CACHE= to build in the checkout)"
fi

# Every step is a row of scripts/suites.sh, the one list of suites (flaky.sh repeats some).
# shellcheck source=scripts/suites.sh
. scripts/suites.sh

RUN_DIR=$(mktemp -d "${TMPDIR:-/tmp}/snowflake-check.XXXXXX")
trap 'rm -rf "$RUN_DIR"' EXIT
suite_shm_dir "$RUN_DIR/shm"

# Each step's heading, after the time the step before it took, how busy the machine's CPUs were
# meanwhile (everything on the machine, the background builds below among it), and the time so
# far (CI time is a budget). The last step's own summary stays the last line printed.
SUITE_T0=$(date +%s)
STEP_T0=$SUITE_T0
cpu_ticks() { awk '/^cpu /{ print $2 + $3 + $4 + $7 + $8, $5 + $6 }' /proc/stat; }
# The CPU time of this script's finished children (the steps' own processes; not the background
# builds, which are reaped only at the end), in clock ticks: a step that takes much wall time
# and little CPU of its own waits (on servers, leases, sleeps), and can overlap with others.
own_ticks() { awk '{ print $16 + $17 }' /proc/$$/stat; }
TICKS_PER_S=$(getconf CLK_TCK)
read -r STEP_BUSY0 STEP_IDLE0 < <(cpu_ticks)
STEP_OWN0=$(own_ticks)
step_end() {
  local now busy idle own
  now=$(date +%s)
  read -r busy idle < <(cpu_ticks)
  own=$(own_ticks)
  [ -z "${STEP_NAME:-}" ] || printf '(%s: %d s, %d CPU-s of its own, CPU %d%% busy; %d s so far)\n' "$STEP_NAME" \
    $((now - STEP_T0)) $(((own - STEP_OWN0) / TICKS_PER_S)) \
    $((100 * (busy - STEP_BUSY0) / (busy - STEP_BUSY0 + idle - STEP_IDLE0 + 1))) $((now - SUITE_T0))
  STEP_T0=$now
  STEP_BUSY0=$busy
  STEP_IDLE0=$idle
  STEP_OWN0=$own
}
step() {
  step_end
  STEP_NAME=${1%%:*}
  printf '\n==== %s ====\n' "$*"
}

# The other platforms' binaries (scripts/dist.sh --build-others: Debian's rustc, cross linkers,
# the standard library built from source for four of them) are the slowest build here. They
# start now, in the background at the lowest priority: they take what CPU the steps below leave
# idle (waiting on servers, locks, leases and sleeps), and the platforms step waits for them.
CROSS_LOG=$RUN_DIR/dist-build-others.log
# A session of its own, so that an early exit stops its cargo runs with it. A new session is
# also a scheduling group of its own (autogroup), whose members' nice values count only among
# themselves: the group's own nice, which the session sets as it starts, is what yields to the
# steps below. (Set from outside, it could land on this script's group before setsid ran.)
# Its CPU time goes to $CROSS_TIMES as it ends (the platforms step prints it).
CROSS_TIMES=$RUN_DIR/dist-build-others.times
# The platforms step runs at once with others, in a subshell that cannot `wait` for a sibling: it
# waits for $CROSS_LOCK instead, which this shell locks before the builds start and hands to
# them (their bash alone keeps it, not the builds' own processes), so that it is free exactly
# when they have ended and written their exit status to $CROSS_RC.
CROSS_LOCK=$RUN_DIR/dist-build-others.lock
CROSS_RC=$RUN_DIR/dist-build-others.rc
exec 9>"$CROSS_LOCK"
flock -x 9
setsid bash -c 'echo 19 >/proc/self/autogroup 2>/dev/null; nice -n 19 bash scripts/dist.sh --build-others 9>&-
  rc=$?; times >"$0"; echo "$rc" >"$1"; exit $rc' "$CROSS_TIMES" "$CROSS_RC" >"$CROSS_LOG" 2>&1 &
CROSS_PID=$!
exec 9>&-
trap 'kill -- -"$CROSS_PID" 2>/dev/null || true; rm -rf "$RUN_DIR"' EXIT

# The rows marked `together` run at once, SNOWFLAKE_CHECK_JOBS (default 4: the platforms step and
# three test steps, then four test steps) at a time (suite_pool:
# each in a subshell of its own with its own SNOWFLAKE_SHM_DIR), their output kept in a file and
# printed whole when each ends: most of them wait (on servers, leases, other processes) far more
# than they compute, and the steps before them (the `build` row) have built everything they
# share, so that none of them writes what another reads. A failed step's output comes again at
# the end.
TOGETHER=" $(suite_rows together | tr '\n' ' ') "
FAILED=()
SUITE_POOL_DIR=$RUN_DIR/pool
mkdir -p "$RUN_DIR/log"
together_start() { suite_run "$1" >"$RUN_DIR/log/$1" 2>&1; }
together_done() { # NAME RC SECONDS CPU_SECONDS
  printf '\n==== %s ====\n' "$(suite_heading "$1")"
  if [ "$2" = 0 ]; then cat "$RUN_DIR/log/$1"; else echo "FAILED (exit $2): its output is at the end"; FAILED+=("$1"); fi
  printf '(%s: %d s, %d CPU-s of its own; %d s so far)\n' "$1" "$3" "$4" $(($(date +%s) - SUITE_T0))
}
run_together() {
  local max=${SNOWFLAKE_CHECK_JOBS:-4}
  step_end
  printf '\n==== %d steps at once, %d at a time: %s ====\n' $# "$max" "$*"
  suite_pool "$max" together_start together_done "$@"
  STEP_NAME=
  STEP_OWN0=$(own_ticks)
}

pending=()
for name in $(suite_rows check); do
  case "$TOGETHER" in
    *" $name "*) pending+=("$name") ;;
    *)
      [ ${#pending[@]} -eq 0 ] || run_together "${pending[@]}"
      pending=()
      [ ${#FAILED[@]} -eq 0 ] || break
      step "$(suite_heading "$name")"
      suite_run "$name"
      ;;
  esac
done
[ ${#pending[@]} -eq 0 ] || run_together "${pending[@]}"
if [ ${#FAILED[@]} -gt 0 ]; then
  for name in "${FAILED[@]}"; do
    printf '\n==== FAILED: %s ====\n' "$(suite_heading "$name")"
    cat "$RUN_DIR/log/$name"
  done
  echo "check.sh: ${#FAILED[@]} step(s) failed: ${FAILED[*]}" >&2
  exit 1
fi
