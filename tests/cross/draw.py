"""One process of the cross-language shared-state test (tests/cross/test_cross.py), in Python.

    draw.py draw NAME COUNT OUT DIR   opens the shared generator NAME (twitter, datacenter=3,
                                      worker=7), or a plain one (no coordination option) when
                                      NAME is `-`, writes DIR/ready.<pid>, waits for DIR/go, then
                                      draws COUNT IDs (runs of 1000 next_id() calls and
                                      next_ids(1000) batches, alternating) and writes them to
                                      OUT, one decimal a line
    draw.py mismatch NAME             opens NAME with another layout, node and policy; prints
                                      one line a case: `<case> <error code> <message>`, or
                                      `<case> OPENED <first ID>`
"""

import os
import sys
import time

import libsnowflake as sf

LAYOUT = "twitter"
NODE = {"datacenter": 3, "worker": 7}


def draw(name: str, count: int, out: str, sync_dir: str) -> None:
    gen = sf.Generator(LAYOUT, node=NODE) if name == "-" else sf.Generator(LAYOUT, node=NODE, shared=name)
    with open(os.path.join(sync_dir, "ready.py.%d" % os.getpid()), "w"):
        pass
    go = os.path.join(sync_dir, "go")
    while not os.path.exists(go):
        time.sleep(0.0005)
    ids = []
    while len(ids) < count:
        for _ in range(min(1000, count - len(ids))):
            ids.append(gen.next_id())
        ids.extend(gen.next_ids(min(1000, count - len(ids))))
    with open(out, "w") as f:
        f.write("\n".join(map(str, ids)))
        f.write("\n")


def mismatch(name: str) -> None:
    cases = [
        ("layout", lambda: sf.Generator("discord", node={"worker": 3, "process": 7}, shared=name)),
        ("node", lambda: sf.Generator(LAYOUT, node={"datacenter": 3, "worker": 8}, shared=name)),
        ("policy", lambda: sf.Generator(LAYOUT, node=NODE, shared=name, max_drift_ms=5)),
    ]
    for case, make in cases:
        try:
            print(case, "OPENED", make().next_id())
        except sf.SharedMismatchError as e:
            print(case, e.code, str(e).replace("\n", " "))
        except Exception as e:  # reported, and failed by the runner
            print(case, "WRONG", type(e).__name__, e)


if __name__ == "__main__":
    if sys.argv[1] == "draw":
        draw(sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5])
    elif sys.argv[1] == "mismatch":
        mismatch(sys.argv[2])
    else:
        sys.exit("usage: draw.py draw NAME COUNT OUT DIR | mismatch NAME")
