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
# cargo-pgrx: scripts/install-deps.sh), in ffi-pg's own target directory; nothing is
# downloaded but crates. `CREATE EXTENSION snowflake` then works once the server has
# `shared_preload_libraries = 'snowflake'` (docs/postgres.md).
set -euo pipefail
DEST=$(realpath "$1")
cd "$(dirname "$0")/.."
# shellcheck source=scripts/dist.env
. scripts/dist.env
PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config
PACKAGE=postgresql-15-snowflake
ARCH=amd64

(cd ffi-pg && cargo pgrx package --pg-config "$PG_CONFIG")
TREE=ffi-pg/target/release/snowflake-pg15
[ -f "$TREE/usr/lib/postgresql/15/lib/snowflake.so" ] || { echo "deb-pg.sh: cargo pgrx package made no snowflake.so under $TREE" >&2; exit 1; }

STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT
ROOTFS=$STAGE/$PACKAGE
mkdir -p "$ROOTFS/DEBIAN"
cp -a "$TREE/usr" "$ROOTFS/"
strip --strip-unneeded "$ROOTFS/usr/lib/postgresql/15/lib/snowflake.so"
install -D -m 644 LICENSE-MIT LICENSE-APACHE docs/postgres.md -t "$ROOTFS/usr/share/doc/$PACKAGE/"
DATE=$(date -R -u -d "@$(git log -1 --format=%ct 2>/dev/null || date +%s)")
printf '%s (%s) unstable; urgency=medium\n\n  * Release %s.\n\n -- libsnowflake developers <libsnowflake@example.invalid>  %s\n' \
  "$PACKAGE" "$VERSION" "$VERSION" "$DATE" | gzip -9n >"$ROOTFS/usr/share/doc/$PACKAGE/changelog.Debian.gz"
SIZE=$(du -sk "$ROOTFS/usr" | cut -f1)
cat >"$ROOTFS/DEBIAN/control" <<EOF
Package: $PACKAGE
Version: $VERSION
Architecture: $ARCH
Maintainer: libsnowflake developers <libsnowflake@example.invalid>
Installed-Size: $SIZE
Depends: postgresql-15, libc6 (>= 2.34)
Section: database
Priority: optional
Homepage: https://example.invalid/libsnowflake
Description: Snowflake-style 64-bit time-ordered IDs inside PostgreSQL 15
 The extension snowflake (CREATE EXTENSION snowflake, with
 shared_preload_libraries = 'snowflake') issues libsnowflake's IDs in the
 server: the same IDs, bit for bit, as the library and the SQL of
 `snowflake sql`, with a lock-free state in shared memory and a WAL-logged
 high-water mark that holds across crashes and promotions.
EOF
(cd "$ROOTFS" && find usr -type f -exec md5sum {} + | sort -k2 >DEBIAN/md5sums)
mkdir -p "$DEST"
dpkg-deb --root-owner-group -Zxz --build "$ROOTFS" "$DEST/${PACKAGE}_${VERSION}_$ARCH.deb" >/dev/null
echo "$DEST/${PACKAGE}_${VERSION}_$ARCH.deb"
