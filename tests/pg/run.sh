#!/usr/bin/env bash
# The PostgreSQL extension as users get it (issue 42): dist/pg's postgresql-15-snowflake .deb
# (scripts/deb-pg.sh, from scripts/dist.sh) checked as tests/dist checks the other .debs
# (dpkg-deb's fields and contents, lintian without errors), installed with `dpkg -i` onto
# Debian's postgresql-15, and tests/pg/test_extension.py run against servers of
# tests/servers/serve.py that preload the installed library (shared_preload_libraries).
#
# The package stays installed, as a user's would: it is a system package (root, or sudo),
# and a later run replaces it with its own build. Runs of this script at once install one at a
# time (a lock of their own). Needs dist/ (scripts/dist.sh) and .venv's libsnowflake wheel
# (the build step of scripts/check.sh installs it). Ends with `N passed, M failed`.
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
# shellcheck source=scripts/dist.env
. scripts/dist.env
WORK=$(mktemp -d "${TMPDIR:-/tmp}/snowflake-pg-test.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
# shellcheck source=tests/lib.sh
. tests/lib.sh

PACKAGE=postgresql-15-snowflake
DEB=$ROOT/dist/pg/${PACKAGE}_${VERSION}_amd64.deb
PG_LIB=/usr/lib/postgresql/15/lib
PG_EXT=/usr/share/postgresql/15/extension
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo

section "$(basename "$DEB")"
check "scripts/dist.sh wrote dist/pg/$(basename "$DEB")" files_there "$DEB"
stop_if_failed
deb_fields() {
  dpkg-deb --field "$DEB" Package Version Architecture Depends Section &&
    test "$(dpkg-deb --field "$DEB" Package)" = "$PACKAGE" &&
    test "$(dpkg-deb --field "$DEB" Version)" = "$VERSION" &&
    test "$(dpkg-deb --field "$DEB" Architecture)" = amd64 &&
    test "$(dpkg-deb --field "$DEB" Section)" = database &&
    dpkg-deb --field "$DEB" Depends | grep -qE '^postgresql-15, libc6 \(>= [0-9.]+\)'
}
check "dpkg-deb --field: $PACKAGE $VERSION amd64, Section database, Depends postgresql-15 and libc6" deb_fields
deb_contents() {
  local f
  dpkg-deb --contents "$DEB" | awk '{ print $6 }' | grep -v '/$' | sort >"$WORK/contents"
  cat "$WORK/contents"
  # Nothing but the library, the extension's two files and the documentation.
  for f in ".$PG_LIB/snowflake.so" ".$PG_EXT/snowflake.control" ".$PG_EXT/snowflake--$VERSION.sql" \
    "./usr/share/doc/$PACKAGE/copyright" "./usr/share/doc/$PACKAGE/changelog.gz" "./usr/share/doc/$PACKAGE/postgres.md"; do
    grep -qxF "$f" "$WORK/contents" || { echo "missing: $f"; return 1; }
  done
  test "$(wc -l <"$WORK/contents")" = 6 || { echo "files beside those six"; return 1; }
  # The control file names the version the SQL script is for, and the library PostgreSQL loads.
  dpkg-deb --fsys-tarfile "$DEB" | tar -xO ".$PG_EXT/snowflake.control" >"$WORK/control"
  grep -qxF "default_version = '$VERSION'" "$WORK/control" && grep -qxF "module_pathname = '\$libdir/snowflake'" "$WORK/control"
}
check "dpkg-deb --contents: snowflake.so in $PG_LIB, snowflake.control and snowflake--$VERSION.sql in $PG_EXT, copyright, changelog, docs" deb_contents
deb_lintian() {
  local out
  out=$(lintian --tag-display-limit 0 "$DEB" 2>&1 | grep -v "^running with root privileges")
  printf '%s\n' "${out:-(nothing)}"
  ! printf '%s\n' "$out" | grep -q '^E: '
}
check "lintian: no errors" deb_lintian
grep -E '^[EWIP]: ' "$WORK/log" | sed 's/^/     /'

section "dpkg -i onto Debian's postgresql-15"
deb_installs() {
  dpkg -s postgresql-15 | grep -q '^Status: install ok installed' || { echo "postgresql-15 is not installed"; return 1; }
  # One dpkg at a time among this script's runs (dpkg's own lock fails rather than waits).
  flock "${TMPDIR:-/tmp}/libsnowflake-pg-dpkg.lock" $SUDO dpkg -i "$DEB" &&
    dpkg -s "$PACKAGE" | grep -qxF "Version: $VERSION" &&
    dpkg -s "$PACKAGE" | grep -q '^Status: install ok installed' &&
    test "$(dpkg -S "$PG_LIB/snowflake.so")" = "$PACKAGE: $PG_LIB/snowflake.so" &&
    dpkg --verify "$PACKAGE"
}
check "dpkg -i installs $PACKAGE; dpkg -S owns $PG_LIB/snowflake.so; dpkg --verify" deb_installs
stop_if_failed

section "tests/pg/test_extension.py against the installed extension"
# The installed library is the one the servers load: `CREATE EXTENSION` finds the package's
# files through the server's own pg_config paths (serve.py runs /usr/lib/postgresql/15).
newest_pg() { test "$(ls /usr/lib/postgresql | sort -V | tail -n 1)" = 15; }
check "serve.py's PostgreSQL (the newest in /usr/lib/postgresql) is 15, the package's" newest_pg
check "pytest tests/pg/test_extension.py (8 sessions, rollbacks, timeouts, kill -9, a promoted standby, bad input, the vectors)" \
  .venv/bin/python -m pytest tests/pg/test_extension.py -q -p no:cacheprovider -s
grep -E "8 sessions|kill -9|promotion|[0-9]+ passed" "$WORK/log" | sed "s/^/     /"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
