#!/usr/bin/env python3
"""Adds the crates an sdist needs to it, so that `pip install libsnowflake-X.tar.gz` builds
with no network: `cargo vendor` into vendor/, and a .cargo/config.toml that points crates.io
there (the layout maturin's issue #457 and setuptools-rust#112 describe; maturin has no
option for it yet).

    python3 scripts/vendor-sdist.py <maturin's sdist .tar.gz> <output directory>

maturin's sdist holds a workspace of its own (the binding and the crates it reaches by path)
with the repository's Cargo.lock. Before vendoring, the dev-dependencies of its members go:
they build only tests and benchmarks, which pip never builds, and they would add tens of
megabytes of crates (a benchmark harness and its plotting stack) that Cargo would otherwise
need to resolve. cargo vendor then keeps exactly the locked versions the package builds with.
"""
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import tomllib

# tarfile's "data" filter (no absolute paths, links out of the tree or device files), in
# Python 3.11.4 and later; older 3.11 releases extract as they always did.
SAFE = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
CARGO_CONFIG = """\
# Written by scripts/vendor-sdist.py: every crate this package builds with is in vendor/, at
# the version Cargo.lock pins, so pip builds it with no network and no crates.io index.
[source.crates-io]
replace-with = "vendored-sources"

[source.vendored-sources]
directory = "vendor"
"""

# A [dev-dependencies] table, its target-specific form, or a dotted one such as
# [dev-dependencies.foo]: the header line up to the next table header.
DEV_TABLE = re.compile(
    r"^\[(?:target\.[^\]]+\.)?dev-dependencies(?:\.[^\]]+)?\]\n(?:(?!\[).*\n?)*", re.MULTILINE
)


def drop_dev_dependencies(manifest):
    with open(manifest) as f:
        text = f.read()
    stripped = DEV_TABLE.sub("", text)
    if stripped != text:
        # Kept as a comment, so that a reader of the sdist sees why tests do not build here.
        stripped += (
            "\n# scripts/vendor-sdist.py removed the dev-dependencies: this source distribution\n"
            "# builds the Python extension only, from vendored crates.\n"
        )
        with open(manifest, "w") as f:
            f.write(stripped)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sdist, out_dir = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory(prefix="snowflake-sdist-") as tmp:
        with tarfile.open(sdist) as tar:
            tar.extractall(tmp, **SAFE)
        (top,) = os.listdir(tmp)
        root = os.path.join(tmp, top)
        with open(os.path.join(root, "Cargo.toml"), "rb") as f:
            members = tomllib.load(f)["workspace"]["members"]
        for member in members:
            drop_dev_dependencies(os.path.join(root, member, "Cargo.toml"))
        # cargo vendor prunes the lock file to the crates still needed and copies those.
        subprocess.run(
            ["cargo", "vendor", "--quiet", "--versioned-dirs", "vendor"],
            cwd=root,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        os.makedirs(os.path.join(root, ".cargo"), exist_ok=True)
        with open(os.path.join(root, ".cargo", "config.toml"), "w") as f:
            f.write(CARGO_CONFIG)

        # PKG-INFO first, as in maturin's own archive; then every file in a stable order.
        os.makedirs(out_dir, exist_ok=True)
        target = os.path.join(out_dir, os.path.basename(sdist))
        paths = []
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames.sort()
            for name in sorted(filenames):
                paths.append(os.path.relpath(os.path.join(dirpath, name), tmp))
        paths.sort(key=lambda p: (p != os.path.join(top, "PKG-INFO"), p))
        def owned_by_root(info):
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            return info

        with tarfile.open(target, "w:gz", format=tarfile.PAX_FORMAT) as tar:
            for rel in paths:
                tar.add(os.path.join(tmp, rel), arcname=rel, recursive=False, filter=owned_by_root)
        print(target)


if __name__ == "__main__":
    main()
