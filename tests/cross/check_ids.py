"""Checks the cross-language shared-state run (tests/cross/test_cross.py): the ID files of the
processes that drew from one shared name.

    check_ids.py COUNT T0_MS T1_MS FILE...

Each FILE (named <language>-<n>.ids) must hold COUNT IDs, strictly increasing; the union must
hold no duplicate; every ID must decode (twitter: time:41, datacenter:5, worker:5,
sequence:12, epoch 1288834974657) to datacenter 3, worker 7 and an instant within
[T0_MS, T1_MS] (the run's wall-clock bounds); and the processes must have drawn at the same
time: each one's span of IDs overlaps another language's (how many milliseconds hold IDs of
several processes is printed: a scheduling figure, not a check). The decoding here is written out independently of the library. Prints one `ok`/`FAIL` line a check, the figures, and exits
non-zero on a failure.
"""

import os
import sys
from collections import Counter

EPOCH = 1288834974657
CAPACITY_PER_MS = 4096


def unix_ms(i: int) -> int:
    return (i >> 22) + EPOCH


def main() -> int:
    count, t0, t1 = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    files = sys.argv[4:]
    failed = 0

    def check(ok: bool, what: str) -> None:
        nonlocal failed
        print(("ok   " if ok else "FAIL ") + what)
        failed += not ok

    runs = {}
    for path in files:
        tag = os.path.basename(path).rsplit(".", 1)[0]
        with open(path) as f:
            runs[tag] = [int(line) for line in f if line.strip()]

    everything = []
    for tag, ids in runs.items():
        check(len(ids) == count, f"{tag}: {len(ids)} IDs (expected {count})")
        bad = next((k for k in range(1, len(ids)) if ids[k] <= ids[k - 1]), None)
        check(bad is None, f"{tag}: strictly increasing" + ("" if bad is None else f" (not at #{bad}: {ids[bad - 1]} then {ids[bad]})"))
        wrong = [i for i in ids if ((i >> 17) & 31, (i >> 12) & 31) != (3, 7)]
        check(not wrong, f"{tag}: every ID decodes to datacenter=3, worker=7" + (f" ({len(wrong)} do not, e.g. {wrong[0]})" if wrong else ""))
        out = [i for i in ids if not t0 <= unix_ms(i) <= t1]
        check(not out, f"{tag}: every ID's instant is within the run [{t0}, {t1}]" + (f" ({len(out)} are not, e.g. {out[0]} at {unix_ms(out[0])})" if out else ""))
        everything.extend(ids)

    total = len(everything)
    distinct = len(set(everything))
    dups = [] if distinct == total else [i for i, n in Counter(everything).items() if n > 1]
    check(distinct == total, f"no duplicate in the union of {total} IDs from {len(runs)} processes" + (f" ({total - distinct} repeats, e.g. {dups[:3]})" if dups else ""))

    base = min(unix_ms(ids[0]) for ids in runs.values() if ids)
    print("spans (ms after the first ID): " + ", ".join(
        f"{tag} {unix_ms(ids[0]) - base}..{unix_ms(ids[-1]) - base}" for tag, ids in sorted(runs.items()) if ids))
    # They drew at the same time. All 8 start together at a barrier, but on a loaded 2-core
    # machine the scheduler may hold one back until another is done (200k IDs take a C process
    # under 200 ms); so each process must overlap another language's, and every pair's
    # overlap is reported.
    spans = {tag: (ids[0], ids[-1]) for tag, ids in runs.items() if ids}
    lone = [
        tag for tag, (a0, a1) in spans.items()
        if not any(t.split("-")[0] != tag.split("-")[0] and b0 < a1 and a0 < b1 for t, (b0, b1) in spans.items())
    ]
    check(not lone, "each process drew while a process of another language drew" + (f" (not {lone})" if lone else ""))
    latest_first = max(a0 for a0, _ in spans.values())
    earliest_last = min(a1 for _, a1 in spans.values())
    print(f"all {len(spans)} drawing at once for {max(0, unix_ms(earliest_last) - unix_ms(latest_first))} ms "
          f"(the latest first ID {unix_ms(latest_first) - base} ms, the earliest last one {unix_ms(earliest_last) - base} ms after the first)")

    # How finely the processes interleaved: milliseconds holding IDs of several processes
    # (on 2 cores, at most 2 of them run in any one instant).
    owners: dict[int, set] = {}
    for tag, ids in runs.items():
        for i in ids:
            owners.setdefault(i >> 22, set()).add(tag)
    mixed = sum(1 for s in owners.values() if len(s) > 1)
    mixed3 = sum(1 for s in owners.values() if len(s) > 2)
    langs = sum(1 for s in owners.values() if len({t.split("-")[0] for t in s}) > 1)
    first = min(everything)
    last = max(everything)
    span_ms = unix_ms(last) - unix_ms(first) + 1
    print(
        f"figures: {total} IDs over {span_ms} ms of ID time: {total / span_ms:.0f} IDs/ms, "
        f"{100 * total / (span_ms * CAPACITY_PER_MS):.1f}% of twitter's {CAPACITY_PER_MS}/ms; "
        f"{len(owners)} ms with IDs, {mixed} of them with IDs of 2+ processes ({langs} of 2+ languages), {mixed3} of 3+ "
        "(a scheduling figure: from 6 to 330 of ~400 on the loaded 2-core machine)"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
