"""fork(): a child can never repeat its parent's IDs.

A default generator keeps its state in the host's shared memory: the generator inherited by
a child (multiprocessing's fork start method, gunicorn --preload) goes on issuing there, and
so does a new one with the parent's node values, never repeating an ID. A ``process_only``
generator's state is its process's: its copy in a child raises ForkedProcessError, and so
does making a new one with the parent's node values (the parent may still issue from them).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import libsnowflake as sf

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="fork() is POSIX")

LAYOUT = "twitter"
PARENT_NODE = {"datacenter": 4, "worker": 1}
ALONE_NODE = {"datacenter": 4, "worker": 2}
CHILDREN = 4
PER_CHILD = 20_000

# Made at import, before any fork: what a --preload'ed app module does.
GEN = sf.Generator(LAYOUT, PARENT_NODE)
ALONE = sf.Generator(LAYOUT, ALONE_NODE, process_only=True)


def child(i: int, out: Any) -> None:
    report: dict[str, Any] = {"ids": []}
    try:
        report["ids"] += GEN.next_ids(PER_CHILD // 2)
        report["inherited"] = "issued"
    except sf.SnowflakeError as e:
        report["inherited"] = e.code
    try:
        report["ids"] += sf.Generator(LAYOUT, PARENT_NODE).next_ids(PER_CHILD // 2)
        report["recreated"] = "issued"
    except sf.SnowflakeError as e:
        report["recreated"] = e.code
    for name, make in [("alone", lambda: ALONE), ("alone_recreated", lambda: sf.Generator(LAYOUT, ALONE_NODE, process_only=True))]:
        try:
            make().next_id()
            report[name] = "issued"
        except sf.ForkedProcessError as e:
            report[name] = e.code
    own = sf.Generator(LAYOUT, {"datacenter": 4, "worker": 10 + i}, process_only=True)
    report["own"] = own.next_ids(PER_CHILD)
    out.put((i, report))


def test_multiprocessing_fork_children_never_repeat_parent_ids() -> None:
    ctx = mp.get_context("fork")
    parent_ids = GEN.next_ids(5_000)
    ALONE.next_id()
    out = ctx.Queue()
    procs = [ctx.Process(target=child, args=(i, out)) for i in range(CHILDREN)]
    for p in procs:
        p.start()
    # The parent keeps issuing while the children do.
    parent_ids += GEN.next_ids(50_000)
    reports = dict(out.get(timeout=60) for _ in procs)
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    everything = list(parent_ids)
    for i, report in sorted(reports.items()):
        assert report["inherited"] == "issued"
        assert report["recreated"] == "issued"
        assert report["alone"] == "ERR_SNOWFLAKE_FORKED"
        assert report["alone_recreated"] == "ERR_SNOWFLAKE_FORKED"
        assert len(report["ids"]) == PER_CHILD
        assert {sf.Layout(LAYOUT).decode(x).fields["worker"] for x in report["ids"]} == {1}
        assert {sf.Layout(LAYOUT).decode(x).fields["worker"] for x in report["own"]} == {10 + i}
        everything += report["ids"] + report["own"]
    assert len(set(everything)) == len(everything) == 55_000 + CHILDREN * 2 * PER_CHILD
    # The parent is unaffected.
    assert GEN.next_id() > parent_ids[-1]
    ALONE.next_id()


def test_pool_with_fork_and_an_initializer() -> None:
    # Each pool process takes its own worker value from a queue, in the pool's initializer.
    ctx = mp.get_context("fork")
    values = ctx.Queue()
    for v in range(20, 24):
        values.put(v)
    with ctx.Pool(4, initializer=_init_pool_worker, initargs=(values,)) as pool:
        batches = pool.map(_pool_task, range(40))
    everything = [x for b in batches for x in b]
    assert len(set(everything)) == len(everything) == 40 * 1000


_pool_gen: sf.Generator | None = None


def _init_pool_worker(values: Any) -> None:
    global _pool_gen
    _pool_gen = sf.Generator(LAYOUT, {"datacenter": 5, "worker": values.get()})


def _pool_task(_: int) -> list[int]:
    assert _pool_gen is not None
    return _pool_gen.next_ids(1000)


def test_os_fork_grandchild_and_isolated() -> None:
    # An isolated generator is refused after fork() too, and a grandchild inherits the rule
    # for a process_only one; a default one it may make anew.
    iso = sf.Generator(LAYOUT, {"datacenter": 6, "worker": 1}, isolated=True)
    iso.next_id()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        status = b"?"
        try:
            try:
                iso.next_id()
                status = b"iso-issued"
            except sf.ForkedProcessError:
                mine = sf.Generator(LAYOUT, {"datacenter": 6, "worker": 2}, process_only=True)
                mine.next_id()
                gpid = os.fork()
                if gpid == 0:
                    code = 1
                    try:
                        sf.Generator(LAYOUT, {"datacenter": 6, "worker": 2}, process_only=True)
                    except sf.ForkedProcessError:
                        code = 0 if sf.Generator(LAYOUT, {"datacenter": 6, "worker": 3}).next_id() else 2
                    os._exit(code)
                _, st = os.waitpid(gpid, 0)
                status = b"ok" if os.WEXITSTATUS(st) == 0 else b"grandchild-recreated"
            os.write(w, status)
        finally:
            os._exit(0)
    os.close(w)
    got = os.read(r, 64)
    os.waitpid(pid, 0)
    assert got == b"ok"


def test_children_forked_while_a_thread_opens_state_files_never_hang(tmp_path: Path) -> None:
    # Issue 15, case 7 (gunicorn --preload with threads): threads open and drop
    # state-file generators while the main thread forks; each child opens a generator with a
    # state file of its own. Before the fork gate, a child could inherit one of the library's
    # locks held by that thread at the fork, and hang forever (2-3 of 300-600 children). A
    # hang is the failure; a minute per child is no timing assertion.
    forks = 300
    stop = threading.Event()
    busy = str(tmp_path / "busy.state")

    def churn() -> None:
        while not stop.is_set():
            # Opened (detached from the interpreter: files and locks) and dropped.
            g = sf.Generator(LAYOUT, {"datacenter": 7, "worker": 1}, state_file=busy)
            del g

    threads = [threading.Thread(target=churn, daemon=True) for _ in range(4)]
    for thread in threads:
        thread.start()
    hung = failed = 0
    try:
        for i in range(forks):
            own = str(tmp_path / f"child{i}.state")
            pid = os.fork()
            if pid == 0:
                code = 1
                try:
                    g = sf.Generator(LAYOUT, {"datacenter": 7, "worker": 2}, state_file=own)
                    g.next_id()
                    code = 0
                finally:
                    os._exit(code)
            deadline = time.monotonic() + 60
            while True:
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    failed += os.waitstatus_to_exitcode(status) != 0
                    break
                if time.monotonic() > deadline:
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                    hung += 1
                    break
                time.sleep(0.002)
            if hung:
                break
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    assert hung == 0, "a child of fork() hung"
    assert failed == 0, f"{failed} children could not open a generator of their own"
