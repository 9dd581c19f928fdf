#!/usr/bin/env bash
# The C packages' .debs, split as Debian splits a library (called by scripts/dist.sh):
#
#   libsnowflake<soversion>_V_<arch>.deb  the runtime: libsnowflake.so.<soversion> and its file,
#                                         named after the soname (libsnowflake0.1 for 0.1.x)
#   libsnowflake-dev_V_<arch>.deb         headers, libsnowflake.so (the link), libsnowflake.a,
#                                         libsnowflake_minimal.a, pkg-config, CMake, API.md
#   libsnowflake-tools_V_<arch>.deb       /usr/bin/snowflake, the command line
#
#   bash scripts/deb.sh ARTIFACTS MINIMAL_ARTIFACTS OUT_DIR [ARCH]
#
# ARCH is Debian's architecture of the binaries: amd64 (the default) or arm64.
# ARTIFACTS holds libsnowflake.so, libsnowflake.a and snowflake (the CLI); MINIMAL_ARTIFACTS
# the libsnowflake.a built with `--features minimal`. Each package has its copyright, its
# changelog and md5sums, and passes lintian without errors (tests/dist/run.sh runs it).
set -euo pipefail
OUT=$(realpath "$1")
OUT_MINIMAL=$(realpath "$2")
DEST=$(realpath "$3")
ARCH=${4:-amd64}
cd "$(dirname "$0")/.."
# shellcheck source=scripts/dist.env
. scripts/dist.env

RUNTIME=libsnowflake$SOVERSION
# The architecture's library directory, binutils' strip for its objects, and how this machine
# runs its programs (the manual page is the CLI's --help): arm64's under qemu-user, with the
# multiarch libc6:arm64.
case $ARCH in
  amd64) MULTIARCH=x86_64-linux-gnu STRIP=strip RUN=() ;;
  arm64) MULTIARCH=aarch64-linux-gnu STRIP=aarch64-linux-gnu-strip RUN=(qemu-aarch64-static) ;;
  *) echo "deb.sh: no architecture $ARCH (amd64 or arm64)" >&2; exit 1 ;;
esac
LIBDIR=usr/lib/$MULTIARCH
# shellcheck source=scripts/deb-common.sh
. scripts/deb-common.sh
# The first .deb, with every file in one package, is replaced by the three.
OLD="libsnowflake (<= 0.1.0)"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/snowflake-deb.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# Everything as `make install` lays it out under /usr, then moved into the three packages.
ALL=$WORK/all
make -s -C ffi-c install-artifacts ARTIFACTS="$OUT" PREFIX=/usr LIBDIR="lib/$MULTIARCH" DESTDIR="$ALL"
make -s -C ffi-c install-minimal-artifacts MINIMAL_ARTIFACTS="$OUT_MINIMAL" PREFIX=/usr LIBDIR="lib/$MULTIARCH" DESTDIR="$ALL"
"$STRIP" --strip-debug --remove-section=.comment "$ALL/$LIBDIR/libsnowflake.a" "$ALL/$LIBDIR/libsnowflake_minimal.a"
# A shared library is not a program (lintian: shlib-with-executable-bit). The dist profile
# strips the binaries already; a build of another profile is stripped here, as dh_strip would
# (lintian: unstripped-binary-or-object).
chmod 644 "$ALL/$LIBDIR/libsnowflake.so.$VERSION"
"$STRIP" --strip-unneeded --remove-section=.comment "$ALL/$LIBDIR/libsnowflake.so.$VERSION"

# move <package> <path...>: the paths (relative to /) from the whole tree into the package's.
move() {
  local pkg=$1 path
  shift
  for path in "$@"; do
    mkdir -p "$WORK/$pkg/$(dirname "$path")"
    mv "$ALL/$path" "$WORK/$pkg/$path"
  done
}
move "$RUNTIME" "$LIBDIR/libsnowflake.so.$VERSION" "$LIBDIR/libsnowflake.so.$SOVERSION"
move libsnowflake-dev "$LIBDIR/libsnowflake.so" "$LIBDIR/libsnowflake.a" "$LIBDIR/libsnowflake_minimal.a" \
  "$LIBDIR/pkgconfig" "$LIBDIR/cmake" usr/include
install -D -m 755 "$OUT/snowflake" "$WORK/libsnowflake-tools/usr/bin/snowflake"
"$STRIP" --remove-section=.comment "$WORK/libsnowflake-tools/usr/bin/snowflake"
# `snowflake serve` as a system service (docs/serve.md), installed but not enabled.
install -D -m 644 cli/dist/snowflake-serve.service "$WORK/libsnowflake-tools/lib/systemd/system/snowflake-serve.service"
# Its manual page: what `snowflake --help` says, and where the rest is.
mkdir -p "$WORK/libsnowflake-tools/usr/share/man/man1"
{
  printf '.TH SNOWFLAKE 1 "" "libsnowflake %s" "User Commands"\n' "$VERSION"
  printf '.SH NAME\nsnowflake \\- generate, decode and inspect Snowflake-style 64-bit IDs\n'
  printf '.SH SYNOPSIS\n.B snowflake\n.I COMMAND\n.RI [ OPTIONS ]\n.SH DESCRIPTION\n.nf\n'
  "${RUN[@]}" "$OUT/snowflake" --help | sed -e 's/\\/\\e/g' -e 's/^[.'"'"']/\\\&&/'
  printf '.fi\n.PP\nEach command has its own help: \\fBsnowflake\\fR \\fICOMMAND\\fR \\fB\\-\\-help\\fR.\n'
} | gzip -9n >"$WORK/libsnowflake-tools/usr/share/man/man1/snowflake.1.gz"
install -D -m 644 ffi-c/API.md "$WORK/libsnowflake-dev/usr/share/doc/libsnowflake-dev/API.md"
leftover=$(cd "$ALL" && find . -type f -o -type l)
[ -z "$leftover" ] || { echo "deb.sh: files in no package: $leftover" >&2; exit 1; }

# control <package> <section> <depends> <synopsis> <description (each line indented by one space)>
control() {
  local pkg=$1 section=$2 depends=$3 synopsis=$4 description=$5 multiarch=""
  [ "$section" = utils ] || multiarch="Multi-Arch: same"$'\n'
  mkdir -p "$WORK/$pkg/DEBIAN" "$WORK/$pkg/usr/share/doc/$pkg"
  deb_copyright >"$WORK/$pkg/usr/share/doc/$pkg/copyright"
  deb_changelog "$WORK/$pkg/usr/share/doc/$pkg/changelog.gz"
  cat >"$WORK/$pkg/DEBIAN/control" <<EOF
Package: $pkg
Source: libsnowflake
Version: $VERSION
Architecture: $ARCH
${multiarch}Maintainer: $MAINTAINER
Installed-Size: $(du -sk --exclude=DEBIAN "$WORK/$pkg" | cut -f1)
Depends: $depends
Breaks: $OLD
Replaces: $OLD
Section: $section
Priority: optional
Homepage: https://example.invalid/libsnowflake
Description: $synopsis
$description
EOF
}

# What the shipped binaries link: glibc's libraries, and libgcc_s for unwinding unless zig
# linked its own unwinder in (it does today).
LIBC="libc6 (>= $GLIBC_FLOOR)"
if readelf -d "$OUT/libsnowflake.so" "$OUT/snowflake" | grep -q 'NEEDED.*libgcc_s'; then
  LIBC="$LIBC, libgcc-s1 | libgcc1"
fi
ABOUT=" libsnowflake issues and decodes 64-bit, time-ordered, unique IDs (Twitter,
 Discord, Sonyflake and custom layouts), bit for bit the same as its C++, PHP,
 Python and Node bindings."

control "$RUNTIME" libs "$LIBC" "Snowflake-style 64-bit time-ordered unique IDs (shared library)" "$ABOUT
 .
 This package holds the shared library, libsnowflake.so.$SOVERSION."
echo "libsnowflake $SOVERSION $RUNTIME (>= $VERSION)" >"$WORK/$RUNTIME/DEBIAN/shlibs"
echo "activate-noawait ldconfig" >"$WORK/$RUNTIME/DEBIAN/triggers"

control libsnowflake-dev libdevel "$RUNTIME (= $VERSION), $LIBC" \
  "Snowflake-style 64-bit time-ordered unique IDs (development files)" "$ABOUT
 .
 This package holds the headers snowflake.h, snowflake.hpp (C++17) and
 snowflake_php.h (PHP FFI), the static libraries libsnowflake.a and
 libsnowflake_minimal.a (no leases: no Redis client, no TLS), the pkg-config
 files snowflake.pc and snowflake-minimal.pc, the CMake package
 (find_package(snowflake)) and the API contract, API.md."

control libsnowflake-tools utils "$LIBC" "Snowflake-style 64-bit time-ordered unique IDs (command line)" "$ABOUT
 .
 This package holds the snowflake command, which generates, decodes and
 inspects IDs from the shell, writes the Redis script and PostgreSQL
 functions of a layout, and serves IDs over HTTP (snowflake serve, with a
 systemd unit, snowflake-serve.service, not enabled)."

for pkg in "$RUNTIME" libsnowflake-dev libsnowflake-tools; do
  (cd "$WORK/$pkg" && find usr $([ -d "$WORK/$pkg/lib" ] && echo lib) -type f -print0 | sort -z | xargs -0 md5sum >DEBIAN/md5sums)
  dpkg-deb --root-owner-group -Zxz --build "$WORK/$pkg" "$DEST/${pkg}_${VERSION}_$ARCH.deb" >/dev/null
done
