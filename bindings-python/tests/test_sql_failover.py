"""The PostgreSQL functions across a failover to an asynchronous standby (issue 38, case 3).

IDs taken on the primary up to max_drift_ms + 1 s ahead of its clock are not yet on the
standby when the primary is killed and the standby promoted. The promoted standby is not a new
run of PostgreSQL (its postmaster started long before), so before the fix it used its state as
replicated and issued the lost slots again. A promotion is a new timeline: the first call on it
raises the slots past the clock then plus the margin.

The standby is cut off before the burst (its primary_conninfo emptied, so its WAL receiver
stops): what the primary issues then never reaches it, whatever the machine's load. Callers are
an ordinary role (no superuser) with the grants the install script names.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Iterator

import psycopg
import pytest

import libsnowflake as sf
from servers import Servers  # tests/servers, on the path through conftest

# 4 IDs a millisecond: a burst runs ahead of the clock, as max_drift_ms lets it.
SMALL = "time:41,worker:10,sequence:2;epoch=1288834974657;tick=1ms"


@pytest.fixture
def pg(tmp_path: Path) -> Iterator[Servers]:
    with Servers("postgres", "--standby", dir=tmp_path) as servers:
        yield servers


def dsn(servers: Servers, which: str, user: str) -> str:
    info = servers.info["postgres"]
    port = info["standby"]["port"] if which == "standby" else info["port"]
    return f"postgresql://{user}@/{info['database']}?host={info['socket_dir']}&port={port}"


def connect(servers: Servers, which: str, user: str = "plain") -> psycopg.Connection[Any]:
    deadline = time.monotonic() + 120
    while True:
        try:
            return psycopg.connect(dsn(servers, which, user), autocommit=True)
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def wait_until(what: str, check: Any) -> None:
    deadline = time.monotonic() + 120
    while not check():
        assert time.monotonic() < deadline, f"no {what} after 120 s"
        time.sleep(0.05)


def server_ms(conn: psycopg.Connection[Any]) -> int:
    row = conn.execute("SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint").fetchone()
    assert row is not None
    return int(row[0])


def test_a_promoted_asynchronous_standby_never_issues_the_lost_slots_again(pg: Servers) -> None:
    layout = sf.Layout(SMALL)
    with connect(pg, "primary", "snowflake") as admin:
        admin.execute(layout.sql("postgres"))
        admin.execute("CREATE ROLE plain LOGIN")
        admin.execute("GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO plain")
        with connect(pg, "primary") as conn:
            conn.execute("SELECT snowflake_next_id(5, max_wait_ms => 5000)")
        # The standby has the install and the grants: then it is cut off from the primary.
        # The insert location, past the role's commit: serve.py's primary runs with
        # synchronous_commit=off, so the write location (pg_current_wal_lsn) may still be before
        # it, and the standby was once cut off without the role.
        lsn = admin.execute("SELECT pg_current_wal_insert_lsn()").fetchone()[0]  # type: ignore[index]
    with connect(pg, "standby", "snowflake") as sb:
        wait_until("the install on the standby", lambda: sb.execute(
            "SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", [lsn]).fetchone()[0])  # type: ignore[index]
        sb.execute("ALTER SYSTEM SET primary_conninfo = ''")
        sb.execute("SELECT pg_reload_conf()")
        wait_until("the standby's WAL receiver to stop",
                   lambda: sb.execute("SELECT count(*) FROM pg_stat_wal_receiver").fetchone()[0] == 0)  # type: ignore[index]

    # On the primary: a burst that runs up to a second ahead of the clock, and an ID at a time
    # 1.8 s ahead (max_drift_ms + the 1 s any call may take).
    with connect(pg, "primary") as conn:
        rows = conn.execute("SELECT snowflake_next_id(5, max_drift_ms => 1000, max_wait_ms => 5000) "
                            "FROM generate_series(1, 12000)").fetchall()
        primary = {r[0] for r in rows}
        at = server_ms(conn) + 1800
        row = conn.execute("SELECT snowflake_next_id_at(5, %s, max_drift_ms => 1000)", [at]).fetchone()
        assert row is not None
        primary.add(row[0])
        ahead = layout.decode(max(primary)).unix_ms - server_ms(conn)
    pg.command("kill")
    pg.command("promote")

    with connect(pg, "standby") as conn:
        try:
            again = conn.execute("SELECT snowflake_next_id_at(5, %s, max_drift_ms => 1000)", [at]).fetchone()
        except psycopg.errors.ObjectNotInPrerequisiteState as e:
            again = e
        assert not (isinstance(again, tuple) and again[0] in primary), \
            f"the promoted standby issued {again[0]} again, an ID of the lost primary"  # type: ignore[index]
        rows = conn.execute("SELECT snowflake_next_id(5, max_drift_ms => 1000, max_wait_ms => 5000) "
                            "FROM generate_series(1, 12000)").fetchall()
        after = {r[0] for r in rows}
        gap_ms = layout.decode(min(after)).unix_ms - layout.decode(max(primary)).unix_ms
    repeated = primary & after
    print(f"promotion: {len(repeated)} repeats of {len(primary) + len(after)} IDs; the primary's last ID was "
          f"{ahead} ms ahead of the clock; the standby's first {gap_ms} ms past it")
    assert not repeated, f"{len(repeated)} of {len(after)} IDs of the promoted standby repeat the lost primary's"
    assert min(after) > max(primary), "the new timeline starts past everything the old primary issued"
