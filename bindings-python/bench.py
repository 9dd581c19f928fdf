"""Speed of the Python binding (issue 4's targets in brackets).

    python bindings-python/bench.py [--quick]

1. ``next_id()`` ns per call on a layout whose capacity is not the limit [<= 80 ns];
2. a tight ``next_id()`` loop on ``twitter`` as a share of the layout's capacity, 4,096 IDs
   per ms [>= 95%];
3. ``next_ids(1_000_000)`` (and ``next_ids_array``) on ``twitter`` as a share of capacity
   [>= 99%].

Every figure is measured here and now, the median of several runs; the loops call a bound
method held in a local, as a user's hot loop would.
"""

from __future__ import annotations

import statistics
import sys
import time

from libsnowflake import Generator, Layout

FAST = "time:41,worker:1,sequence:22;epoch=1288834974657"


def ns_per_call(f, n: int) -> float:
    """One call of `f` in the loop `[f() for _ in range(n)]`, in ns (the loop included)."""
    loop = range(n)
    t0 = time.perf_counter_ns()
    [f() for _ in loop]
    return (time.perf_counter_ns() - t0) / n


def loop_overhead_ns(n: int) -> float:
    return ns_per_call(int, n)


def uuid7():  # type: ignore[no-untyped-def]
    """uuid-utils' uuid7(), the peer of issue 10's target (a dev dependency, in .venv)."""
    try:
        from uuid_utils import uuid7 as peer
    except ImportError:
        return None
    return peer


def tight_loop_share(seconds: float) -> tuple[float, int]:
    """IDs issued by a tight next_id() loop on twitter, as a share of 4,096 per ms."""
    gen = Generator("twitter", node={"datacenter": 0, "worker": 2})
    capacity = Layout("twitter").capacity_per_tick
    next_id = gen.next_id
    issued = 0
    t0 = time.perf_counter()
    end = t0 + seconds
    while True:
        for _ in range(10_000):
            next_id()
        issued += 10_000
        if time.perf_counter() >= end:
            break
    elapsed_ms = (time.perf_counter() - t0) * 1000
    return issued / (capacity * elapsed_ms), issued


def batch_share(method: str, n: int) -> float:
    """next_ids(n) (or next_ids_array) on twitter: capacity time / elapsed time."""
    gen = Generator("twitter", node={"datacenter": 0, "worker": 4})
    capacity = Layout("twitter").capacity_per_tick
    # Start at a fresh tick, so the first block is not a tick already half used.
    gen.reserve(capacity)
    t0 = time.perf_counter()
    ids = getattr(gen, method)(n)
    elapsed_ms = (time.perf_counter() - t0) * 1000
    assert len(ids) == n and all(a < b for a, b in zip(ids, ids[1:]))
    return (n / capacity) / elapsed_ms


def main() -> int:
    quick = "--quick" in sys.argv
    runs = 3 if quick else 7
    n = 300_000 if quick else 2_000_000

    next_id = Generator(FAST, node={"worker": 1}).next_id
    peer = uuid7()
    # Alternated in one run, so both meet the same machine and moment.
    ours, theirs = [], []
    for _ in range(runs):
        ours.append(ns_per_call(next_id, n))
        if peer is not None:
            theirs.append(ns_per_call(peer, n))
    ns = statistics.median(ours)
    overhead = statistics.median(loop_overhead_ns(n) for _ in range(runs))
    print(f"next_id() on {FAST!r}: {ns:.1f} ns/call in [f() for _ in range(n)] "
          f"(of which the loop and a call of int(): {overhead:.1f} ns)")
    if theirs:
        ref = statistics.median(theirs)
        print(f"  uuid_utils.uuid7() in the same loop and run: {ref:.1f} ns/call; "
              f"next_id / uuid7 = {ns / ref:.2f} [target <= 0.64]")

    shares = [tight_loop_share(0.5 if quick else 1.0) for _ in range(3)]
    share, issued = sorted(shares)[1]
    print(f"tight next_id() loop on twitter: {share:.1%} of capacity "
          f"({issued:,} IDs, 4,096/ms) [target >= 95%]")

    for method in ("next_ids", "next_ids_array"):
        s = statistics.median(batch_share(method, 1_000_000) for _ in range(3))
        print(f"{method}(1_000_000) on twitter: {s:.1%} of capacity [target >= 99%]")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
