#!/usr/bin/env bash
# The prebuilt packages in dist/ (scripts/dist.sh), installed the way users install them, each
# into a fresh place, with `cargo`, `rustc` and ~/.cargo/bin taken off the PATH (issue 11); and
# the glibc floor of every shipped binary (issue 17). Each install decodes the shared vectors
# (tests/vectors/), gives their public IDs and PostgreSQL SQL (issue 14), and issues IDs:
#
#   glibc     every ELF file in dist/ needs at most GLIBC_$GLIBC_FLOOR (scripts/dist.env);
#   Python    the wheel in new virtualenvs (pip --no-index: nothing is built or fetched), on
#             the oldest and newest CPython here too; the sdist built in another new
#             virtualenv with no network for Cargo (CARGO_NET_OFFLINE, an empty CARGO_HOME);
#             Rust is allowed there;
#   Node      a new npm project installs both tarballs with --ignore-scripts --offline, used
#             from CommonJS and from an ES module; the loader's error on a platform without
#             a prebuilt addon;
#   PHP       a new Composer project requires libsnowflake/snowflake from an artifact
#             repository (dist/php/); the PHP CLI, and a real PHP-FPM preloading it with the
#             php.ini lines of docs/php.md, use the bundled library with no SNOWFLAKE_LIB;
#   C, C++    the tarball unpacked somewhere new: tests/c/test_api.c through pkg-config, the
#             static library, tests/cpp through the CMake package, bin/snowflake; the .deb
#             checked with dpkg-deb, installed into a scratch root, built against, removed.
#
# Prints the time from `pip install` / `npm install` to the first ID, and each package's
# size. Ends with `N passed, M failed`; exits non-zero on any failure. Run scripts/dist.sh
# first (scripts/check.sh does).
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
DIST=$ROOT/dist
VECTORS=$ROOT/tests/vectors
# shellcheck source=scripts/dist.env
. scripts/dist.env
VERSION=$(python3 -c 'import tomllib; print(tomllib.load(open("Cargo.toml", "rb"))["workspace"]["package"]["version"])')
MAJOR=${VERSION%%.*}
MINOR=${VERSION#*.}
MINOR=${MINOR%%.*}
SOVERSION=$MAJOR
if [ "$MAJOR" = 0 ]; then SOVERSION=$MAJOR.$MINOR; fi

WHEEL=$DIST/python/libsnowflake-$VERSION-cp39-abi3-manylinux2014_x86_64.manylinux_2_17_x86_64.whl
SDIST=$DIST/python/libsnowflake-$VERSION.tar.gz
NPM_MAIN=$DIST/node/libsnowflake-$VERSION.tgz
NPM_PLATFORM=$DIST/node/libsnowflake-linux-x64-gnu-$VERSION.tgz
COMPOSER_ZIP=$DIST/php/libsnowflake-snowflake-$VERSION.zip
TARBALL_NAME=libsnowflake-$VERSION-x86_64-linux-gnu
TARBALL=$DIST/c/$TARBALL_NAME.tar.gz
DEB=$DIST/c/libsnowflake_${VERSION}_amd64.deb

WORK=$(mktemp -d "${TMPDIR:-/tmp}/snowflake-dist-test.XXXXXX")
chmod 755 "$WORK" # PHP-FPM's workers (user nobody when we are root) read the project here
FPM_PID=""
cleanup() {
  if [ -n "$FPM_PID" ]; then
    kill -TERM "$FPM_PID" 2>/dev/null
    for _ in $(seq 50); do kill -0 "$FPM_PID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$FPM_PID" 2>/dev/null
    wait "$FPM_PID" 2>/dev/null
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Isolation from other test runs on this machine: shared states, leases and the CLI's run
# locks (in $TMPDIR) all go to this run's directory.
export SNOWFLAKE_SHM_DIR=$WORK/shm TMPDIR=$WORK/tmp
mkdir -m 700 "$SNOWFLAKE_SHM_DIR" "$TMPDIR"
unset SNOWFLAKE_LIB SNOWFLAKE_HEADER

# check, program, says, section, no_rust: tests/dist/lib.sh (shared with tests/dist/platforms.sh).
# shellcheck source=tests/dist/lib.sh
. tests/dist/lib.sh

# --- the packages ----------------------------------------------------------------------------
section "dist/ (version $VERSION)"
all_there() {
  local f missing=0
  for f in "$WHEEL" "$SDIST" "$NPM_MAIN" "$NPM_PLATFORM" "$COMPOSER_ZIP" "$TARBALL" "$DEB"; do
    [ -f "$f" ] || { echo "missing: $f (run scripts/dist.sh)"; missing=1; }
  done
  return $missing
}
check "scripts/dist.sh wrote all 7 packages of version $VERSION" all_there
if [ "$failed" -ne 0 ]; then
  echo "$passed passed, $failed failed"
  exit 1
fi
check "the install tests' PATH has no cargo or rustc" rust_is_gone
docs_state_the_floor() {
  local page ok=0
  for page in README.md docs/python.md docs/node.md docs/php.md docs/c.md docs/cli.md; do
    grep -q "glibc $GLIBC_FLOOR or later" "$page" || { echo "$page does not say: glibc $GLIBC_FLOOR or later"; ok=1; }
  done
  return $ok
}
check "README.md and every docs/ page say which systems the packages support (glibc $GLIBC_FLOOR or later)" docs_state_the_floor

# --- glibc floor -----------------------------------------------------------------------------
# Seven glibc binaries a glibc platform (the wheel's, the .node, the Composer package's, the
# tarball's library and CLI, the .deb's), five musl ones for musl (no .deb).
GLIBC_BINARIES=7
MUSL_BINARIES=0
[[ " $DIST_PLATFORMS " != *" aarch64-linux-gnu "* ]] || GLIBC_BINARIES=14
[[ " $DIST_PLATFORMS " != *" x86_64-linux-musl "* ]] || MUSL_BINARIES=5
section "glibc: every shipped binary within GLIBC_$GLIBC_FLOOR"
check "wheel, .node, Composer .so, tarball .so and CLI, .deb .so and CLI: at most GLIBC_$GLIBC_FLOOR, no unversioned libc symbol" \
  python3 tests/dist/glibc_floor.py "$DIST" "$GLIBC_FLOOR" --expect "$GLIBC_BINARIES" --expect-musl "$MUSL_BINARIES"
cat "$WORK/log" | grep -E '^(ok|FAIL) +(GLIBC|musl)' | sed 's/^/     /'
# The check can fail: below the floor the same binaries are refused, and so is a library
# with an undefined symbol that has no version.
floor_check_fails() {
  local fake=$WORK/fake-dist
  mkdir -p "$fake/c" "$fake/lib"
  printf 'extern void not_in_any_library(void);\nvoid f(void) { not_in_any_library(); }\n' >"$fake/x.c"
  gcc -shared -fPIC -o "$fake/lib/libloose.so" "$fake/x.c" || return 1
  tar -C "$fake" -czf "$fake/c/loose.tar.gz" lib
  rm -rf "$fake/lib" "$fake/x.c"
  ! python3 tests/dist/glibc_floor.py "$DIST" 2.16 >"$WORK/below" &&
    grep -q "FAIL GLIBC_$GLIBC_FLOOR" "$WORK/below" &&
    ! python3 tests/dist/glibc_floor.py "$fake" 99.0 >"$WORK/loose" &&
    grep -q "without a version: not_in_any_library" "$WORK/loose"
}
check "the check fails below the floor, and on an unversioned undefined symbol" floor_check_fails

# --- Python ----------------------------------------------------------------------------------
section "Python: $(basename "$WHEEL")"
PY_T0=0
PY_MS=""
wheel_installs() {
  python3 -m venv "$WORK/py-wheel" || return 1
  PY_T0=$(now_ms)
  no_rust "$WORK/py-wheel/bin/pip" install --quiet --no-index "$WHEEL" &&
    (cd "$WORK" && no_rust "$WORK/py-wheel/bin/python" -c 'import libsnowflake; libsnowflake.Generator().next_id()') &&
    PY_MS=$(($(now_ms) - PY_T0))
}
check "a new virtualenv installs the wheel (pip install --no-index, no Rust)" wheel_installs
[ -n "$PY_MS" ] && echo "     pip install to the first ID: $PY_MS ms"
check "the wheel's Python decodes the shared vectors and issues IDs" \
  says "^ok $VERSION [0-9]+ vectors, 10000 IDs from $WORK/py-wheel/" \
  bash -c "cd '$WORK' && PATH='$NORUST_PATH' '$WORK/py-wheel/bin/python' '$ROOT/tests/dist/check.py' '$VECTORS' '$VERSION'"
# abi3: one wheel for every CPython >= 3.9; the oldest and newest this machine has get it too.
other_pythons=()
for py in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.*/bin/python3; do
  [ -x "$py" ] && "$py" -c 'import sys; sys.exit(sys.version_info < (3, 9))' 2>/dev/null && other_pythons+=("$py")
done
if [ ${#other_pythons[@]} -gt 0 ]; then
  mapfile -t sorted < <(for py in "${other_pythons[@]}"; do echo "$("$py" -c 'import sys; print("%d.%03d" % sys.version_info[:2])') $py"; done | sort)
  for entry in "${sorted[0]}" "${sorted[${#sorted[@]}-1]}"; do
    py=${entry#* }
    v=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
    [ -d "$WORK/py-$v" ] && continue
    check "the wheel on CPython $v: installs and passes check.py" bash -c "
      '$py' -m venv '$WORK/py-$v' && PATH='$NORUST_PATH' '$WORK/py-$v/bin/pip' install --quiet --no-index '$WHEEL' &&
      cd '$WORK' && PATH='$NORUST_PATH' '$WORK/py-$v/bin/python' '$ROOT/tests/dist/check.py' '$VECTORS' '$VERSION'"
  done
fi

section "Python: $(basename "$SDIST") (built from source, offline)"
sdist_builds_offline() {
  local home=$WORK/cargo-home
  mkdir -p "$home"
  python3 -m venv "$WORK/py-sdist" &&
    # The build backend from PyPI, as pip's build isolation would fetch it; then the build
    # itself with nothing to fetch: no index, no Cargo network, no Cargo cache.
    "$WORK/py-sdist/bin/pip" install --quiet "maturin>=1.5,<2" &&
    PATH="$WORK/py-sdist/bin:$HOME/.cargo/bin:$PATH" CARGO_HOME=$home RUSTUP_HOME=${RUSTUP_HOME:-$HOME/.rustup} CARGO_NET_OFFLINE=true \
      "$WORK/py-sdist/bin/pip" install --quiet --no-index --no-build-isolation "$SDIST" &&
    test ! -e "$home/registry" && test ! -e "$home/git"
}
check "a new virtualenv builds the sdist with CARGO_NET_OFFLINE=true and an empty CARGO_HOME" sdist_builds_offline
check "the sdist's build decodes the shared vectors and issues IDs" \
  says "^ok $VERSION [0-9]+ vectors, 10000 IDs from $WORK/py-sdist/" \
  bash -c "cd '$WORK' && '$WORK/py-sdist/bin/python' '$ROOT/tests/dist/check.py' '$VECTORS' '$VERSION'"

# --- Node ------------------------------------------------------------------------------------
section "Node: $(basename "$NPM_MAIN"), $(basename "$NPM_PLATFORM")"
NODE_PROJECT=$WORK/node-project
NODE_MS=""
manifests_are_napi_rs() {
  node - "$NPM_MAIN" "$NPM_PLATFORM" "$VERSION" $(for p in x86_64-linux-gnu $DIST_PLATFORMS; do echo "${NAPI_NAME[$p]}"; done) <<'JS'
const { execFileSync } = require('node:child_process');
const assert = require('node:assert/strict');
const [main, platform, version, ...platforms] = process.argv.slice(2);
const manifest = (tgz) => JSON.parse(execFileSync('tar', ['-xzOf', tgz, 'package/package.json'], { encoding: 'utf8' }));
const list = (tgz) => execFileSync('tar', ['-tzf', tgz], { encoding: 'utf8' }).trim().split('\n').sort();
const m = manifest(main);
assert.equal(m.name, 'libsnowflake');
assert.equal(m.version, version);
assert.deepEqual(m.optionalDependencies, Object.fromEntries(platforms.map((n) => [`@libsnowflake/${n}`, version])));
for (const s of ['preinstall', 'install', 'postinstall', 'prepare']) assert.equal((m.scripts || {})[s], undefined, s);
assert.ok(!list(main).some((f) => f.endsWith('.node')), 'the main package carries no addon');
const p = manifest(platform);
assert.equal(p.name, '@libsnowflake/linux-x64-gnu');
assert.equal(p.version, version);
assert.deepEqual([p.os, p.cpu, p.libc], [['linux'], ['x64'], ['glibc']]);
assert.equal(p.main, 'libsnowflake.linux-x64-gnu.node');
assert.ok(list(platform).includes('package/libsnowflake.linux-x64-gnu.node'));
JS
}
check "libsnowflake lists every platform's package (@libsnowflake/linux-x64-gnu@$VERSION, ...) as optional, has no install script; the platform package holds the addon" \
  manifests_are_napi_rs
npm_installs() {
  mkdir -p "$NODE_PROJECT" &&
    echo '{ "name": "consumer", "version": "1.0.0", "private": true }' >"$NODE_PROJECT/package.json" &&
    cp tests/dist/vectors.cjs tests/dist/check.cjs tests/dist/check.mjs "$NODE_PROJECT/" || return 1
  local t0
  t0=$(now_ms)
  (cd "$NODE_PROJECT" &&
    no_rust npm install --ignore-scripts --offline --no-audit --no-fund --loglevel=error "$NPM_MAIN" "$NPM_PLATFORM" &&
    no_rust node -e "new (require('libsnowflake').Generator)({ layout: 'twitter' }).nextId()") &&
    NODE_MS=$(($(now_ms) - t0))
}
check "a new npm project installs both tarballs (npm install --ignore-scripts --offline, no Rust)" npm_installs
[ -n "$NODE_MS" ] && echo "     npm install to the first ID: $NODE_MS ms"
check "CommonJS: require('libsnowflake') decodes the shared vectors and issues IDs" \
  says "^ok cjs $VERSION [0-9]+ vectors, 10000 IDs from $NODE_PROJECT/node_modules/libsnowflake/index.js" \
  bash -c "cd '$NODE_PROJECT' && PATH='$NORUST_PATH' node check.cjs '$VECTORS' '$VERSION'"
check "ES module: import from 'libsnowflake' decodes the shared vectors and issues IDs" \
  says "^ok esm $VERSION [0-9]+ vectors, 10000 IDs from file://$NODE_PROJECT/node_modules/libsnowflake/index.mjs" \
  bash -c "cd '$NODE_PROJECT' && PATH='$NORUST_PATH' node check.mjs '$VECTORS' '$VERSION'"
other_platform_is_told() {
  printf "Object.defineProperty(process, 'arch', { value: 'riscv64' });\n" >"$WORK/riscv.cjs"
  (cd "$NODE_PROJECT" && no_rust node -r "$WORK/riscv.cjs" -e "
    try { require('libsnowflake'); } catch (e) { console.log(e.code + ': ' + e.message); process.exit(0); }
    process.exit(1);") >"$WORK/err" || return 1
  cat "$WORK/err"
  grep -q '^ERR_SNOWFLAKE_NO_ADDON: .*(linux-riscv64-gnu).*npm run build' "$WORK/err"
}
check "on a platform without a prebuilt addon, require() names the platform and how to build from source" \
  other_platform_is_told

# --- PHP -------------------------------------------------------------------------------------
section "PHP: $(basename "$COMPOSER_ZIP")"
PHP_PROJECT=$WORK/php-project
PACKAGE=$PHP_PROJECT/vendor/libsnowflake/snowflake
BUNDLED=$PACKAGE/lib/x86_64-linux-gnu/libsnowflake.so
composer_requires() {
  mkdir -p "$PHP_PROJECT" &&
    # Packagist is not reachable here, and not needed: the artifact repository is dist/php/.
    cat >"$PHP_PROJECT/composer.json" <<EOF &&
{
    "name": "test/consumer",
    "repositories": [{ "type": "artifact", "url": "$DIST/php/" }, { "packagist.org": false }]
}
EOF
    (cd "$PHP_PROJECT" && no_rust env COMPOSER_ALLOW_SUPERUSER=1 COMPOSER_HOME="$WORK/composer-home" \
      COMPOSER_CACHE_DIR="$WORK/composer-cache" composer require --no-interaction libsnowflake/snowflake) &&
    test -f "$BUNDLED" && test -f "$PACKAGE/include/snowflake_php.h" &&
    grep -q "\"libsnowflake/snowflake\": \"^$VERSION\"" "$PHP_PROJECT/composer.json" &&
    chmod -R a+rX "$PHP_PROJECT"
}
check "a new Composer project: composer require libsnowflake/snowflake from the artifact repository dist/php/" composer_requires
check "PHP CLI: the bundled library (no SNOWFLAKE_LIB) decodes the shared vectors and issues IDs" \
  says "^ok cli cdef $VERSION [0-9]+ vectors, 10000 IDs, library $BUNDLED$" \
  bash -c "cd '$PHP_PROJECT' && PATH='$NORUST_PATH' php '$ROOT/tests/dist/check.php' '$PHP_PROJECT' '$VECTORS' '$VERSION'"

# PHP-FPM with the preload recipe of docs/php.md, pointed at this project: the header from
# bin/snowflake-preload-header (its FFI_LIB the bundled library), preload.php from vendor/.
FPM_DIR=$WORK/fpm
fpm_serves() {
  local fpm user=www-data pool_user=""
  fpm=$(command -v php-fpm8.2 || command -v php-fpm) || { echo "php-fpm8.2 is missing (scripts/install-deps.sh)"; return 1; }
  command -v cgi-fcgi >/dev/null || { echo "cgi-fcgi is missing (libfcgi-bin, scripts/install-deps.sh)"; return 1; }
  mkdir -m 755 "$FPM_DIR" && mkdir -m 700 "$FPM_DIR/shm" || return 1
  (cd "$PHP_PROJECT" && no_rust php vendor/libsnowflake/snowflake/bin/snowflake-preload-header) >"$FPM_DIR/snowflake.h" || return 1
  chmod 644 "$FPM_DIR/snowflake.h"
  grep -qx "#define FFI_LIB \"$BUNDLED\"" "$FPM_DIR/snowflake.h" || { head -3 "$FPM_DIR/snowflake.h"; return 1; }
  if [ "$(id -u)" = 0 ]; then
    user=nobody
    chown nobody:nogroup "$FPM_DIR/shm"
    pool_user=$'user = nobody\ngroup = nogroup'
  fi
  sed -n '/^```ini$/,/^```$/p' docs/php.md | sed '1d;$d' |
    sed -e "s|^ffi.preload = .*|ffi.preload = $FPM_DIR/snowflake.h|" \
      -e "s|^opcache.preload = /var/www/vendor/|opcache.preload = $PHP_PROJECT/vendor/|" \
      -e "s|^opcache.preload_user = .*|opcache.preload_user = $user|" >"$FPM_DIR/php.ini"
  grep -q "^opcache.preload = $PACKAGE/preload.php$" "$FPM_DIR/php.ini" || { cat "$FPM_DIR/php.ini"; return 1; }
  cat >"$FPM_DIR/fpm.conf" <<EOF
[global]
error_log = $FPM_DIR/fpm.log
pid = $FPM_DIR/fpm.pid
daemonize = no
[www]
$pool_user
listen = $FPM_DIR/fpm.sock
listen.mode = 0666
pm = static
pm.max_children = 2
catch_workers_output = yes
clear_env = yes
env[SNOWFLAKE_SHM_DIR] = $FPM_DIR/shm
EOF
  # Not through no_rust: a function sent to the background is a subshell, and $! would be
  # that subshell's, not php-fpm's, which then outlived the test.
  env PATH="$NORUST_PATH" "$fpm" -c "$FPM_DIR/php.ini" -y "$FPM_DIR/fpm.conf" -F -O >"$FPM_DIR/fpm.out" 2>&1 &
  FPM_PID=$!
  for _ in $(seq 100); do
    [ -S "$FPM_DIR/fpm.sock" ] && break
    kill -0 "$FPM_PID" 2>/dev/null || break
    sleep 0.1
  done
  [ -S "$FPM_DIR/fpm.sock" ] || { cat "$FPM_DIR/fpm.out" "$FPM_DIR/fpm.log" 2>/dev/null; return 1; }
  cp tests/dist/check.php "$FPM_DIR/check.php" && chmod 644 "$FPM_DIR/check.php"
  local i
  for i in 1 2 3; do
    SCRIPT_FILENAME=$FPM_DIR/check.php REQUEST_METHOD=GET SERVER_PROTOCOL=HTTP/1.1 \
      QUERY_STRING="vectors=$VECTORS&version=$VERSION" cgi-fcgi -bind -connect "$FPM_DIR/fpm.sock" >"$FPM_DIR/response" || return 1
    cat "$FPM_DIR/response"
    grep -Eq "^ok fpm-fcgi preload $VERSION [0-9]+ vectors, 10000 IDs" "$FPM_DIR/response" || return 1
  done
}
check "PHP-FPM preloading the package (docs/php.md's php.ini): the bundled library decodes the shared vectors and issues IDs" \
  fpm_serves

# --- C and C++: the tarball ----------------------------------------------------------------
section "C and C++: $(basename "$TARBALL")"
# Unpacked somewhere else than where it was made: it must find itself from there.
C_PREFIX=$WORK/somewhere/else/$TARBALL_NAME
tarball_layout() {
  mkdir -p "$WORK/somewhere/else" && tar -C "$WORK/somewhere/else" -xzf "$TARBALL" || return 1
  local lib=$C_PREFIX/lib
  test -f "$lib/libsnowflake.so.$VERSION" && test -L "$lib/libsnowflake.so.$SOVERSION" && test -L "$lib/libsnowflake.so" &&
    test "$(readlink "$lib/libsnowflake.so.$SOVERSION")" = "libsnowflake.so.$VERSION" &&
    test "$(readlink "$lib/libsnowflake.so")" = "libsnowflake.so.$SOVERSION" &&
    readelf -d "$lib/libsnowflake.so.$VERSION" | grep -q "SONAME.*\[libsnowflake.so.$SOVERSION\]" &&
    test -f "$lib/libsnowflake.a" && test -f "$lib/pkgconfig/snowflake.pc" &&
    test -f "$lib/cmake/snowflake/snowflake-config.cmake" && test -f "$lib/cmake/snowflake/snowflake-config-version.cmake" &&
    test -f "$C_PREFIX/include/snowflake.h" && test -f "$C_PREFIX/include/snowflake.hpp" &&
    test -f "$C_PREFIX/include/snowflake_php.h" && test -x "$C_PREFIX/bin/snowflake" &&
    PKG_CONFIG_PATH=$lib/pkgconfig pkg-config --exact-version="$VERSION" snowflake &&
    test "$(PKG_CONFIG_PATH=$lib/pkgconfig pkg-config --variable=libdir snowflake)" -ef "$lib"
}
check "unpacked elsewhere: lib/ (libsnowflake.so.$VERSION, soname .so.$SOVERSION, links, .a), include/, bin/snowflake; snowflake.pc finds its prefix" \
  tarball_layout
export PKG_CONFIG_PATH=$C_PREFIX/lib/pkgconfig
check "tests/c/test_api.c builds against the tarball through pkg-config" \
  gcc -std=c99 -Wall -Wextra -Werror -pedantic $(pkg-config --cflags snowflake libcjson) tests/c/test_api.c \
  -o "$WORK/test_api" $(pkg-config --libs snowflake libcjson) -pthread -Wl,-rpath,"$C_PREFIX/lib"
program "test_api against the tarball's libsnowflake.so: vectors, errors, threads, fork" \
  no_rust "$WORK/test_api" "$VECTORS" 20000
check "tests/c/example.c links the tarball's libsnowflake.a (pkg-config static_libs) and runs" bash -c "
  gcc -std=c99 -Wall -Wextra -Werror -pedantic \$(pkg-config --cflags snowflake) tests/c/example.c -o '$WORK/example_static' \
    \$(pkg-config --variable=static_libs snowflake) && ! ldd '$WORK/example_static' | grep -q libsnowflake &&
  PATH='$NORUST_PATH' '$WORK/example_static' | grep -q 'ERR_SNOWFLAKE_VALUE: worker = 99'"
check "C++: tests/cpp builds against the tarball through its CMake package" bash -c "
  cmake -S tests/cpp -B '$WORK/cpp' -DCMAKE_PREFIX_PATH='$C_PREFIX' -DCMAKE_BUILD_TYPE=Release >/dev/null &&
  cmake --build '$WORK/cpp' -j 2"
program "test_cpp against the tarball: vectors, exceptions, RAII, threads" no_rust "$WORK/cpp/test_cpp" "$VECTORS"
check "C++: example_cpp_static (libsnowflake.a through CMake) runs" says "ERR_SNOWFLAKE_VALUE: worker = 99" \
  no_rust "$WORK/cpp/example_cpp_static"
check "bin/snowflake --help runs with no Rust on the PATH" says "^Usage: snowflake <COMMAND>" no_rust "$C_PREFIX/bin/snowflake" --help
check "bin/snowflake --version is $VERSION" says "^snowflake $VERSION$" no_rust "$C_PREFIX/bin/snowflake" --version
check "bin/snowflake decode: Discord's published ID 175928847299117063" \
  says "^175928847299117063  2016-04-30T11:18:25.796Z  worker=1 process=0 sequence=7$" \
  no_rust "$C_PREFIX/bin/snowflake" decode --layout discord 175928847299117063
# Issue 14 through the shipped CLI: the shared vectors' public IDs both ways (key from a file,
# as the CLI requires) and core's PostgreSQL SQL for twitter.
cli_public_and_sql() {
  python3 - "$VECTORS" "$WORK" <<'PY' || return 1
import json, sys
from pathlib import Path
vectors, work = Path(sys.argv[1]), Path(sys.argv[2])
row = json.loads((vectors / "public_ids.json").read_text())["keys"][0]
assert row["encoding"] == "base62"
(work / "public.key").write_text(row["key_hex"] + "\n")
(work / "public.ids").write_text("".join(c["id"] + "\n" for c in row["cases"]))
(work / "public.texts").write_text("".join(c["text"] + "\n" for c in row["cases"]))
script = next(s for s in json.loads((vectors / "sql_scripts.json").read_text())["scripts"] if s["spec"] == "twitter")
(work / "twitter.sql").write_text(script["sql"])
PY
  no_rust "$C_PREFIX/bin/snowflake" public encode --key-file "$WORK/public.key" <"$WORK/public.ids" | diff - "$WORK/public.texts" &&
    no_rust "$C_PREFIX/bin/snowflake" public decode --key-file "$WORK/public.key" <"$WORK/public.texts" | diff - "$WORK/public.ids" &&
    no_rust "$C_PREFIX/bin/snowflake" sql --layout twitter | cmp - "$WORK/twitter.sql"
}
check "bin/snowflake public encode|decode --key-file: the shared public-ID vectors; bin/snowflake sql: core's SQL" \
  cli_public_and_sql
cli_next() {
  no_rust "$C_PREFIX/bin/snowflake" next -n 1000 >"$WORK/cli-ids" &&
    test "$(sort -n -u "$WORK/cli-ids" | wc -l)" = 1000 && sort -n -c "$WORK/cli-ids"
}
check "bin/snowflake next -n 1000: 1000 increasing IDs" cli_next

# --- C: the .deb -----------------------------------------------------------------------------
section "C: $(basename "$DEB")"
deb_fields() {
  dpkg-deb --field "$DEB" Package Version Architecture Depends &&
    test "$(dpkg-deb --field "$DEB" Package)" = libsnowflake &&
    test "$(dpkg-deb --field "$DEB" Version)" = "$VERSION" &&
    test "$(dpkg-deb --field "$DEB" Architecture)" = amd64 &&
    dpkg-deb --field "$DEB" Depends | grep -q "libc6 (>= $GLIBC_FLOOR)"
}
check "dpkg-deb --field: libsnowflake $VERSION amd64, Depends libc6 (>= $GLIBC_FLOOR)" deb_fields
deb_contents() {
  local lib=./usr/lib/x86_64-linux-gnu f
  dpkg-deb --contents "$DEB" | awk '{ print $6 ($7 ? " " $7 " " $8 : "") }' >"$WORK/deb-contents"
  cat "$WORK/deb-contents"
  for f in "$lib/libsnowflake.so.$VERSION" "$lib/libsnowflake.so.$SOVERSION -> libsnowflake.so.$VERSION" \
    "$lib/libsnowflake.so -> libsnowflake.so.$SOVERSION" "$lib/libsnowflake.a" "$lib/pkgconfig/snowflake.pc" \
    "$lib/cmake/snowflake/snowflake-config.cmake" "$lib/cmake/snowflake/snowflake-config-version.cmake" \
    ./usr/include/snowflake.h ./usr/include/snowflake.hpp ./usr/include/snowflake_php.h ./usr/bin/snowflake \
    ./usr/share/doc/libsnowflake/copyright; do
    grep -qxF "$f" "$WORK/deb-contents" || { echo "missing: $f"; return 1; }
  done
  ! grep -v '^\./usr/' "$WORK/deb-contents" | grep -qv '^\./$'
}
check "dpkg-deb --contents: the library, its links, headers, pkg-config, CMake and /usr/bin/snowflake, all under /usr" deb_contents

DEB_ROOT=$WORK/scratch-root
deb_installs() {
  mkdir -p "$DEB_ROOT/var/lib/dpkg/info" "$DEB_ROOT/var/lib/dpkg/updates" "$DEB_ROOT/var/lib/dpkg/triggers" &&
    touch "$DEB_ROOT/var/lib/dpkg/status" "$DEB_ROOT/var/lib/dpkg/available" &&
    # The scratch root has no libc6 package of its own: its dependency is the host's.
    dpkg --root="$DEB_ROOT" --force-depends --force-not-root --force-script-chrootless -i "$DEB" &&
    dpkg --root="$DEB_ROOT" -s libsnowflake | grep -q '^Status: install ok installed' &&
    test -x "$DEB_ROOT/usr/bin/snowflake"
}
check "dpkg --root=<scratch> -i installs it" deb_installs
deb_is_usable() {
  local pc=$DEB_ROOT/usr/lib/x86_64-linux-gnu/pkgconfig
  # pkg-config's sysroot: the .pc says /usr, which lives under the scratch root here (and
  # would drop /usr/include and /usr/lib as system directories, unless told not to).
  local pkg=(env PKG_CONFIG_PATH= PKG_CONFIG_LIBDIR="$pc" PKG_CONFIG_SYSROOT_DIR="$DEB_ROOT"
    PKG_CONFIG_ALLOW_SYSTEM_CFLAGS=1 PKG_CONFIG_ALLOW_SYSTEM_LIBS=1 pkg-config)
  gcc -std=c99 -Wall -Wextra -Werror -pedantic $("${pkg[@]}" --cflags snowflake) tests/c/example.c \
    -o "$WORK/example_deb" $("${pkg[@]}" --libs snowflake) &&
    LD_LIBRARY_PATH=$DEB_ROOT/usr/lib/x86_64-linux-gnu no_rust "$WORK/example_deb" | grep -q 'ERR_SNOWFLAKE_VALUE: worker = 99' &&
    cmake -S tests/cpp/example -B "$WORK/example-deb-cmake" -DCMAKE_PREFIX_PATH="$DEB_ROOT/usr" >/dev/null &&
    cmake --build "$WORK/example-deb-cmake" >/dev/null &&
    no_rust "$WORK/example-deb-cmake/example" | grep -q 'ERR_SNOWFLAKE_VALUE: worker = 99' &&
    no_rust "$DEB_ROOT/usr/bin/snowflake" --help | grep -q '^Usage: snowflake <COMMAND>'
}
check "installed: example.c through pkg-config, the CMake example, /usr/bin/snowflake --help" deb_is_usable
deb_removes() {
  dpkg --root="$DEB_ROOT" --force-not-root --force-script-chrootless -r libsnowflake &&
    test -z "$(find "$DEB_ROOT/usr" -type f -o -type l 2>/dev/null)"
}
check "dpkg -r removes every file it installed" deb_removes

# --- sizes -----------------------------------------------------------------------------------
section "sizes"
for f in "$WHEEL" "$SDIST" "$NPM_MAIN" "$NPM_PLATFORM" "$COMPOSER_ZIP" "$TARBALL" "$DEB"; do
  awk -v size="$(stat -c %s "$f")" -v name="${f#"$ROOT"/}" 'BEGIN { printf "     %8.1f KiB  %s\n", size / 1024, name }'
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
