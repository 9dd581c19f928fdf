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

# Shared states and leases that a test makes without naming a directory of its own go to this
# run's, never to /dev/shm or /tmp where other runs on the machine would meet them.
RUN_DIR=$(mktemp -d "${TMPDIR:-/tmp}/snowflake-check.XXXXXX")
trap 'rm -rf "$RUN_DIR"' EXIT
export SNOWFLAKE_SHM_DIR=$RUN_DIR/shm
# Open to every user, sticky, like /dev/shm (tests run some processes as nobody).
chmod 755 "$RUN_DIR"
mkdir -m 1777 "$SNOWFLAKE_SHM_DIR"

# Each step's heading, after the time the step before it took, how busy the machine's CPUs were
# meanwhile (everything on the machine, the background builds below among it), and the time so
# far (CI time is a budget). The last step's own summary stays the last line printed.
SUITE_T0=$(date +%s)
STEP_T0=$SUITE_T0
cpu_ticks() { awk '/^cpu /{ print $2 + $3 + $4 + $7 + $8, $5 + $6 }' /proc/stat; }
read -r STEP_BUSY0 STEP_IDLE0 < <(cpu_ticks)
step() {
  local now busy idle
  now=$(date +%s)
  read -r busy idle < <(cpu_ticks)
  [ -z "${STEP_NAME:-}" ] || printf '(%s: %d s, CPU %d%% busy; %d s so far)\n' "$STEP_NAME" $((now - STEP_T0)) \
    $((100 * (busy - STEP_BUSY0) / (busy - STEP_BUSY0 + idle - STEP_IDLE0 + 1))) $((now - SUITE_T0))
  STEP_NAME=${1%%:*}
  STEP_T0=$now
  STEP_BUSY0=$busy
  STEP_IDLE0=$idle
  printf '\n==== %s ====\n' "$*"
}

# The other platforms' binaries (scripts/dist.sh --build-others: Debian's rustc, cross linkers,
# the standard library built from source for four of them) are the slowest build here. They
# start now, in the background at the lowest priority: they take what CPU the steps below leave
# idle (waiting on servers, locks, leases and sleeps), and the last step waits for them.
CROSS_LOG=$RUN_DIR/dist-build-others.log
# A session of its own, so that an early exit stops its cargo runs with it. A new session is
# also a scheduling group of its own (autogroup), whose members' nice values count only among
# themselves: the group's own nice, which the session sets as it starts, is what yields to the
# steps below. (Set from outside, it could land on this script's group before setsid ran.)
setsid bash -c 'echo 19 >/proc/self/autogroup 2>/dev/null; exec nice -n 19 bash scripts/dist.sh --build-others' \
  >"$CROSS_LOG" 2>&1 &
CROSS_PID=$!
trap 'kill -- -"$CROSS_PID" 2>/dev/null || true; rm -rf "$RUN_DIR"' EXIT

step "lint: rustfmt, clippy"
cargo fmt --all --check
cargo clippy --workspace --all-targets -- -D warnings

step "generated files: vectors (the model), what comes from core's tables (README, docs/policies.md, stubs)"
python3 tests/vectors/make_vectors.py --check
python3 scripts/tables.py --check

step "server helpers (tests/servers): every kind starts, answers, and is cleaned up after SIGKILL"
.venv/bin/python -m pytest tests/servers -q -p no:cacheprovider

step "Rust: core (std and no_std, each feature alone), CLI"
cargo test --workspace
cargo test -p snowflake-core --no-default-features --lib --tests
cargo test -p snowflake-core --lib --tests
# public-ids is no_std (its cipher too): built alone without std, like the others.
for feature in shared state-file lease-local lease-redis lease-postgres lease-mysql redis-script sql public-ids; do
  cargo check -q -p snowflake-core --no-default-features --features "$feature" --lib --tests
done
# The build a Rust user of the README gets (a path dependency, default features) warns of nothing.
cargo clippy -q -p snowflake-core --lib -- -D warnings
python3 scripts/modcycles.py core/src

# This machine's packages now (the steps below install them); every platform's at the end.
step "Packages: scripts/dist.sh for x86_64 glibc $(sed -n 's/^GLIBC_FLOOR=//p' scripts/dist.env) (zig), installed without Rust (tests/dist)"
SNOWFLAKE_DIST_PLATFORMS="" bash scripts/dist.sh
SNOWFLAKE_DIST_PLATFORMS="" bash tests/dist/run.sh

step "C and C++: libsnowflake installed to a temporary prefix, pkg-config, CMake, valgrind"
bash tests/c/run.sh
step "Node: bindings-node (dist/node's addon, index.d.ts up to date, node:test)"
# The addon of dist/node's package for this machine, which tests/dist has just installed with
# npm: bindings-node/scripts/build.js puts it in place rather than build another (here and in
# tests/cross), as the Python step below takes dist/python's wheel.
mkdir "$RUN_DIR/addon"
tar -xzf "$(ls dist/node/libsnowflake-linux-x64-gnu-*.tgz)" -C "$RUN_DIR/addon"
SNOWFLAKE_ADDON=$(ls "$RUN_DIR"/addon/package/libsnowflake.*.node)
export SNOWFLAKE_ADDON
bash bindings-node/run-tests.sh
step "Python: dist/python's wheel in .venv, pytest (bindings-python/run-tests.sh)"
SNOWFLAKE_WHEEL=$(ls dist/python/libsnowflake-*.whl) bash bindings-python/run-tests.sh

step "PHP: the FFI binding (builds the release library)"
bash tests/php/run.sh

step "Cross-language: one shared state in Python, Node, PHP and C processes, and PHP-FPM"
bash tests/cross/run.sh

step "The host's arbiter: every way of issuing beside every other, in four languages and the CLI; real users; removal, truncation, stopped holders, time namespaces (tests/arbiter/run.py)"
cargo build -q --release -p snowflake-ffi -p snowflake-cli --features snowflake-cli/full
python3 tests/arbiter/run.py

step "Leases in the fleet's engines across languages: PostgreSQL, MariaDB, a Redis Cluster; Python, Node and PHP holders; SIGKILL, data loss, restarts, stalls, a failover, host leases, a clock 10 s ahead (tests/fleet/run.py)"
python3 tests/fleet/run.py

step "README: every code block run as a new user runs it (tests/readme/run.py), against dist/ and this checkout"
python3 tests/readme/run.py

step "Every platform's packages: scripts/dist.sh (aarch64, musl, Windows, macOS with Debian's rustc-web, built in the background since the start); run under qemu-user (aarch64), natively (musl), under Wine (Windows); macOS files checked (tests/dist/platforms.sh)"
if ! wait "$CROSS_PID"; then
  tail -n 60 "$CROSS_LOG"
  echo "check.sh: scripts/dist.sh --build-others failed (its log's end above)" >&2
  exit 1
fi
grep -E '^---- dist|Finished' "$CROSS_LOG"
bash scripts/dist.sh
bash tests/dist/platforms.sh
