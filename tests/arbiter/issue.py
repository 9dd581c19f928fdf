"""One issuing process of the arbiter tests (tests/arbiter/test_arbiter.py), in Python.

    issue.py LAYOUT NODE OPTIONS MS OUT SYNC

Opens a generator (OPTIONS in the text form every front end takes, `-` for none). On failure
it writes `error <code> <message>` to OUT and exits 0. Otherwise it touches SYNC/ready.<pid>,
waits for SYNC/go, calls next_id() for MS milliseconds (or until a call fails: then the IDs
so far and `error <code> <message>`), touching SYNC/issued.<pid> after its first 200 IDs, and
writes `ok` then one ID a line to OUT.
"""

import os
import sys
import time

import libsnowflake as sf


def main(layout: str, node: str, options: str, ms: int, out: str, sync: str) -> None:
    try:
        gen = open_generator(layout, node, options)
    except sf.SnowflakeError as e:
        with open(out, "w") as f:
            f.write(f"error {e.code} {str(e).replace(chr(10), ' ')}\n")
        return
    open(os.path.join(sync, f"ready.{os.getpid()}"), "w").close()
    go = os.path.join(sync, "go")
    while not os.path.exists(go):
        time.sleep(0.0005)
    ids = []
    tail = ""
    end = time.monotonic() + ms / 1000
    try:
        while True:  # at least one batch, however late this process runs after `go`
            for _ in range(200):
                ids.append(gen.next_id())
            if len(ids) == 200:  # the test may wait for this one: it has issued
                open(os.path.join(sync, f"issued.{os.getpid()}"), "w").close()
            if time.monotonic() >= end:
                break
    except sf.SnowflakeError as e:
        tail = f"error {e.code} {str(e).replace(chr(10), ' ')}\n"
    with open(out, "w") as f:
        f.write("ok\n")
        f.write("".join(f"{i}\n" for i in ids))
        f.write(tail)


def open_generator(layout: str, node: str, options: str) -> sf.Generator:
    # The options text, key by key, as keywords: the Python API (its values typed by core's
    # option table: numbers as int, booleans as bool).
    kw: dict = {}
    if options != "-":
        for item in options.split(";"):
            key, _, value = item.partition("=")
            if value in ("true", "false"):
                kw[key] = value == "true"
            elif value.isdigit():
                kw[key] = int(value)
            else:
                kw[key] = value
    values = {} if node == "-" else dict((k, int(v)) for k, v in (p.split("=") for p in node.split(",")))
    return sf.Generator(layout, values, **kw)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5], sys.argv[6])
