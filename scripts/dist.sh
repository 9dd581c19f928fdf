#!/usr/bin/env bash
# Builds the packages a release publishes (`make dist`), for users who have no Rust:
#
#   dist/python/  libsnowflake-V-cp39-abi3-<platform tag>.whl, one per platform below
#                 libsnowflake-V.tar.gz              the sdist, its crates vendored (offline)
#   dist/node/    libsnowflake-V.tgz                 the main package (no install script), whose
#                                                    optionalDependencies are the platform packages
#                 libsnowflake-<napi platform>-V.tgz @libsnowflake/<napi platform>, the addon
#                 libsnowflake-wasm-V.tgz            @libsnowflake/wasm: core as WebAssembly (no
#                                                    std), for browsers, workers, edge runtimes
#   dist/php/     libsnowflake-snowflake-V.zip       the Composer package with every platform's library
#   dist/c/       libsnowflake-V-<platform>.tar.gz   lib/ include/ bin/snowflake ... (.zip for Windows)
#                 libsnowflake0.1_V_<arch>.deb, libsnowflake-dev_V_<arch>.deb,
#                 libsnowflake-tools_V_<arch>.deb    the same under /usr, split as Debian splits a
#                                                    library (scripts/deb.sh), amd64 and arm64
#   dist/pg/      postgresql-15-snowflake_V_amd64.deb the PostgreSQL extension for Debian's
#                                                    PostgreSQL 15 (scripts/deb-pg.sh)
#
# The platforms (docs/packages.md):
#
#   x86_64-linux-gnu   manylinux_2_17_x86_64   linux-x64-gnu    glibc 2.17+    tarball, .deb
#   aarch64-linux-gnu  manylinux_2_17_aarch64  linux-arm64-gnu  glibc 2.17+    tarball, .deb
#   x86_64-linux-musl  musllinux_1_2_x86_64    linux-x64-musl   musl 1.2+      tarball (static CLI)
#   x86_64-windows     win_amd64               win32-x64-gnu    Windows 10+    zip (DLL, import libraries, .exe)
#   x86_64-darwin      macosx_10_12_x86_64     darwin-x64       macOS 10.12+   tarball (dylib, CLI)
#   aarch64-darwin     macosx_11_0_arm64       darwin-arm64     macOS 11+      tarball (dylib, CLI)
#
# SNOWFLAKE_DIST_PLATFORMS (space separated) builds only some of the other platforms, for a
# quicker turn while working on one; unset, every one of scripts/dist.env's DIST_PLATFORMS
# (what CI and a release build); empty, x86_64 glibc's alone.
#
# `dist.sh --build-others` only compiles the other platforms' binaries (the slow part, in a
# target directory of their own) and writes nothing to dist/. scripts/check.sh starts it in
# the background at the beginning, at the lowest priority, so that it takes the CPU the test
# steps leave idle; its last step runs the whole dist.sh, whose cargo runs then find those
# binaries built.
#
# How each is built (docs/contributing.md, "Other platforms"):
# - x86_64 glibc, this machine's target, with rustup's toolchain: zig (the `ziglang` package)
#   links against scripts/dist.env's glibc floor, so the packages load on distributions much
#   older than the build machine. Two cargo runs: maturin's for the wheel (maturin drives the
#   build of the extension it packs), and one cargo-zigbuild run for the C library, the CLI
#   and the Node addon, which share their dependencies.
# - every other platform with Debian's `rustc-web` (rustup here has no other target), each in
#   one cargo-zigbuild run that builds all four binaries at once (the C library, the CLI, the
#   Node addon and the Python extension, which then share one build of their dependencies):
#   aarch64 Linux with Debian's arm64 standard library, on stable Rust; musl, Windows and macOS
#   in one run that builds the standard library from Debian's `rust-web-src` (-Zbuild-std,
#   which needs RUSTC_BOOTSTRAP=1: see docs/contributing.md). Their wheels are the x86_64
#   wheel's files (the same Python code, metadata and stubs) around that platform's extension,
#   packed again with pypa's `wheel` under the platform's tag.
# - @libsnowflake/wasm's module (scripts/wasm-build.sh): wasm32-unknown-unknown with Debian's
#   rustc-web and core's library from rust-web-src (-Zbuild-std), linked by rustup's rust-lld,
#   shrunk by binaryen's wasm-opt; built with the other platforms (--build-others), packed with
#   bindings-wasm/'s JS layer.
# Version: the Cargo workspace's, checked against every manifest that states it.
#
# Needs what scripts/install-deps.sh installs: .venv's maturin, ziglang, cargo-zigbuild and
# wheel; Debian's rustc-web, cargo-web, rust-web-src and libstd-rust-web-dev:arm64; binaryen; npm;
# composer (with php8.2-zip); dpkg-deb, binutils' strip, llvm (llvm-strip, llvm-dlltool).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD_ONLY=false
case "${1:-}" in
  "") ;;
  --build-others) BUILD_ONLY=true ;;
  *) echo "usage: scripts/dist.sh [--build-others]" >&2; exit 2 ;;
esac
export PATH="$ROOT/.venv/bin:$HOME/.cargo/bin:$PATH"
# shellcheck source=scripts/dist.env
. scripts/dist.env

for tool in maturin cargo-zigbuild wasm-opt npm composer dpkg-deb strip llvm-strip llvm-dlltool llvm-readobj /usr/bin/cargo /usr/bin/rustc; do
  command -v "$tool" >/dev/null || { echo "dist.sh: $tool is missing: run scripts/install-deps.sh" >&2; exit 1; }
done
for module in ziglang wheel; do
  .venv/bin/python -m $module version >/dev/null 2>&1 || { echo "dist.sh: $module is missing from .venv: run scripts/install-deps.sh" >&2; exit 1; }
done

# --- the platforms (scripts/dist.env) -------------------------------------------------------
OTHERS=$DIST_PLATFORMS
for p in $OTHERS; do
  [ -n "${WHEEL_TAGS[$p]:-}" ] || { echo "dist.sh: SNOWFLAKE_DIST_PLATFORMS: unknown platform $p (known: ${!WHEEL_TAGS[*]})" >&2; exit 1; }
done
PLATFORMS="x86_64-linux-gnu $OTHERS"
has() { [[ " $OTHERS " == *" $1 "* ]]; }
# Where each platform's binaries land: x86_64 glibc's with the dist profile (LTO), the
# others' with dist-cross (no LTO, parallel code generation: their builds are most of
# dist.sh's time). The others are built by another cargo
# (Debian's) in a target directory of their own, so that a `--build-others` run beside the
# host's builds never waits on them (nor they on it).
#
# Every path a build's flags, linker or C compiler name is the build cache's, not the
# checkout's, so that a clone at another path reuses what the last one built (a CI clone's
# target/ is a link to the build cache: scripts/check.sh). Cargo rebuilds every crate whose
# linker, C compiler or flags changed, and cargo-zigbuild names its linker and C compiler
# wrappers after the path of the program that runs it (maturin, cargo-zigbuild): run from a
# clone's .venv, a clone at a new path rebuilt every dependency of six targets (a CI run at a
# path last built from the day before took 61 minutes; runs at the path of the one before,
# 20 to 26). The target directory as the file system has it, then, and both programs copied
# beside it (the same files; a rename puts a new one in place, since the other dist.sh that
# check.sh runs in the background may be running the old one).
mkdir -p "${CARGO_TARGET_DIR:-$ROOT/target}"
TARGET_DIR=$(cd -P "${CARGO_TARGET_DIR:-$ROOT/target}" && pwd)
CROSS_DIR=$TARGET_DIR/cross
ZIG_DRIVERS=$TARGET_DIR/zig-drivers
mkdir -p "$ZIG_DRIVERS"
for tool in maturin cargo-zigbuild; do
  if ! cmp -s "$ROOT/.venv/bin/$tool" "$ZIG_DRIVERS/$tool"; then
    cp "$ROOT/.venv/bin/$tool" "$ZIG_DRIVERS/$tool.$$"
    mv -f "$ZIG_DRIVERS/$tool.$$" "$ZIG_DRIVERS/$tool"
  fi
done
# zig itself (.venv's ziglang) for the cross builds' ZIG_COMMAND, which PyO3's build watches.
printf '#!/bin/sh\nexec "%s" -m ziglang "$@"\n' "$ROOT/.venv/bin/python" >"$ZIG_DRIVERS/zig.$$"
chmod +x "$ZIG_DRIVERS/zig.$$"
mv -f "$ZIG_DRIVERS/zig.$$" "$ZIG_DRIVERS/zig"
export PATH="$ZIG_DRIVERS:$PATH"
profile_of() {
  case $1 in
    x86_64-linux-gnu) echo dist ;;
    *) echo dist-cross ;;
  esac
}
# aarch64's run has a directory of its own too: its build scripts and proc-macros (built for
# this machine, under the profile's name) would otherwise be rebuilt by each -Zbuild-std run
# and it by turns, as RUSTC_BOOTSTRAP, which some of them watch, is set in one and not the other.
out_dir() {
  case $1 in
    x86_64-linux-gnu) echo "$TARGET_DIR/${RUST_TARGET[$1]}/$(profile_of "$1")" ;;
    aarch64-linux-gnu) echo "$CROSS_DIR/stable/${RUST_TARGET[$1]}/$(profile_of "$1")" ;;
    *) echo "$CROSS_DIR/${RUST_TARGET[$1]}/$(profile_of "$1")" ;;
  esac
}


# Each step's heading says how long the step before it took (the cross builds are CI's budget).
step_started=$(date +%s)
step() {
  local now
  now=$(date +%s)
  printf '\n---- dist: %s (the step before: %d s) ----\n' "$*" $((now - step_started))
  step_started=$now
}
json_get() { node -p "const v = require(process.argv[1])$2; v === undefined ? '' : v" "$ROOT/$1"; }

# --- one version -------------------------------------------------------------------------
for stated in "bindings-node/package.json:$(json_get bindings-node/package.json .version)" \
  "bindings-wasm/package.json:$(json_get bindings-wasm/package.json .version)" \
  $(for p in $PLATFORMS; do m=bindings-node/npm/${NAPI_NAME[$p]}/package.json; echo "$m:$(json_get "$m" .version)"; done) \
  "include/snowflake.h:$(sed -n 's/^#define SNOWFLAKE_VERSION "\(.*\)"/\1/p' include/snowflake.h)"; do
  if [ "${stated##*:}" != "$VERSION" ]; then
    echo "dist.sh: ${stated%%:*} says version ${stated##*:}, the Cargo workspace $VERSION: make them agree" >&2
    exit 1
  fi
done
# The Node loader knows the floor its prebuilt addon needs, to say so when it cannot load.
for napi in linux-x64-gnu linux-arm64-gnu; do
  if ! grep -q "'$napi': { glibc: '$GLIBC_FLOOR' }" bindings-node/native.js; then
    echo "dist.sh: bindings-node/native.js's PREBUILT does not say glibc $GLIBC_FLOOR (scripts/dist.env) for $napi" >&2
    exit 1
  fi
done
for p in $PLATFORMS; do
  grep -q "'${NAPI_NAME[$p]}'" bindings-node/native.js ||
    { echo "dist.sh: bindings-node/native.js's PREBUILT does not list ${NAPI_NAME[$p]}" >&2; exit 1; }
done

# --- the other platforms: Debian's rustc-web, cargo-zigbuild --------------------------------
# Debian's cargo and rustc (/usr/bin) come first on the PATH of these runs (cargo-zigbuild
# runs `cargo`), the .venv's Python before them (for zig). The binaries share their
# dependencies within each run: all four packages at once. What the toolchain route lacks,
# made once in $XTOOLS:
# - Windows: Debian's rustc links x86_64-pc-windows-gnu programs with -lssp_nonshared -lssp
#   (Debian's mingw-w64 builds C with the stack protector); zig's mingw-w64 has neither, and
#   nothing linked here calls them: empty archives stand in for both.
# - Windows' Node addon: napi-build (windows-gnu) wants LIBNODE_PATH to hold a libnode.dll
#   and links -lnode, but napi-sys finds every Node-API function in the host process at run
#   time on Windows, so nothing is imported: an empty archive is the import library (node.lib,
#   a name zig's linker looks for), and the libnode.dll beside it is for that check.
# - Windows' Python extension: PyO3 writes python3.dll's import library itself, with zig's
#   dlltool when ZIG_COMMAND names zig (as maturin --zig does), under the name zig's linker
#   looks for (python3.lib; with mingw-w64's dlltool it would be python3.dll.a, which zig
#   does not take).
# - macOS: rustc strips Mach-O files with `rust-objcopy`, which rustup ships and Debian does
#   not: LLVM's llvm-objcopy is the same program. Security and CoreFoundation, which the
#   leases' TLS calls, and SystemConfiguration, which tokio-postgres's `whoami` links, are
#   link-time stubs (scripts/macos-frameworks/README.md). zig's Mach-O linker ignores the
#   list of exported symbols that rustc hands a linker (ELF and Windows linkers apply it), so
#   a dylib would export every Rust function it holds, and keep them all. macOS's runs are
#   the one place that passes rustc an unstable option: -Zdefault-visibility=hidden (the
#   -Zbuild-std run has RUSTC_BOOTSTRAP already) compiles every Rust item hidden except the
#   C-level entry points (#[no_mangle]: snowflake_*, PyInit__native, the Node addon's), which
#   is what the list would have done. It changes no code; platforms.sh checks the exports.
WASM_MODULE=$TARGET_DIR/wasm/snowflake.wasm
build_others() {
  XTOOLS=$TARGET_DIR/cross-tools
  mkdir -p "$XTOOLS/no-ssp" "$XTOOLS/libnode" "$XTOOLS/bin"
  for a in no-ssp/libssp.a no-ssp/libssp_nonshared.a libnode/node.lib libnode/libnode.dll; do
    [ -f "$XTOOLS/$a" ] || ar rc "$XTOOLS/$a"
  done
  ln -sf "$(command -v llvm-objcopy)" "$XTOOLS/bin/rust-objcopy"
  # macOS's framework stubs, under a name in the build cache (see TARGET_DIR above).
  ln -sfn "$ROOT/scripts/macos-frameworks" "$XTOOLS/macos-frameworks.$$"
  mv -Tf "$XTOOLS/macos-frameworks.$$" "$XTOOLS/macos-frameworks"
  cross() {
    env PATH="$XTOOLS/bin:$ZIG_DRIVERS:$ROOT/.venv/bin:/usr/bin:$PATH" RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc \
      CARGO_TARGET_DIR="$CROSS_DIR" \
      LIBNODE_PATH="$XTOOLS/libnode" ZIG_COMMAND="$ZIG_DRIVERS/zig" \
      CARGO_TARGET_X86_64_UNKNOWN_LINUX_MUSL_RUSTFLAGS="-C target-feature=-crt-static" \
      CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUSTFLAGS="-L native=$XTOOLS/no-ssp" \
      CARGO_TARGET_X86_64_APPLE_DARWIN_RUSTFLAGS="-L framework=$XTOOLS/macos-frameworks -Zdefault-visibility=hidden" \
      CARGO_TARGET_AARCH64_APPLE_DARWIN_RUSTFLAGS="-L framework=$XTOOLS/macos-frameworks -Zdefault-visibility=hidden" \
      "$@"
  }
  PACKAGES=(-p snowflake-ffi -p snowflake-cli -p snowflake-node -p libsnowflake-python --features snowflake-cli/full,libsnowflake-python/extension-module)
  if has aarch64-linux-gnu; then
    step "aarch64 Linux (glibc $GLIBC_FLOOR, zig): library, CLI, Node addon, Python extension (Debian's rustc and arm64 std, stable)"
    cross env CARGO_TARGET_DIR="$CROSS_DIR/stable" cargo zigbuild --profile dist-cross \
      --target "aarch64-unknown-linux-gnu.$GLIBC_FLOOR" "${PACKAGES[@]}"
  fi
  # The platforms whose standard library cargo builds from Debian's rust-web-src (-Zbuild-std,
  # which needs RUSTC_BOOTSTRAP=1: see docs/contributing.md; the project's own crates use no
  # unstable feature, and rustup's stable toolchain builds them for this machine). One run for
  # all four, which share its build scripts and proc-macros. musl: the shared libraries link musl's
  # libc.so (a cdylib needs -crt-static off); zig links the CLI statically all the same. macOS:
  # Rust's oldest systems (10.12 on Intel, 11 on Apple silicon), its targets' default.
  local targets=() p
  for p in $OTHERS; do
    [[ " $DEBIAN_STD_PLATFORMS " == *" $p "* ]] || targets+=(--target "${RUST_TARGET[$p]}")
  done
  if [ ${#targets[@]} -gt 0 ]; then
    step "${targets[*]//--target /}: library, CLI, Node addon, Python extension (std from rust-web-src, zig)"
    cross env RUSTC_BOOTSTRAP=1 cargo zigbuild -Zbuild-std --profile dist-cross "${targets[@]}" "${PACKAGES[@]}"
  fi
  step "wasm32: @libsnowflake/wasm's module (Debian's rustc, std from rust-web-src, wasm-opt -Oz)"
  CARGO_TARGET_DIR=$TARGET_DIR scripts/wasm-build.sh "$WASM_MODULE"
  if has aarch64-linux-gnu; then
    step "libsnowflake_minimal.a: no leases (aarch64, glibc $GLIBC_FLOOR, Debian's rustc, zig)"
    cross env CARGO_TARGET_DIR="$CROSS_DIR/minimal" cargo zigbuild --profile dist-cross \
      --target "aarch64-unknown-linux-gnu.$GLIBC_FLOOR" -p snowflake-ffi --no-default-features --features minimal
  fi
}
if $BUILD_ONLY; then
  started=$(date +%s)
  build_others
  step "the other platforms' binaries built in $(($(date +%s) - started)) s"
  exit 0
fi

# SNOWFLAKE_DIST_DIR puts the packages elsewhere (scripts/check.sh's platforms step, which runs
# beside steps that read dist/); tests/dist/platforms.sh reads the same variable.
DIST=${SNOWFLAKE_DIST_DIR:-$ROOT/dist}
rm -rf "$DIST"
mkdir -p "$DIST/python" "$DIST/node" "$DIST/php" "$DIST/c"
STAGE=$(mktemp -d "${TMPDIR:-/tmp}/snowflake-dist.XXXXXX")
trap 'rm -rf "$STAGE"' EXIT
started=$(date +%s)

# --- Python: the wheel (maturin --zig) and the sdist (maturin sdist + vendored crates) ------
step "python: abi3 wheel for manylinux_${GLIBC_FLOOR/./_} ($DIST_TARGET, zig)"
# A target directory of its own: its dependencies' features differ from the other crates'
# (nothing to share), and the two runs do not invalidate each other's builds.
CARGO_TARGET_DIR=$TARGET_DIR/dist-python maturin build --profile dist --zig --target "$DIST_TARGET" \
  --compatibility "manylinux_${GLIBC_FLOOR/./_}" -m bindings-python/Cargo.toml -o "$DIST/python"

step "python: sdist with vendored crates"
maturin sdist -m bindings-python/Cargo.toml -o "$STAGE/sdist"
python3 scripts/vendor-sdist.py "$STAGE"/sdist/libsnowflake-"$VERSION".tar.gz "$DIST/python" >/dev/null

# --- the C library, the CLI and the Node addon: one cargo-zigbuild run ----------------------
step "libsnowflake.so/.a, the snowflake CLI, the Node addon ($DIST_TARGET, glibc $GLIBC_FLOOR, zig)"
# The CLI with every store (`full`): what `cargo run` builds leaves them out (cli/Cargo.toml).
cargo zigbuild --profile dist --target "$DIST_TARGET.$GLIBC_FLOOR" \
  -p snowflake-ffi -p snowflake-cli -p snowflake-node --features snowflake-cli/full
OUT=$(out_dir x86_64-linux-gnu)

build_others

# --- Python: each other platform's wheel, from the x86_64 wheel and the platform's extension -
WHEEL=$(ls "$DIST"/python/libsnowflake-"$VERSION"-*manylinux*x86_64*.whl)
for p in $OTHERS; do
  tags=${WHEEL_TAGS[$p]}
  step "python: abi3 wheel for ${tags// / and } (the x86_64 wheel around $p's extension, wheel pack)"
  unpacked=$STAGE/wheel-$p
  mkdir -p "$unpacked"
  .venv/bin/python -m wheel unpack --dest "$unpacked" "$WHEEL" >/dev/null
  tree=$(echo "$unpacked"/libsnowflake-"$VERSION")
  rm "$tree"/libsnowflake/_native.abi3.so
  case $p in
    *-windows) install -m 755 "$(out_dir "$p")/libsnowflake_native.dll" "$tree/libsnowflake/_native.pyd" ;;
    *-darwin) install -m 755 "$(out_dir "$p")/liblibsnowflake_native.dylib" "$tree/libsnowflake/_native.abi3.so" ;;
    *) install -m 755 "$(out_dir "$p")/liblibsnowflake_native.so" "$tree/libsnowflake/_native.abi3.so" ;;
  esac
  # The WHEEL file's tags name the wheel that `wheel pack` writes (and RECORD is made anew).
  wheel_file=$tree/libsnowflake-$VERSION.dist-info/WHEEL
  grep -v '^Tag: ' "$wheel_file" >"$wheel_file.new"
  for tag in $tags; do echo "Tag: cp39-abi3-$tag" >>"$wheel_file.new"; done
  mv "$wheel_file.new" "$wheel_file"
  .venv/bin/python -m wheel pack --dest-dir "$DIST/python" "$tree" >/dev/null
done

# --- the minimal C library: no leases (no Redis client, no TLS) -----------------------------
# A cargo run of its own, in a target directory of its own: snowflake-core with other
# features, and an output of the same name.
# x86_64 with rustup's toolchain here, aarch64 with Debian's in build_others (the .debs of
# both carry it).
declare -A OUT_MINIMAL
step "libsnowflake_minimal.a: no leases ($DIST_TARGET, glibc $GLIBC_FLOOR, zig)"
CARGO_TARGET_DIR=$TARGET_DIR/dist-minimal cargo zigbuild --profile dist-minimal --target "$DIST_TARGET.$GLIBC_FLOOR" \
  -p snowflake-ffi --no-default-features --features minimal
OUT_MINIMAL[x86_64-linux-gnu]=$TARGET_DIR/dist-minimal/$DIST_TARGET/dist-minimal
! has aarch64-linux-gnu || OUT_MINIMAL[aarch64-linux-gnu]=$CROSS_DIR/minimal/aarch64-unknown-linux-gnu/dist-cross

# --- Node: the napi-rs packages -------------------------------------------------------------
# The addon's file on each platform: a shared library under the name Node loads it by.
addon_of() {
  case $1 in
    *-windows) echo "$(out_dir "$1")/snowflake_node.dll" ;;
    *-darwin) echo "$(out_dir "$1")/libsnowflake_node.dylib" ;;
    *) echo "$(out_dir "$1")/libsnowflake_node.so" ;;
  esac
}
NAPI_NAMES=$(for p in $PLATFORMS; do echo "${NAPI_NAME[$p]}"; done)
step "node: libsnowflake and @libsnowflake/{$(echo $NAPI_NAMES | tr ' ' ,)} (npm pack)"
mkdir -p "$STAGE/node/main"
for p in $PLATFORMS; do
  napi=${NAPI_NAME[$p]}
  mkdir -p "$STAGE/node/$napi"
  cp "bindings-node/npm/$napi/package.json" "bindings-node/npm/$napi/README.md" "$STAGE/node/$napi/"
  cp "$(addon_of "$p")" "$STAGE/node/$napi/libsnowflake.$napi.node"
  (cd "$STAGE/node/$napi" && npm pack --loglevel=error --pack-destination "$DIST/node" >/dev/null)
done
# The main package as `napi prepublish` publishes it: the committed package.json plus the
# platform packages as optionalDependencies (the checkout itself lists none, so that working
# on it never fetches a published addon).
for f in $(node -p "require('./bindings-node/package.json').files.join(' ')") package.json; do
  cp "bindings-node/$f" "$STAGE/node/main/"
done
node -e '
  const fs = require("fs");
  const [file, version, ...names] = process.argv.slice(1);
  const pkg = JSON.parse(fs.readFileSync(file, "utf8"));
  pkg.optionalDependencies = Object.fromEntries(names.map((n) => [`@libsnowflake/${n}`, version]));
  fs.writeFileSync(file, JSON.stringify(pkg, null, 2) + "\n");
' "$STAGE/node/main/package.json" "$VERSION" $NAPI_NAMES
(cd "$STAGE/node/main" && npm pack --loglevel=error --pack-destination "$DIST/node" >/dev/null)

# @libsnowflake/wasm: a package of its own, so that a browser bundle never meets the native
# loader: the JS layer of bindings-wasm/ and the module built with the other platforms.
step "node: @libsnowflake/wasm ($(wc -c <"$WASM_MODULE") bytes of WebAssembly, $(gzip -9c "$WASM_MODULE" | wc -c) gzipped) (npm pack)"
mkdir -p "$STAGE/node/wasm"
for f in $(node -p "require('./bindings-wasm/package.json').files.join(' ')"); do
  [ "$f" = snowflake.wasm ] || cp "bindings-wasm/$f" "$STAGE/node/wasm/"
done
cp bindings-wasm/package.json "$STAGE/node/wasm/"
cp "$WASM_MODULE" "$STAGE/node/wasm/snowflake.wasm"
(cd "$STAGE/node/wasm" && npm pack --loglevel=error --pack-destination "$DIST/node" >/dev/null)

# --- PHP: the Composer package with the library ---------------------------------------------
# The C library's file on each platform (Library::bundledLibraryFor() names the same ones).
clib_name() {
  case $1 in
    *-windows) echo snowflake.dll ;;
    *-darwin) echo libsnowflake.dylib ;;
    *) echo libsnowflake.so ;;
  esac
}
step "php: libsnowflake/snowflake with lib/{$(echo $PLATFORMS | tr ' ' ,)}/ (composer archive)"
PHP_STAGE=$STAGE/php/snowflake
mkdir -p "$STAGE/php"
cp -r ffi-c/php "$PHP_STAGE"
for p in $PLATFORMS; do
  install -D -m 755 "$(out_dir "$p")/$(clib_name "$p")" "$PHP_STAGE/lib/$p/$(clib_name "$p")"
done
install -D -m 644 include/snowflake_php.h "$PHP_STAGE/include/snowflake_php.h"
install -m 644 LICENSE-MIT LICENSE-APACHE "$PHP_STAGE/"
# An artifact repository takes the version from composer.json (a VCS one from the tag).
php -r '
  [$file, $version] = array_slice($argv, 1);
  $json = json_decode(file_get_contents($file), true, 512, JSON_THROW_ON_ERROR);
  $json = ["name" => $json["name"], "version" => $version] + $json;
  file_put_contents($file, json_encode($json, JSON_PRETTY_PRINT | JSON_UNESCAPED_SLASHES) . "\n");
' "$PHP_STAGE/composer.json" "$VERSION"
COMPOSER_ALLOW_SUPERUSER=1 COMPOSER_HOME=$STAGE/composer-home composer archive --no-interaction --quiet \
  --working-dir="$PHP_STAGE" --format=zip --dir="$DIST/php" --file="libsnowflake-snowflake-$VERSION"

# --- C and C++: the relocatable tarballs (a zip for Windows) and the .debs ------------------
# What a static link of libsnowflake.a needs beside it (rustc --print native-static-libs).
declare -A LIBS_PRIVATE=([x86_64-linux-gnu]="-lgcc_s -lutil -lrt -lpthread -lm -ldl -lc"
  [aarch64-linux-gnu]="-lgcc_s -lutil -lrt -lpthread -lm -ldl -lc" [x86_64-linux-musl]="-lunwind -lc")
pack_tree() { # <platform directory name under $STAGE/c> <archive>
  case $2 in
    *.zip) (cd "$STAGE/c" && find "$1" -print | sort | python3 -c '
import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
    for name in sys.stdin.read().split("\n"):
        if name:
            z.write(name)
' "$2") ;;
    *) tar --sort=name --owner=0 --group=0 --numeric-owner -C "$STAGE/c" -czf "$2" "$1" ;;
  esac
}
# API.md is the C reference docs/c.md points to (generated from snowflake.h, checked by cargo test).
docs_into() { install -D -m 644 README.md CHANGELOG.md LICENSE-MIT LICENSE-APACHE ffi-c/API.md -t "$1/share/doc/libsnowflake/"; }

for p in $PLATFORMS; do
  out=$(out_dir "$p")
  NAME=libsnowflake-$VERSION-$p
  TREE=$STAGE/c/$NAME
  case $p in
    *-linux-*)
      step "c: $NAME.tar.gz"
      make -s -C ffi-c install-artifacts ARTIFACTS="$out" PREFIX="$TREE" RELOCATABLE=1 LIBS_PRIVATE="${LIBS_PRIVATE[$p]}"
      # The minimal static library where the .debs carry it (glibc: x86_64 and aarch64).
      [ -z "${OUT_MINIMAL[$p]:-}" ] ||
        make -s -C ffi-c install-minimal-artifacts MINIMAL_ARTIFACTS="${OUT_MINIMAL[$p]}" PREFIX="$TREE" RELOCATABLE=1 LIBS_PRIVATE="${LIBS_PRIVATE[$p]}"
      # The archives carry Rust's standard library; their debug sections are most of their
      # size and no user of a release build needs them.
      llvm-strip --strip-debug "$TREE"/lib/libsnowflake*.a
      install -D -m 755 "$out/snowflake" "$TREE/bin/snowflake"
      docs_into "$TREE"
      pack_tree "$NAME" "$DIST/c/$NAME.tar.gz"
      ;;
    *-darwin)
      # The dylib under its versioned name, which is its install name (@rpath/..., set by
      # ffi-c/build.rs), and the plain name a linker looks for; no static library.
      step "c: $NAME.tar.gz"
      install -D -m 755 "$out/libsnowflake.dylib" "$TREE/lib/libsnowflake.$SOVERSION.dylib"
      ln -s "libsnowflake.$SOVERSION.dylib" "$TREE/lib/libsnowflake.dylib"
      install -D -m 644 include/snowflake.h include/snowflake.hpp include/snowflake_php.h -t "$TREE/include/"
      mkdir -p "$TREE/lib/pkgconfig"
      sed -e 's|@PREFIX@|${pcfiledir}/../..|' -e 's|@LIBDIR@|lib|' -e 's|@INCLUDEDIR@|include|' -e "s|@VERSION@|$VERSION|" \
        -e '/static_libs/d' -e '/^# Static linking/d' -e '/^Libs.private/d' ffi-c/install/snowflake.pc.in >"$TREE/lib/pkgconfig/snowflake.pc"
      install -D -m 755 "$out/snowflake" "$TREE/bin/snowflake"
      docs_into "$TREE"
      pack_tree "$NAME" "$DIST/c/$NAME.tar.gz"
      ;;
    *-windows)
      # The DLL and the CLI in bin/ (Windows finds a DLL beside the program); import libraries
      # for MSVC (snowflake.lib, made from the DLL's exports by llvm-dlltool) and for
      # mingw-w64 (libsnowflake.dll.a, as cargo wrote it).
      step "c: $NAME.zip"
      install -D -m 755 "$out/snowflake.dll" "$out/snowflake.exe" -t "$TREE/bin/"
      install -D -m 644 include/snowflake.h include/snowflake.hpp include/snowflake_php.h -t "$TREE/include/"
      mkdir -p "$TREE/lib"
      # (cargo names the import library libsnowflake.dll.a; older cargos, snowflake.dll.a)
      install -m 644 "$(ls "$out/libsnowflake.dll.a" "$out/snowflake.dll.a" 2>/dev/null | head -n 1)" "$TREE/lib/libsnowflake.dll.a"
      { echo "LIBRARY snowflake.dll"; echo "EXPORTS"
        llvm-readobj --coff-exports "$out/snowflake.dll" | sed -n 's/^ *Name: //p'; } >"$STAGE/snowflake.def"
      llvm-dlltool -m i386:x86-64 -d "$STAGE/snowflake.def" -l "$TREE/lib/snowflake.lib"
      docs_into "$TREE"
      pack_tree "$NAME" "$DIST/c/$NAME.zip"
      ;;
  esac
done

step "c: the .debs, split as Debian splits a library (scripts/deb.sh): amd64$(has aarch64-linux-gnu && echo ' and arm64')"
bash scripts/deb.sh "$OUT" "${OUT_MINIMAL[x86_64-linux-gnu]}" "$DIST/c" amd64
! has aarch64-linux-gnu || bash scripts/deb.sh "$(out_dir aarch64-linux-gnu)" "${OUT_MINIMAL[aarch64-linux-gnu]}" "$DIST/c" arm64

# The extension is built against this machine's PostgreSQL 15 (its headers, Debian's
# pg_config) with this machine's toolchain: amd64 only, for Debian 12's server. In
# $TARGET_DIR/pg, the build cache's in CI: a run whose ffi-pg and core are unchanged compiles
# nothing (the packages step pays for it once; the platforms step's run finds it built).
step "pg: the PostgreSQL extension's .deb, postgresql-15-snowflake (scripts/deb-pg.sh, cargo pgrx package)"
CARGO_TARGET_DIR=$TARGET_DIR bash scripts/deb-pg.sh "$DIST/pg"

step "done in $(($(date +%s) - started)) s"
(cd "$DIST" && find . -type f -printf '%s\t%p\n' | sort -k2 | awk -F'\t' '{ printf "%8.1f KiB  %s\n", $1 / 1024, $2 }')
