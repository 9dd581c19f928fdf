#!/usr/bin/env bash
# Builds @libsnowflake/wasm's module: ffi-wasm for wasm32-unknown-unknown with Debian's
# rustc-web (rustup here has this machine's target only) and core's library built from
# rust-web-src (-Zbuild-std, hence RUSTC_BOOTSTRAP=1, as scripts/dist.sh's other platforms),
# linked by rustup's rust-lld, then shrunk by binaryen's wasm-opt -Oz. Writes the module to
# the path given (scripts/dist.sh packs it; tests/dist/wasm measures it).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${1:?usage: scripts/wasm-build.sh OUT.wasm}
TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}/wasm
LLD=$(ls "$(rustc --print sysroot)"/lib/rustlib/*/bin/rust-lld 2>/dev/null | head -n 1)
[ -x "$LLD" ] || { echo "wasm-build.sh: rustup's rust-lld is missing" >&2; exit 1; }
command -v wasm-opt >/dev/null || { echo "wasm-build.sh: wasm-opt is missing: run scripts/install-deps.sh (binaryen)" >&2; exit 1; }
env PATH="/usr/bin:$PATH" RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc RUSTC_BOOTSTRAP=1 \
  CARGO_TARGET_DIR="$TARGET_DIR" CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_LINKER="$LLD" \
  /usr/bin/cargo build --quiet -Zbuild-std=core,alloc,panic_abort --target wasm32-unknown-unknown \
  --profile wasm -p snowflake-wasm
# The features rustc's wasm32 target enables by default (Rust 1.82+); every browser of the
# last years and Node 16+ have them.
# Written beside OUT and renamed into place: check.sh's background `dist.sh --build-others`
# and its packages step may both run this at once (cargo takes turns on its lock), and the
# packages step copies OUT: it must never see half a module.
wasm-opt -Oz --enable-bulk-memory --enable-sign-ext --enable-mutable-globals \
  --enable-nontrapping-float-to-int --enable-multivalue --enable-reference-types \
  "$TARGET_DIR/wasm32-unknown-unknown/wasm/snowflake_wasm.wasm" -o "$OUT.$$.tmp"
mv -f "$OUT.$$.tmp" "$OUT"
