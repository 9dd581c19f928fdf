#!/usr/bin/env bash
# The PostgreSQL extension's .deb for Debian's PostgreSQL 15 (called by scripts/dist.sh):
#
#   postgresql-15-snowflake_V_amd64.deb   /usr/lib/postgresql/15/lib/snowflake.so,
#                                         /usr/share/postgresql/15/extension/snowflake.control
#                                         and snowflake--V.sql
#
#   bash scripts/deb-pg.sh OUT_DIR
#
# Built by `cargo pgrx package` against the system's pg_config (postgresql-server-dev-15 and
# cargo-pgrx 0.18.0: scripts/install-deps.sh); nothing is downloaded but the crates of
# ffi-pg/Cargo.lock. Its target directory is target/pg (CARGO_TARGET_DIR's pg/ when set), which
# check.sh's build cache holds, so that a run rebuilds only what changed. `CREATE EXTENSION
# snowflake` then works once the server has `shared_preload_libraries = 'snowflake'`
# (docs/postgres.md). tests/pg/run.sh checks the package and installs it.
set -euo pipefail
DEST=$(mkdir -p "$1" && realpath "$1")
cd "$(dirname "$0")/.."
ROOT=$PWD
# shellcheck source=scripts/dist.env
. scripts/dist.env
PG_MAJOR=15
PG_CONFIG=/usr/lib/postgresql/$PG_MAJOR/bin/pg_config
PACKAGE=postgresql-$PG_MAJOR-snowflake
ARCH=amd64
PGRX_VERSION=$(sed -n 's/^pgrx = "=\(.*\)"$/\1/p' ffi-pg/Cargo.toml)
# shellcheck source=scripts/deb-common.sh
. scripts/deb-common.sh

# The extension states the version of the packages (its control file's default_version is
# the crate's): one version, as dist.sh checks for the others.
ext_version=$(python3 -c 'import tomllib; print(tomllib.load(open("ffi-pg/Cargo.toml", "rb"))["package"]["version"])')
[ "$ext_version" = "$VERSION" ] ||
  { echo "deb-pg.sh: ffi-pg/Cargo.toml says version $ext_version, the Cargo workspace $VERSION: make them agree" >&2; exit 1; }
[ -x "$PG_CONFIG" ] || { echo "deb-pg.sh: no $PG_CONFIG: run scripts/install-deps.sh (postgresql-server-dev-$PG_MAJOR)" >&2; exit 1; }
# cargo-pgrx must be the version of ffi-pg's pgrx (its schema generator and the crate agree).
installed=$(cargo pgrx --version 2>/dev/null | awk '{ print $2 }') || true
[ "$installed" = "$PGRX_VERSION" ] ||
  { echo "deb-pg.sh: cargo-pgrx $PGRX_VERSION is needed (found: ${installed:-none}): run scripts/install-deps.sh" >&2; exit 1; }

STAGE=$(mktemp -d "${TMPDIR:-/tmp}/snowflake-deb-pg.XXXXXX")
trap 'rm -rf "$STAGE"' EXIT
ROOTFS=$STAGE/$PACKAGE
(cd ffi-pg && CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}/pg \
  cargo pgrx package --pg-config "$PG_CONFIG" --out-dir "$ROOTFS")
LIB=usr/lib/postgresql/$PG_MAJOR/lib
EXT=usr/share/postgresql/$PG_MAJOR/extension
for f in "$LIB/snowflake.so" "$EXT/snowflake.control" "$EXT/snowflake--$VERSION.sql"; do
  [ -f "$ROOTFS/$f" ] || { echo "deb-pg.sh: cargo pgrx package made no /$f" >&2; exit 1; }
done
leftover=$(cd "$ROOTFS" && find . -type f | grep -v -e "^\./$LIB/snowflake\.so$" -e "^\./$EXT/snowflake\(--$VERSION\.sql\|\.control\)$" || true)
[ -z "$leftover" ] || { echo "deb-pg.sh: cargo pgrx package made files no package expects: $leftover" >&2; exit 1; }
# A shared library, not a program; stripped as dh_strip would (lintian:
# shlib-with-executable-bit, unstripped-binary-or-object). PostgreSQL finds its functions in
# the dynamic symbol table, which --strip-unneeded keeps.
chmod 644 "$ROOTFS/$LIB/snowflake.so"
strip --strip-unneeded --remove-section=.comment "$ROOTFS/$LIB/snowflake.so"

DOC=$ROOTFS/usr/share/doc/$PACKAGE
install -D -m 644 docs/postgres.md "$DOC/postgres.md"
deb_copyright >"$DOC/copyright"
deb_changelog "$DOC/changelog.gz"

# The extension is built with this machine's toolchain against its glibc (not zig's floor, as
# the server it loads into is Debian 12's): the newest glibc symbol version it needs.
GLIBC_NEEDED=$(objdump -T "$ROOTFS/$LIB/snowflake.so" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -V | tail -n 1)
DEPENDS="postgresql-$PG_MAJOR, libc6 (>= $GLIBC_NEEDED)"
if readelf -d "$ROOTFS/$LIB/snowflake.so" | grep -q 'NEEDED.*libgcc_s'; then
  DEPENDS="$DEPENDS, libgcc-s1"
fi
mkdir -p "$ROOTFS/DEBIAN"
cat >"$ROOTFS/DEBIAN/control" <<EOF
Package: $PACKAGE
Source: libsnowflake
Version: $VERSION
Architecture: $ARCH
Maintainer: $MAINTAINER
Installed-Size: $(du -sk --exclude=DEBIAN "$ROOTFS" | cut -f1)
Depends: $DEPENDS
Section: database
Priority: optional
Homepage: https://example.invalid/libsnowflake
Description: Snowflake-style 64-bit time-ordered IDs inside PostgreSQL $PG_MAJOR
 The extension snowflake (CREATE EXTENSION snowflake, with
 shared_preload_libraries = 'snowflake') issues libsnowflake's IDs in the
 server: the same IDs, bit for bit, as the library and the SQL functions of
 snowflake sql, with a lock-free state in shared memory and a WAL-logged
 high-water mark that holds across crashes and promotions.
EOF
(cd "$ROOTFS" && find usr -type f -print0 | sort -z | xargs -0 md5sum >DEBIAN/md5sums)
dpkg-deb --root-owner-group -Zxz --build "$ROOTFS" "$DEST/${PACKAGE}_${VERSION}_$ARCH.deb" >/dev/null
echo "$DEST/${PACKAGE}_${VERSION}_$ARCH.deb"
