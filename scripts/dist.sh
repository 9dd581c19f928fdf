#!/usr/bin/env bash
# Builds the packages a release publishes (`make dist`), for users who have no Rust:
#
#   dist/python/  libsnowflake-V-cp39-abi3-manylinux_2_17_x86_64.manylinux2014_x86_64.whl
#                 libsnowflake-V.tar.gz              the sdist, its crates vendored (offline)
#   dist/node/    libsnowflake-V.tgz                 the main package (no install script)
#                 libsnowflake-linux-x64-gnu-V.tgz   @libsnowflake/linux-x64-gnu, the addon
#   dist/php/     libsnowflake-snowflake-V.zip       the Composer package with the library
#   dist/c/       libsnowflake-V-x86_64-linux-gnu.tar.gz   lib/ include/ bin/snowflake ...
#                 libsnowflake0.1_V_amd64.deb, libsnowflake-dev_V_amd64.deb,
#                 libsnowflake-tools_V_amd64.deb     the same under /usr, split as Debian
#                                                    splits a library (scripts/deb.sh)
#
# Every shipped binary is built for scripts/dist.env's target and glibc floor: zig (the
# `ziglang` package) links against that glibc's symbol versions, so the packages load on
# distributions much older than the build machine. Two cargo runs in all: maturin's for the
# wheel (its own, since maturin drives the build of the extension it packs), and one
# cargo-zigbuild run for the C library, the CLI and the Node addon, which share their
# dependencies. Version: the Cargo workspace's, checked against every manifest that states it.
#
# Needs what scripts/install-deps.sh installs: .venv's maturin, ziglang and cargo-zigbuild;
# npm; composer (with php8.2-zip); dpkg-deb and binutils' strip.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export PATH="$ROOT/.venv/bin:$HOME/.cargo/bin:$PATH"
# shellcheck source=scripts/dist.env
. scripts/dist.env

for tool in maturin cargo-zigbuild npm composer dpkg-deb strip; do
  command -v "$tool" >/dev/null || { echo "dist.sh: $tool is missing: run scripts/install-deps.sh" >&2; exit 1; }
done
.venv/bin/python -m ziglang version >/dev/null 2>&1 || { echo "dist.sh: ziglang is missing from .venv: run scripts/install-deps.sh" >&2; exit 1; }

step() { printf '\n---- dist: %s ----\n' "$*"; }
json_get() { node -p "const v = require(process.argv[1])$2; v === undefined ? '' : v" "$ROOT/$1"; }

# --- one version -------------------------------------------------------------------------
VERSION=$(python3 -c 'import tomllib; print(tomllib.load(open("Cargo.toml", "rb"))["workspace"]["package"]["version"])')
MAJOR=${VERSION%%.*}
for stated in "bindings-node/package.json:$(json_get bindings-node/package.json .version)" \
  "bindings-node/npm/linux-x64-gnu/package.json:$(json_get bindings-node/npm/linux-x64-gnu/package.json .version)" \
  "include/snowflake.h:$(sed -n 's/^#define SNOWFLAKE_VERSION "\(.*\)"/\1/p' include/snowflake.h)"; do
  if [ "${stated##*:}" != "$VERSION" ]; then
    echo "dist.sh: ${stated%%:*} says version ${stated##*:}, the Cargo workspace $VERSION: make them agree" >&2
    exit 1
  fi
done
# The Node loader knows the floor its prebuilt addon needs, to say so when it cannot load.
if ! grep -q "'linux-x64-gnu': { glibc: '$GLIBC_FLOOR' }" bindings-node/native.js; then
  echo "dist.sh: bindings-node/native.js's PREBUILT does not say glibc $GLIBC_FLOOR (scripts/dist.env)" >&2
  exit 1
fi

DIST=$ROOT/dist
rm -rf "$DIST"
mkdir -p "$DIST/python" "$DIST/node" "$DIST/php" "$DIST/c"
STAGE=$(mktemp -d "${TMPDIR:-/tmp}/snowflake-dist.XXXXXX")
trap 'rm -rf "$STAGE"' EXIT
started=$(date +%s)

# --- Python: the wheel (maturin --zig) and the sdist (maturin sdist + vendored crates) ------
step "python: abi3 wheel for manylinux_${GLIBC_FLOOR/./_} ($DIST_TARGET, zig)"
# A target directory of its own: its dependencies' features differ from the other crates'
# (nothing to share), and the two runs do not invalidate each other's builds.
CARGO_TARGET_DIR=$ROOT/target/dist-python maturin build --profile dist --zig --target "$DIST_TARGET" \
  --compatibility "manylinux_${GLIBC_FLOOR/./_}" -m bindings-python/Cargo.toml -o "$DIST/python"

step "python: sdist with vendored crates"
maturin sdist -m bindings-python/Cargo.toml -o "$STAGE/sdist"
python3 scripts/vendor-sdist.py "$STAGE"/sdist/libsnowflake-"$VERSION".tar.gz "$DIST/python" >/dev/null

# --- the C library, the CLI and the Node addon: one cargo-zigbuild run ----------------------
step "libsnowflake.so/.a, the snowflake CLI, the Node addon ($DIST_TARGET, glibc $GLIBC_FLOOR, zig)"
cargo zigbuild --profile dist --target "$DIST_TARGET.$GLIBC_FLOOR" \
  -p snowflake-ffi -p snowflake-cli -p snowflake-node
OUT=$ROOT/target/$DIST_TARGET/dist

# --- the minimal C library: no leases (no Redis client, no TLS) -----------------------------
# A cargo run of its own, in a target directory of its own: snowflake-core with other
# features, and an output of the same name.
build_minimal() {
  step "libsnowflake_minimal.a: no leases ($DIST_TARGET, glibc $GLIBC_FLOOR, zig)"
  CARGO_TARGET_DIR=$ROOT/target/dist-minimal cargo zigbuild --profile dist-minimal --target "$DIST_TARGET.$GLIBC_FLOOR" \
    -p snowflake-ffi --no-default-features --features minimal
  OUT_MINIMAL=$ROOT/target/dist-minimal/$DIST_TARGET/dist-minimal
}
build_minimal

# --- Node: the napi-rs packages -------------------------------------------------------------
step "node: libsnowflake and @libsnowflake/linux-x64-gnu (npm pack)"
mkdir -p "$STAGE/node/main" "$STAGE/node/linux-x64-gnu"
cp bindings-node/npm/linux-x64-gnu/package.json bindings-node/npm/linux-x64-gnu/README.md "$STAGE/node/linux-x64-gnu/"
cp "$OUT/libsnowflake_node.so" "$STAGE/node/linux-x64-gnu/libsnowflake.linux-x64-gnu.node"
# The main package as `napi prepublish` publishes it: the committed package.json plus the
# platform packages as optionalDependencies (the checkout itself lists none, so that working
# on it never fetches a published addon).
for f in $(node -p "require('./bindings-node/package.json').files.join(' ')") package.json; do
  cp "bindings-node/$f" "$STAGE/node/main/"
done
node -e '
  const fs = require("fs");
  const [file, version] = process.argv.slice(1);
  const pkg = JSON.parse(fs.readFileSync(file, "utf8"));
  pkg.optionalDependencies = { "@libsnowflake/linux-x64-gnu": version };
  fs.writeFileSync(file, JSON.stringify(pkg, null, 2) + "\n");
' "$STAGE/node/main/package.json" "$VERSION"
(cd "$STAGE/node/linux-x64-gnu" && npm pack --loglevel=error --pack-destination "$DIST/node" >/dev/null)
(cd "$STAGE/node/main" && npm pack --loglevel=error --pack-destination "$DIST/node" >/dev/null)

# --- PHP: the Composer package with the library ---------------------------------------------
step "php: libsnowflake/snowflake with lib/x86_64-linux-gnu/libsnowflake.so (composer archive)"
PHP_STAGE=$STAGE/php/snowflake
mkdir -p "$STAGE/php"
cp -r ffi-c/php "$PHP_STAGE"
install -D -m 755 "$OUT/libsnowflake.so" "$PHP_STAGE/lib/x86_64-linux-gnu/libsnowflake.so"
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

# --- C and C++: the relocatable tarball and the .deb ---------------------------------------
NAME=libsnowflake-$VERSION-x86_64-linux-gnu
step "c: $NAME.tar.gz"
TREE=$STAGE/c/$NAME
make -s -C ffi-c install-artifacts ARTIFACTS="$OUT" PREFIX="$TREE" RELOCATABLE=1
make -s -C ffi-c install-minimal-artifacts MINIMAL_ARTIFACTS="$OUT_MINIMAL" PREFIX="$TREE" RELOCATABLE=1
# The archives carry Rust's standard library; its debug sections are most of their size and
# no user of a release build needs them.
strip --strip-debug "$TREE/lib/libsnowflake.a" "$TREE/lib/libsnowflake_minimal.a"
install -D -m 755 "$OUT/snowflake" "$TREE/bin/snowflake"
# API.md is the contract docs/c.md points to.
install -D -m 644 README.md CHANGELOG.md LICENSE-MIT LICENSE-APACHE ffi-c/API.md -t "$TREE/share/doc/libsnowflake/"
tar --sort=name --owner=0 --group=0 --numeric-owner -C "$STAGE/c" -czf "$DIST/c/$NAME.tar.gz" "$NAME"

step "c: the .debs, split as Debian splits a library (scripts/deb.sh)"
bash scripts/deb.sh "$OUT" "$OUT_MINIMAL" "$DIST/c"

step "done in $(($(date +%s) - started)) s"
(cd "$DIST" && find . -type f -printf '%s\t%p\n' | sort -k2 | awk -F'\t' '{ printf "%8.1f KiB  %s\n", $1 / 1024, $2 }')
