#!/usr/bin/env bash
# The C benchmark against the Rust figures: builds the release library, runs
# ffi-c/examples/timing.rs (core's Generator, and the extern "C" functions called from Rust),
# then tests/c/bench.c linked against libsnowflake.so and against libsnowflake.a.
# Same loops, best of 11 runs each. Usage: bash tests/c/bench.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="$HOME/.cargo/bin:$PATH"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/snowflake-bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

cargo build --release -p snowflake-ffi --example timing -q
make -s -C ffi-c install PREFIX="$WORK/prefix" >/dev/null
export PKG_CONFIG_PATH=$WORK/prefix/lib/pkgconfig
LIBDIR=$(pkg-config --variable=libdir snowflake)
gcc -std=c99 -O2 -Wall -Wextra -Werror -pedantic $(pkg-config --cflags snowflake) tests/c/bench.c \
  -o "$WORK/bench_shared" $(pkg-config --libs snowflake) -Wl,-rpath,"$LIBDIR"
gcc -std=c99 -O2 -Wall -Wextra -Werror -pedantic $(pkg-config --cflags snowflake) tests/c/bench.c \
  -o "$WORK/bench_static" $(pkg-config --variable=static_libs snowflake)

target/release/examples/timing
"$WORK/bench_shared" "C (.so)"
"$WORK/bench_static" "C (.a)"
