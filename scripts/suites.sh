# The one list of test suites, sourced by scripts/check.sh (every `check` row, in order: CI's
# steps) and scripts/flaky.sh (every `flaky` row, repeated under load); scripts/tables.py
# writes its table into docs/contributing.md. A suite is a row here and a function
# `suite_<name>` below (dashes become underscores), run from the repository's root with
# SNOWFLAKE_SHM_DIR set to the run's own directory.
#
# Columns: name | runs (check: a step of check.sh; together: check.sh runs it at once with the
# other `together` rows that follow the steps before them; flaky: repeated by flaky.sh) | what it
# needs built first (flaky.sh builds each once; check.sh's earlier steps build them) | how it is
# isolated from other runs | what it checks (check.sh's heading).
#
# The `together` rows start in the order they have here: platforms first (it waits for the
# background builds most of its time, in a slot of its own), then the longest first, so that
# the short ones fill the end (a clean clone on 2 cores: rust-stores 461 s, python 413 s,
# rust 220 s, dist-tests 201 s, arbiter 163 s, fleet 133 s, faults 100 s, the others 40-70 s).
# shellcheck disable=SC2034
SUITE_TABLE='
lint|check|-|-|lint: rustfmt, clippy
generated|check|-|-|generated files: vectors (the model), what comes from core'"'"'s tables (README, docs/policies.md, docs/contributing.md, stubs)
packages|check|-|a directory of its own|Packages: scripts/dist.sh for this machine (zig, glibc floor)
readme|check|dist/|a new project per language, registries stood in for|README: every code block run as a new user runs it (tests/readme, pytest), against dist/ and this checkout
build|check|dist/|-|Build: what the steps after it share, built once so that none of them writes what another reads: the release library and CLI, dist/python'"'"'s wheel in .venv, dist/node'"'"'s addon in place
rust-build|check|-|-|Rust build: the tests of core (std, no_std, each feature alone) and the CLI built, import cycles (the rust step runs them)
platforms|check together|the background builds|packs into a directory of its own|Every platform'"'"'s packages: scripts/dist.sh (aarch64, musl, Windows, macOS with Debian'"'"'s rustc-web, built in the background since the start); run under qemu-user (aarch64), natively (musl), under Wine (Windows); macOS files checked (tests/dist/platforms.sh)
rust-stores|check together|-|its own SNOWFLAKE_SHM_DIR; servers of serve.py|Rust: the tests of core that wait on servers (leases in Redis, a Cluster, PostgreSQL and MariaDB, and their faults), run
python|check together flaky|wheel|servers of serve.py|Python: dist/python'"'"'s wheel in .venv, pytest (bindings-python/run-tests.sh)
rust|check together|-|its own SNOWFLAKE_SHM_DIR; servers of serve.py|Rust: the other tests of core (std and no_std), of the CLI and of the bindings'"'"' crates, and the doc tests, run
dist-tests|check together|dist/, wheel (tests/serve'"'"'s clients)|a directory of its own, no cargo on the PATH|Packages installed without Rust, as users install them, snowflake serve from the tarball'"'"'s and the .deb'"'"'s CLI among them (tests/dist/run.sh)
arbiter|check together flaky|release library and CLI, addon, wheel|its own SNOWFLAKE_SHM_DIR, users nobody and others|The host'"'"'s arbiter: every way of issuing beside every other, in four languages and the CLI; real users; removal, truncation, stopped holders, time namespaces (tests/arbiter, pytest)
fleet|check together flaky|release library, addon, wheel|servers of serve.py|Leases in the fleet'"'"'s engines across languages: PostgreSQL, MariaDB, a Redis Cluster; Python, Node and PHP holders; SIGKILL, data loss, restarts, stalls, a failover, host leases, a clock 10 s ahead (tests/fleet, pytest)
faults|check together flaky|release library, addon, wheel|root: network namespaces and nftables tables named by its pid; servers of serve.py|Leases under faults (issue 38): hosts as network namespaces with their own clocks, holders in Python, Node, PHP and C; Redis (snapshot, AOF, none), Sentinel, a Cluster, PostgreSQL with a standby, MariaDB with a replica; partitions, pauses, crashes, data loss, clock steps, skew, failovers, churn: 0 repeats, typed refusals, availability (tests/faults/run.py; a soak: scripts/faults.sh)
node|check together flaky|addon|servers of serve.py|Node: bindings-node (dist/node'"'"'s addon, index.d.ts up to date, node:test)
servers|check together flaky|-|servers of serve.py in the test'"'"'s directory|server helpers (tests/servers): every kind starts, answers, and is cleaned up after SIGKILL
c|check together flaky|release library|a temporary prefix|C and C++: libsnowflake installed to a temporary prefix, pkg-config, CMake, valgrind
pg|check together|dist/pg, wheel|servers of serve.py; the package installed system-wide, one dpkg at a time|PostgreSQL extension (issue 42): dist/pg'"'"'s postgresql-15-snowflake .deb checked (dpkg-deb, lintian), installed with dpkg -i onto Debian'"'"'s postgresql-15, tests/pg against servers preloading it: the vectors, 8 sessions, rollbacks, kill -9, a promoted standby, bad input (tests/pg/run.sh)
cross|check together flaky|release library, addon, wheel|PHP-FPM of serve.py|Cross-language: one shared state in Python, Node, PHP and C processes, and PHP-FPM (tests/cross, pytest)
php|check together flaky|release library|servers of serve.py|PHP: the FFI binding (builds the release library)
serve|flaky|release CLI (with full) and library, wheel|its own SNOWFLAKE_SHM_DIR per test; ports the kernel picks; certificates and PHP-FPM of serve.py|snowflake serve (tests/serve): real clients (curl, Python urllib, Node fetch, Go net/http, Java java.net.http, PHP curl: docs/serve.md'"'"'s), bad input, tokens, TLS, SIGTERM, kill -9 and restart, services beside Python processes and PHP-FPM on one identity (CI runs it in dist-tests, against the packaged CLIs)
core-redis|flaky|cargo tests|servers of serve.py|Rust: Redis leases and the Redis script against real servers (part of rust)
core-fleet|flaky|cargo tests|a server of its own per scenario|Rust: leases in PostgreSQL, MariaDB and a Redis Cluster; a Redis snapshot restart, skew with a data loss (part of rust)
core-processes|flaky|cargo tests|the run'"'"'s SNOWFLAKE_SHM_DIR|Rust: many real processes, kill -9, fork; a real clock step under libfaketime (part of rust)
core-threads|flaky|cargo tests|-|Rust: the generator from many threads (part of rust)
cli|flaky|cargo tests|the run'"'"'s SNOWFLAKE_SHM_DIR|the CLI'"'"'s tests (part of rust)
'

# suite_shm_dir DIR: SNOWFLAKE_SHM_DIR=DIR for what runs next (check.sh, each of its steps that
# run at once, flaky.sh): the shared states and leases of tests that name no directory of their
# own go there, never to /dev/shm or /tmp where other runs on the machine would meet them. Open to
# every user and sticky, like /dev/shm (tests run some processes as nobody). Its parent gains
# only the right to pass through: given a directory in /tmp, it must not lose /tmp's sticky
# 1777 (a `chmod 755` of the parent did, and PHP's opcache as nobody then failed to make its
# lock file there).
suite_shm_dir() {
  chmod a+x "$(dirname "$1")"
  mkdir -p "$1"
  chmod 1777 "$1"
  export SNOWFLAKE_SHM_DIR=$1
}

# suite_rows RUNS: the names of the rows whose runs column has RUNS (check or flaky), in order.
suite_rows() {
  local name runs _
  while IFS='|' read -r name runs _; do
    [ -n "$name" ] || continue
    case " $runs " in *" $1 "*) echo "$name" ;; esac
  done <<<"$SUITE_TABLE"
}

# suite_pool MAX START DONE NAME...: runs `START NAME` for each NAME in the background, at most
# MAX at a time, and `DONE NAME RC SECONDS CPU_SECONDS` in this shell as each ends, in the order
# they end. START runs in a subshell of its own with its own SNOWFLAKE_SHM_DIR (under
# $SUITE_POOL_DIR), its standard input closed. CPU_SECONDS is the subshell's own processes'
# CPU time (user and system, of the children it waited for), read by the subshell itself as it
# ends: the background builds of check.sh, reaped whenever they end, never count in it. The one
# scheduler of check.sh's steps at once and of flaky.sh's rounds.
suite_pool() {
  local max=$1 start=$2 done=$3 name
  shift 3
  local -A name_of=() t0_of=()
  mkdir -p "$SUITE_POOL_DIR/cpu"
  suite_pool_reap() {
    local pid rc ended
    if wait -n -p pid "${!name_of[@]}"; then rc=0; else rc=$?; fi
    ended=${name_of[$pid]}
    unset "name_of[$pid]"
    "$done" "$ended" "$rc" $(($(date +%s) - t0_of[$ended])) "$(suite_cpu_seconds "$SUITE_POOL_DIR/cpu/$ended")"
  }
  for name in "$@"; do
    while [ ${#name_of[@]} -ge "$max" ]; do suite_pool_reap; done
    t0_of[$name]=$(date +%s)
    (
      suite_shm_dir "$SUITE_POOL_DIR/shm-$name"
      trap 'times >"$SUITE_POOL_DIR/cpu/$name"' EXIT
      "$start" "$name"
    ) </dev/null &
    name_of[$!]=$name
  done
  while [ ${#name_of[@]} -gt 0 ]; do suite_pool_reap; done
}

# suite_cpu_seconds FILE: the CPU time (user + system, whole seconds) in the children's line
# of bash's `times`, written to FILE by the shell it describes (`times` in a pipe or a command
# substitution would describe a new subshell, which has no finished children yet).
suite_cpu_seconds() {
  awk 'function sec(t, m) { m = t; sub(/m.*/, "", m); sub(/^[0-9]+m/, "", t); sub(/s$/, "", t); return m * 60 + t }
    NR == 2 { printf "%d\n", sec($1) + sec($2) + 0.5 }' "$1" 2>/dev/null || echo 0
}

# suite_heading NAME: the row's last column.
suite_heading() {
  local name rest
  while IFS='|' read -r name rest; do
    [ "$name" = "$1" ] && echo "${rest##*|}"
  done <<<"$SUITE_TABLE"
}

# suite_run NAME [MODE]: the row's function; MODE is check (the default) or flaky.
suite_run() {
  local fn="suite_${1//-/_}"
  declare -F "$fn" >/dev/null || {
    echo "suites.sh: no suite $1" >&2
    return 2
  }
  SUITE_MODE=${2:-check} "$fn"
}

suite_lint() {
  cargo fmt --all --check
  cargo clippy --workspace --all-targets -- -D warnings
}

suite_generated() {
  python3 tests/vectors/make_vectors.py --check
  python3 scripts/tables.py --check
  # Issue 44's ablation patches still apply to the fast path they change (a benchmark's input).
  bash scripts/bench-ablate.sh --check
}

suite_servers() {
  .venv/bin/python -m pytest tests/servers -q -p no:cacheprovider
}

# The CLI's store leases are its `full` feature (cli/Cargo.toml), as the packaged CLI has.
RUST_TESTS=("--workspace --features snowflake-cli/full" "-p snowflake-core --no-default-features --lib --tests"
  "-p snowflake-core --lib --tests")

# Builds what the rust step runs: the build computes, the run mostly waits (servers, leases,
# processes), so check.sh builds first and runs the tests at once with the other steps.
suite_rust_build() {
  local set
  for set in "${RUST_TESTS[@]}"; do
    # shellcheck disable=SC2086
    cargo test -q $set --no-run
  done
  # public-ids is no_std (its cipher too): built alone without std, like the others.
  local feature
  for feature in shared state-file lease-local lease-redis lease-postgres lease-mysql redis-script sql public-ids; do
    cargo check -q -p snowflake-core --no-default-features --features "$feature" --lib --tests
  done
  # The build a Rust user of the README gets (a path dependency, default features) warns of nothing.
  cargo clippy -q -p snowflake-core --lib -- -D warnings
  python3 scripts/modcycles.py core/src
  export RUST_BUILT=1
}

# The workspace set's test programs that wait on servers (leases in Redis, a Cluster,
# PostgreSQL and MariaDB, their faults): the rust-stores step, at once with the rust step,
# which runs every other one. Each alone took most of the rust step's time (fleet 206 s,
# redis_lease 120 s), and the two run side by side.
RUST_STORE_TESTS=(fleet lease_faults redis_lease redis_poison redis_script)

# rust_tests store|rest: the --test arguments of the workspace set's part. Every test file of
# the workspace (*/tests/*.rs) is in one part or the other: a new one goes to `rest`.
rust_tests() {
  local f name
  for f in */tests/*.rs; do
    name=$(basename "$f" .rs)
    case " ${RUST_STORE_TESTS[*]} " in
      *" $name "*) [ "$1" = store ] && echo "--test $name" ;;
      *) [ "$1" = rest ] && echo "--test $name" ;;
    esac
  done | sort -u
}

suite_rust() {
  local set
  [ "$SUITE_MODE" = flaky ] || [ -n "${RUST_BUILT:-}" ] || suite_rust_build
  # shellcheck disable=SC2046,SC2086
  cargo test ${RUST_TESTS[0]} --lib --bins $(rust_tests rest)
  # shellcheck disable=SC2086
  cargo test ${RUST_TESTS[0]} --doc
  for set in "${RUST_TESTS[@]:1}"; do
    # shellcheck disable=SC2086
    cargo test $set
  done
}

suite_rust_stores() {
  [ -n "${RUST_BUILT:-}" ] || suite_rust_build
  # shellcheck disable=SC2046,SC2086
  cargo test ${RUST_TESTS[0]} $(rust_tests store)
}

# Its tests mostly wait for lease TTLs: all at once.
suite_core_redis() { cargo test -q -p snowflake-core --features full --test redis_lease --test redis_script -- --test-threads 8; }
# PostgreSQL, MariaDB and a Redis Cluster, each scenario with a server of its own; issue 38's
# faults (a snapshot restart, skew with a data loss), hosts as processes of their own.
suite_core_fleet() { cargo test -q -p snowflake-core --features full --test fleet --test lease_faults -- --test-threads 3; }
suite_core_processes() { cargo test -q -p snowflake-core --features full --test processes --test clock_step; }
suite_core_threads() { cargo test -q -p snowflake-core --test generator; }
suite_cli() { cargo test -q -p snowflake-cli --features full --test cli; }

suite_packages() { SNOWFLAKE_DIST_PLATFORMS="" bash scripts/dist.sh; }

# One command per artifact, the same everywhere (tests/c, tests/php and tests/cross run the
# first): cargo unifies the features of the packages one run builds, so a run that built the
# library beside the full CLI would link another library, and the next run the first again.
build_release() {
  cargo build -q --release -p snowflake-ffi
  cargo build -q --release -p snowflake-cli --features snowflake-cli/full
}

suite_build() {
  build_release
  # The wheel the tests import (.venv), and the addon they load (bindings-node/scripts/build.js
  # puts the given file in place), both from dist/: the python and node steps check them and
  # install nothing over them while the others run.
  SNOWFLAKE_WHEEL=$(ls dist/python/libsnowflake-*.whl)
  .venv/bin/pip install -q --force-reinstall --no-deps "$SNOWFLAKE_WHEEL"
  export SNOWFLAKE_WHEEL SNOWFLAKE_WHEEL_IN_VENV=$SNOWFLAKE_WHEEL
  mkdir -p "$RUN_DIR/addon"
  tar -xzf "$(ls dist/node/libsnowflake-linux-x64-gnu-*.tgz)" -C "$RUN_DIR/addon"
  SNOWFLAKE_ADDON=$(ls "$RUN_DIR"/addon/package/libsnowflake.*.node)
  export SNOWFLAKE_ADDON
  node bindings-node/scripts/build.js
  # The CLI the Python tests run (`snowflake sql`), rather than a debug build of their own
  # beside the Rust step's.
  export SNOWFLAKE_CLI=$PWD/target/release/snowflake
}

suite_dist_tests() { SNOWFLAKE_DIST_PLATFORMS="" bash tests/dist/run.sh; }

suite_c() {
  if [ "$SUITE_MODE" = flaky ]; then
    # The API tests alone, against the release library flaky.sh built ($WORK/test_api).
    "$WORK/test_api" "$ROOT/tests/vectors"
  else
    bash tests/c/run.sh
  fi
}

suite_node() {
  if [ "$SUITE_MODE" = flaky ]; then
    (cd bindings-node && node --test __test__/processes.test.mjs __test__/workers.test.mjs __test__/generator.test.mjs)
  else
    # The addon of dist/node's package for this machine (the build step's SNOWFLAKE_ADDON):
    # bindings-node/scripts/build.js puts it in place rather than build another (here and in
    # the cross step), as the Python step takes dist/python's wheel.
    if [ -z "${SNOWFLAKE_ADDON:-}" ]; then
      mkdir -p "$RUN_DIR/addon"
      tar -xzf "$(ls dist/node/libsnowflake-linux-x64-gnu-*.tgz)" -C "$RUN_DIR/addon"
      SNOWFLAKE_ADDON=$(ls "$RUN_DIR"/addon/package/libsnowflake.*.node)
      export SNOWFLAKE_ADDON
    fi
    bash bindings-node/run-tests.sh
  fi
}

suite_python() {
  if [ "$SUITE_MODE" = flaky ]; then
    .venv/bin/python -m pytest -q -p no:cacheprovider bindings-python/tests/test_coordination.py \
      bindings-python/tests/test_fork.py bindings-python/tests/test_docs.py \
      bindings-python/tests/test_redis_script.py bindings-python/tests/test_threads.py \
      bindings-python/tests/test_api.py bindings-python/tests/test_host_lease.py
  else
    SNOWFLAKE_WHEEL=${SNOWFLAKE_WHEEL:-$(ls dist/python/libsnowflake-*.whl)} bash bindings-python/run-tests.sh
  fi
}

suite_php() {
  if [ "$SUITE_MODE" = flaky ]; then
    SNOWFLAKE_LIB=$PWD/target/release/libsnowflake.so php -d zend.assertions=1 /usr/bin/phpunit -c tests/php/phpunit.xml
  else
    bash tests/php/run.sh
  fi
}

suite_cross() { .venv/bin/python -m pytest tests/cross -q -p no:cacheprovider; }

# The package of the packages step (dist/pg), installed as a user installs it: nothing is built here.
suite_pg() { bash tests/pg/run.sh; }

suite_arbiter() {
  [ "$SUITE_MODE" = flaky ] || build_release
  .venv/bin/python -m pytest tests/arbiter -q -p no:cacheprovider
}

suite_fleet() { .venv/bin/python -m pytest tests/fleet -q -p no:cacheprovider; }

suite_serve() {
  # The CLI flaky.sh built (--features snowflake-cli/full). CI runs this suite in the
  # dist-tests step instead, against the tarball's and the .deb's CLI (tests/dist/run.sh).
  SNOWFLAKE_BIN=$PWD/target/release/snowflake .venv/bin/python -m pytest tests/serve -q -p no:cacheprovider
}

# Before the build step, never beside the steps that run at once: the README's `cargo run
# --release -p snowflake-cli` (the CLI's default features) relinks target/release/snowflake,
# the full CLI that they use.
suite_readme() { .venv/bin/python -m pytest tests/readme -q -p no:cacheprovider; }

suite_faults() { python3 tests/faults/run.py; }

# At once with the last steps: it waits for the background builds (check.sh's $CROSS_LOCK is
# free when they have ended), then packs every platform into a directory of its own, since the
# steps beside it read dist/ (dist-tests, pg, python).
suite_platforms() {
  if [ -n "${CROSS_LOCK:-}" ]; then
    local started=$SECONDS
    flock "$CROSS_LOCK" true
    echo "(waited $((SECONDS - started)) s for the background builds)"
    if [ "$(cat "$CROSS_RC" 2>/dev/null)" != 0 ]; then
      tail -n 60 "$CROSS_LOG"
      echo "check.sh: scripts/dist.sh --build-others failed (its log's end above)" >&2
      return 1
    fi
    grep -E '^---- dist|Finished' "$CROSS_LOG"
    echo "(the background builds: $(suite_cpu_seconds "$CROSS_TIMES") CPU-s)"
  fi
  local dist=${RUN_DIR:+$RUN_DIR/dist-all}
  SNOWFLAKE_DIST_DIR=${dist:-$PWD/dist} bash scripts/dist.sh
  SNOWFLAKE_DIST_DIR=${dist:-$PWD/dist} bash tests/dist/platforms.sh
}
