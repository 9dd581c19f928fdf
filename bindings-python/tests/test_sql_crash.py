"""The PostgreSQL functions across a real crash (issue 26): `kill -9` of the whole server
started by tests/servers (PostgreSQL 15), then a start on the same data.

The state is a sequence, which no rollback gives back, but whose WAL is flushed only at a
commit: a crash loses the slots taken since its last record reached the disk, by transactions
that rolled back, committed with ``synchronous_commit = off``, or were still open. Before the
fix the same call after the restart gave the same ID again (3 of 3), and a burst borrowing
ahead of the clock repeated part of itself. Now every slot is at most max_drift_ms + 1000 ms
ahead of the server's clock, and each session's first call after a restart (or a crash
recovery) raises the state above the tick of the server's start plus that margin.

Since issue 31 a slot is a value of P_state plus P_offset, and a jump to a new tick moves the
offset: both sequences lose their last values in a crash, and a jump may be left half done
(the offset negative). P_next_ids takes blocks the same way.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any, Callable, Iterator, TypeVar

import psycopg
import pytest

import libsnowflake as sf
from servers import Servers  # tests/servers, on the path through conftest

T = TypeVar("T")

# 4 IDs a millisecond: a burst of PL/pgSQL calls runs ahead of the clock, as the borrowing of
# max_drift_ms lets it.
SMALL = "time:41,worker:10,sequence:2;epoch=1288834974657;tick=1ms"


@pytest.fixture
def pg(tmp_path: Path) -> Iterator[Servers]:
    # The helpers run PostgreSQL with synchronous_commit=off for speed: here commits are as in
    # production (the install must survive the crash), and one test turns it off itself.
    with Servers("postgres", "--pg-config", "synchronous_commit=on", dir=tmp_path) as servers:
        yield servers


def connect(servers: Servers) -> psycopg.Connection[Any]:
    """A connection, once the server accepts them again after a start."""
    deadline = time.monotonic() + 60
    while True:
        try:
            return psycopg.connect(servers.info["postgres"]["dsn"], autocommit=True)
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def retrying(f: Callable[[], T]) -> T:
    """f(), again while the server recovers from a crash (it refuses connections, or drops
    the one just made)."""
    deadline = time.monotonic() + 60
    while True:
        try:
            return f()
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


# What the generated functions read to tell a crash recovery by the running postmaster (which
# resets the shared statistics) from the run before it (core/src/sql.rs, RUN).
RUN_MARKER = "SELECT pg_stat_get_bgwriter_stat_reset_time()"


def server_ms(conn: psycopg.Connection[Any]) -> int:
    row = conn.execute("SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint").fetchone()
    assert row is not None
    return int(row[0])


def crash(servers: Servers) -> None:
    """SIGKILL to the server's whole process group (serve.py's `kill`), then a start on the
    same data directory: crash recovery."""
    servers.command("kill")
    servers.command("start")


def install(servers: Servers, spec: str = "twitter") -> sf.Layout:
    layout = sf.Layout(spec)
    with connect(servers) as conn:
        conn.execute(layout.sql("postgres"))
    return layout


def test_a_rolled_back_id_ahead_of_the_clock_is_not_issued_again_after_a_crash(pg: Servers) -> None:
    install(pg)
    for round_ in range(3):
        with connect(pg) as conn:
            conn.execute("SELECT snowflake_next_id(1, 2, max_wait_ms => 5000)")
            at = server_ms(conn) + 800  # ahead of the clock, within the 1000 ms any call may take
            with conn.transaction(force_rollback=True):
                row = conn.execute("SELECT snowflake_next_id_at(1, 2, %s)", [at]).fetchone()
            assert row is not None
            first = row[0]
        crash(pg)

        def again() -> Any:
            with connect(pg) as conn:
                try:
                    return conn.execute("SELECT snowflake_next_id_at(1, 2, %s)", [at]).fetchone()
                except psycopg.errors.ObjectNotInPrerequisiteState as e:
                    return e

        second = retrying(again)
        # Refused (the time is now behind the state, raised past the crash), never the same ID.
        assert isinstance(second, psycopg.Error), f"round {round_}: {second} after {first}"
        assert "ERR_SNOWFLAKE_CLOCK_BEHIND" in str(second) and "replays and backfills need a prefix of their own" in str(second)
        with connect(pg) as conn:
            row = conn.execute("SELECT snowflake_next_id(1, 2, max_wait_ms => 5000)").fetchone()
            assert row is not None and row[0] > first, f"round {round_}"


def burst(conn: psycopg.Connection[Any], n: int) -> list[int]:
    rows = conn.execute(
        "SELECT snowflake_next_id(5, max_drift_ms => 1000, max_wait_ms => 5000) FROM generate_series(1, %s)", [n]
    ).fetchall()
    return [r[0] for r in rows]


def test_a_rolled_back_burst_that_borrowed_ahead_is_not_repeated_after_a_crash(pg: Servers) -> None:
    layout = install(pg, SMALL)
    seen: set[int] = set()
    for round_ in range(2):
        with connect(pg) as conn:
            with conn.transaction(force_rollback=True):
                ids = retrying(lambda: burst(conn, 12_000))
            ahead = layout.decode(ids[-1]).unix_ms - server_ms(conn)
        assert not seen & set(ids), f"round {round_}: {len(seen & set(ids))} repeated"
        seen |= set(ids)
        crash(pg)
        with connect(pg) as conn:
            after = retrying(lambda: burst(conn, 12_000))
        repeated = seen & set(after)
        assert not repeated, f"round {round_}: {len(repeated)} of {len(after)} repeated (the burst ended {ahead} ms ahead)"
        seen |= set(after)


@pytest.fixture
def pg_lazy_wal(tmp_path: Path) -> Iterator[Servers]:
    """As pg, with a WAL writer that sleeps 10 s: a write that no commit flushed (a setval or
    nextval outside a transaction with an ID, or in one that rolled back) stays off the disk
    until then, as it may at any moment under load."""
    with Servers("postgres", "--pg-config", "synchronous_commit=on", "--pg-config", "wal_writer_delay=10000",
                 dir=tmp_path) as servers:
        yield servers


def test_a_rolled_back_block_and_a_half_done_jump_are_not_repeated_after_a_crash(pg_lazy_wal: Servers) -> None:
    pg = pg_lazy_wal
    install(pg, SMALL)

    def block(conn: psycopg.Connection[Any], n: int) -> list[int]:
        rows = conn.execute(
            "SELECT snowflake_next_ids(5, %s, max_drift_ms => 1000, max_wait_ms => 5000)", [n]).fetchall()
        return [r[0] for r in rows]

    seen: set[int] = set()
    for round_ in range(2):
        with connect(pg) as conn:
            with conn.transaction(force_rollback=True):
                ids = retrying(lambda: block(conn, 3000))
            if round_ == 1:
                # A jump cut short after its first step, as a cancel there leaves it.
                conn.execute("SELECT setval('snowflake_offset', -1 - pg_sequence_last_value('snowflake_offset'))")
                conn.execute("SELECT nextval('snowflake_state')")
        assert len(ids) == 3000 and not seen & set(ids), f"round {round_}"
        seen |= set(ids)
        crash(pg)
        with connect(pg) as conn:
            after = retrying(lambda: block(conn, 2000)) + retrying(lambda: burst(conn, 2000))
        repeated = seen & set(after)
        assert not repeated, f"round {round_}: {len(repeated)} of {len(after)} repeated"
        assert len(set(after)) == len(after)
        seen |= set(after)


def test_ids_committed_with_synchronous_commit_off_are_not_issued_again_after_a_crash(pg: Servers) -> None:
    install(pg)
    for round_ in range(3):
        with connect(pg) as conn:
            conn.execute("SET synchronous_commit = off")
            # (Past the margin that the last round's restart put the state at.)
            conn.execute("SELECT snowflake_next_id(1, 2, max_wait_ms => 5000)")
            at = server_ms(conn) + 800
            row = conn.execute("SELECT snowflake_next_id_at(1, 2, %s)", [at]).fetchone()
            assert row is not None
            first = row[0]
            rows = conn.execute("SELECT snowflake_next_id(1, 2, max_drift_ms => 1000) FROM generate_series(1, 50)").fetchall()
            committed = {first, *(r[0] for r in rows)}
        crash(pg)

        def again() -> Any:
            with connect(pg) as conn:
                conn.execute("SET synchronous_commit = off")
                try:
                    return conn.execute("SELECT snowflake_next_id_at(1, 2, %s)", [at]).fetchone()
                except psycopg.errors.ObjectNotInPrerequisiteState as e:
                    return e

        second = retrying(again)
        assert isinstance(second, psycopg.Error), f"round {round_}: {second} after {first}"
        with connect(pg) as conn:
            def next_ids() -> set[int]:
                rows = conn.execute("SELECT snowflake_next_id(1, 2, max_drift_ms => 1000, max_wait_ms => 5000) FROM generate_series(1, 50)").fetchall()
                return {r[0] for r in rows}

            after = retrying(next_ids)
        assert not committed & after, f"round {round_}"
        assert min(after) > max(committed), f"round {round_}: the state was raised past the crash"


def test_a_crash_recovery_without_a_restart_raises_the_state_too(pg: Servers) -> None:
    """A backend killed makes the postmaster reset every process and recover from the WAL
    without a new start time: the shared statistics' reset time tells that run apart."""
    install(pg)
    with connect(pg) as conn, connect(pg) as victim:
        at = server_ms(conn) + 800
        with conn.transaction(force_rollback=True):
            row = conn.execute("SELECT snowflake_next_id_at(1, 2, %s)", [at]).fetchone()
        assert row is not None
        first = row[0]
        before = conn.execute(RUN_MARKER).fetchone()
        pid = victim.execute("SELECT pg_backend_pid()").fetchone()
        assert pid is not None
        os.kill(pid[0], signal.SIGKILL)

    # The postmaster notices the killed backend, then resets every process: a connection made
    # before that is still in the old run (and rightly issues the next ID). Wait for the reset.
    def recovered() -> None:
        with connect(pg) as conn:
            if conn.execute(RUN_MARKER).fetchone() == before:
                raise psycopg.OperationalError("the crash recovery has not happened yet")

    retrying(recovered)

    def again() -> Any:
        with connect(pg) as conn:
            try:
                return conn.execute("SELECT snowflake_next_id_at(1, 2, %s)", [at]).fetchone()
            except psycopg.errors.ObjectNotInPrerequisiteState as e:
                return e

    second = retrying(again)
    assert isinstance(second, psycopg.Error), f"{second} after {first}"


def test_a_state_created_in_this_run_takes_past_times_and_an_old_one_is_raised(pg: Servers) -> None:
    """Replays through a prefix made for them in this run work (the shared vectors do so);
    the margin applies only to a state older than the server's run."""
    layout = install(pg)
    with connect(pg) as conn:
        row = conn.execute("SELECT snowflake_next_id_at(1, 2, 1700000000000)").fetchone()
        assert row is not None and layout.decode(row[0]).unix_ms == 1700000000000
    pg.command("term")  # a clean stop: no WAL is lost, but nothing tells it from a crash
    pg.command("start")
    with connect(pg) as conn:
        with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState, match="ERR_SNOWFLAKE_CLOCK_BEHIND"):
            retrying(lambda: conn.execute("SELECT snowflake_next_id_at(1, 2, 1700000000001)").fetchone())
        row = conn.execute("SELECT snowflake_next_id(1, 2, max_wait_ms => 5000)").fetchone()
        assert row is not None
        start = conn.execute("SELECT floor(extract(epoch FROM pg_postmaster_start_time()) * 1000)::bigint").fetchone()
        assert start is not None and layout.decode(row[0]).unix_ms > start[0] + 2000
