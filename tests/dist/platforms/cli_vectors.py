#!/usr/bin/env python3
"""Another platform's `snowflake` CLI decodes the shared vectors exactly (tests/dist/platforms.sh).

    python3 cli_vectors.py <tests/vectors> <command...>

<command...> runs the CLI, through what runs it here: `qemu-aarch64-static dist/.../snowflake`,
`wine64 C:/.../snowflake.exe`, or the file itself. For every layout of layouts.json, one run of
`decode --layout <canonical spec> --json <its IDs...>` must give each ID's unix_ms, sequence and
node fields; for every encoding of encodings.json, one run of `decode --layout mastodon --from
<encoding>` (a 64-bit layout: every ID is one of its IDs) must give the IDs back.

Prints `ok <n> vectors in <runs> runs`; exits 1 on the first difference, showing it.
"""
import json
import subprocess
import sys
from pathlib import Path


def run(command, args):
    out = subprocess.run(command + args, capture_output=True, text=True, timeout=300)
    if out.returncode != 0:
        sys.exit(f"FAIL {' '.join(args[:4])} ...: exit {out.returncode}\n{out.stdout}{out.stderr}")
    # Wine's console may end lines with \r\n.
    return [json.loads(line) for line in out.stdout.replace("\r\n", "\n").splitlines() if line.strip()]


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    vectors, command = Path(sys.argv[1]), sys.argv[2:]
    checked = runs = 0
    for layout in json.loads((vectors / "layouts.json").read_text())["layouts"]:
        cases = layout["decode"]
        got = run(command, ["decode", "--layout", layout["canonical"], "--json"] + [c["id"] for c in cases])
        runs += 1
        if len(got) != len(cases):
            sys.exit(f"FAIL {layout['spec']}: {len(got)} lines for {len(cases)} IDs")
        for want, parts in zip(cases, got):
            seen = (parts["id"], parts["unix_ms"], parts["sequence"], parts["fields"])
            expected = (want["id"], want["unix_ms"], want["sequence"], want["fields"])
            if seen != expected:
                sys.exit(f"FAIL {layout['spec']}: {want['id']}: got {seen}, expected {expected}")
            checked += 1
    ids = json.loads((vectors / "encodings.json").read_text())["ids"]
    for encoding in ids[0]["plain"]:
        got = run(command, ["decode", "--layout", "mastodon", "--json", "--from", encoding] + [v["plain"][encoding] for v in ids])
        runs += 1
        for v, parts in zip(ids, got, strict=True):
            if parts["id"] != v["id"]:
                sys.exit(f"FAIL --from {encoding} {v['plain'][encoding]}: got {parts['id']}, expected {v['id']}")
            checked += 1
    print(f"ok {checked} vectors in {runs} runs")


if __name__ == "__main__":
    main()
