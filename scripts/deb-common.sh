# What the project's .debs share, sourced by scripts/deb.sh and scripts/deb-pg.sh: the
# maintainer, the date of the last commit (the changelogs, and so the packages, are
# reproducible), and each package's copyright and changelog. Needs $VERSION (scripts/dist.env).
# shellcheck shell=bash
MAINTAINER="libsnowflake developers <libsnowflake@example.invalid>"
DATE=$(date -R -u -d "@$(git log -1 --format=%ct 2>/dev/null || date +%s)")

# deb_copyright: the copyright file in Debian's machine-readable format; the Apache license is
# in /usr/share/common-licenses on every Debian system, MIT's text goes in whole.
deb_copyright() {
  cat <<COPYRIGHT
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: libsnowflake
Upstream-Contact: $MAINTAINER
Source: https://example.invalid/libsnowflake

Files: *
Copyright: libsnowflake developers
License: MIT or Apache-2.0

License: MIT
COPYRIGHT
  sed -e 's/^$/./' -e 's/^/ /' LICENSE-MIT
  cat <<COPYRIGHT

License: Apache-2.0
 On Debian systems, the full text of the Apache License, Version 2.0 is in
 /usr/share/common-licenses/Apache-2.0.
COPYRIGHT
}

# deb_changelog OUT: the Debian changelog of a native package (source libsnowflake), compressed
# as Debian's tools do (gzip -9n).
deb_changelog() {
  printf '%s (%s) unstable; urgency=medium\n\n  * Release %s: see CHANGELOG.md in the source.\n\n -- %s  %s\n' \
    libsnowflake "$VERSION" "$VERSION" "$MAINTAINER" "$DATE" | gzip -9n >"$1"
}
