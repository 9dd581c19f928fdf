#!/usr/bin/env python3
"""Fails when a binary shipped in dist/ needs a newer glibc than the floor (issue 17).

    python3 tests/dist/glibc_floor.py <dist dir> <floor, e.g. 2.17> [--expect N]

Opens every package in dist/ (wheels and Composer zips, npm and C tarballs, .debs through
dpkg-deb), finds each ELF file inside, and reads its dynamic symbols with `objdump -T`:
- the newest GLIBC_x.y version among them must be at most the floor; this is what the
  dynamic loader checks, and fails on ("version `GLIBC_2.34' not found");
- every undefined symbol must carry a version, be weak (Rust's standard library looks up
  newer functions such as statx at run time), or come from the program that loads the file
  (napi_* from Node, Py* from Python): an unversioned libc symbol would bind to whatever the
  system has, and fail on an older one when called;
- musl binaries (the x86_64-linux-musl packages) need no glibc at all: one whose only C
  library is musl's (`libc.so`, or none: linked statically) is listed as `musl`, and any
  GLIBC symbol in it fails;
- --expect N: exactly N glibc binaries found, --expect-musl M: exactly M musl ones, so that a
  package that lost its binary fails too.

dist/pg/ is not examined: its PostgreSQL extension is built for one system, Debian 12's
postgresql-15, whose headers it needs (scripts/deb-pg.sh): its Depends names the libc6 it
needs, and its undefined symbols are the server's own (tests/pg/run.sh installs and tests it).

Prints one line per binary: `<newest GLIBC symbol>  <package>:<path>`; exits 1 on a failure.
"""
import io
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import zipfile

# tarfile's "data" filter (no absolute paths, links out of the tree or device files), in
# Python 3.11.4 and later; older 3.11 releases extract as they always did.
SAFE = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
ELF_MAGIC = b"\x7fELF"
VERSION = re.compile(r"\bGLIBC_([0-9]+(?:\.[0-9]+)*)\b")
# The symbols the loading program provides, by file kind.
HOST_SYMBOLS = {".node": re.compile(r"^napi_"), ".abi3.so": re.compile(r"^_?Py")}


def as_tuple(version):
    return tuple(int(part) for part in version.split("."))


def binaries(dist, scratch):
    """(label, path) of every ELF file inside the packages of dist/."""
    for dirpath, dirnames, filenames in os.walk(dist):
        if dirpath == dist and "pg" in dirnames:
            dirnames.remove("pg")
        for name in sorted(filenames):
            package = os.path.join(dirpath, name)
            label = os.path.relpath(package, dist)
            out = tempfile.mkdtemp(dir=scratch)
            if name.endswith((".whl", ".zip")):
                with zipfile.ZipFile(package) as z:
                    z.extractall(out)
            elif name.endswith((".tar.gz", ".tgz")):
                with tarfile.open(package) as t:
                    t.extractall(out, **SAFE)
            elif name.endswith(".deb"):
                subprocess.run(["dpkg-deb", "-x", package, out], check=True)
            else:
                continue
            for root, _, files in os.walk(out):
                for f in sorted(files):
                    path = os.path.join(root, f)
                    if os.path.islink(path) or not os.path.isfile(path):
                        continue
                    with open(path, "rb") as fh:
                        if fh.read(4) != ELF_MAGIC:
                            continue
                    yield f"{label}:{os.path.relpath(path, out)}", path


def is_musl(path):
    """Whether the ELF file's C library is musl's: it needs `libc.so` (musl's loader answers to
    that name; glibc's is libc.so.6), or it is a program linked statically (no loader, no
    library: an executable, or a static PIE). A shared library that needs nothing is not
    musl's: it is checked as a glibc one (its undefined symbols must have versions)."""
    dynamic = subprocess.run(["readelf", "-h", "-d", "-l", path], check=True, capture_output=True, text=True).stdout
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dynamic)
    program = re.search(r"Type:\s+EXEC", dynamic) is not None or re.search(r"FLAGS_1\).*\bPIE\b", dynamic) is not None
    static = not needed and "INTERP" not in dynamic and program
    return "libc.so" in needed or "ld-musl" in dynamic or static


def examine(path):
    """(newest glibc version or None, [unversioned strong undefined symbols])."""
    dump = subprocess.run(["objdump", "-T", path], capture_output=True, text=True).stdout
    newest, loose = None, []
    host = next((rx for suffix, rx in HOST_SYMBOLS.items() if path.endswith(suffix)), None)
    for line in dump.splitlines():
        for v in VERSION.findall(line):
            if newest is None or as_tuple(v) > as_tuple(newest):
                newest = v
        if "*UND*" not in line or VERSION.search(line):
            continue
        flags = line[17:25] if len(line) > 25 else ""
        symbol = line.split()[-1]
        if "w" in flags or (host and host.search(symbol)):
            continue
        loose.append(symbol)
    return newest, loose


def main():
    args = sys.argv[1:]
    expect = expect_musl = None
    if "--expect" in args:
        i = args.index("--expect")
        expect = int(args[i + 1])
        del args[i : i + 2]
    if "--expect-musl" in args:
        i = args.index("--expect-musl")
        expect_musl = int(args[i + 1])
        del args[i : i + 2]
    if len(args) != 2:
        sys.exit(__doc__)
    dist, floor = args
    failures = 0
    count = musl = 0
    with tempfile.TemporaryDirectory(prefix="snowflake-glibc-") as scratch:
        for label, path in binaries(dist, scratch):
            if is_musl(path):
                musl += 1
                newest, _ = examine(path)
                verdict = "ok  " if newest is None else "FAIL"
                failures += newest is not None
                print(f"{verdict} musl{'' if newest is None else f' with GLIBC_{newest}'}  {label}")
                continue
            count += 1
            newest, loose = examine(path)
            verdict = "ok  "
            if newest is None:
                verdict, failures = "FAIL", failures + 1
                print(f"FAIL {label}: no GLIBC symbol versions at all (not linked against glibc?)")
            elif as_tuple(newest) > as_tuple(floor):
                verdict, failures = "FAIL", failures + 1
            if loose:
                verdict, failures = "FAIL", failures + 1
                print(f"FAIL {label}: undefined symbols without a version: {' '.join(sorted(loose))}")
            print(f"{verdict} GLIBC_{newest}  {label}")
    if expect is not None and count != expect:
        print(f"FAIL found {count} glibc binaries in {dist}, expected {expect}")
        failures += 1
    if expect_musl is not None and musl != expect_musl:
        print(f"FAIL found {musl} musl binaries in {dist}, expected {expect_musl}")
        failures += 1
    print(f"{count} glibc binaries, floor GLIBC_{floor}, and {musl} musl ones: {'all within it' if not failures else f'{failures} failures'}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
