"""The PostgreSQL extension `snowflake` (ffi-pg) against real servers of tests/servers/serve.py.

- the generator traces of tests/vectors/generator.json, moved to the server's present (an ID
  is issued only near the clock), give bit for bit what the library and the functions of
  `snowflake sql` give at the same times;
- 8 sessions for 10 s never repeat, and each session's IDs increase;
- rollbacks and statement timeouts never give an ID back;
- `kill -9` of the postmaster in the middle of a burst (synchronous_commit off, serve.py's
  default, and on): the next run starts past every ID a client was given;
- a promoted asynchronous standby, cut off from the primary before a burst, starts past every
  ID the lost primary gave;
- bad input raises core's typed errors with their SQLSTATEs.

The extension must be installed into the server's PostgreSQL: tests/pg/run.sh (CI's `pg` step)
installs dist/pg's .deb first; by hand, `cargo pgrx install` (docs/postgres.md).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any, Iterator

import psycopg
import pytest

import libsnowflake as sf

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "servers"))
from servers import Servers  # noqa: E402

PRELOAD = "shared_preload_libraries=snowflake"
SECONDS = float(os.environ.get("SNOWFLAKE_PG_SECONDS", "10"))
TRACES = json.loads((REPO / "tests" / "vectors" / "generator.json").read_text())["traces"]


def connect(servers: Servers, which: str = "primary", user: str = "snowflake") -> psycopg.Connection[Any]:
    info = servers.info["postgres"]
    port = info["standby"]["port"] if which == "standby" else info["port"]
    dsn = f"postgresql://{user}@/{info['database']}?host={info['socket_dir']}&port={port}"
    deadline = time.monotonic() + 120
    while True:
        try:
            return psycopg.connect(dsn, autocommit=True)
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def one(conn: psycopg.Connection[Any], sql: str, params: Any = None) -> Any:
    row = conn.execute(sql, params).fetchone()
    assert row is not None
    return row[0]


def server_ms(conn: psycopg.Connection[Any]) -> int:
    return int(one(conn, "SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint"))


def code_of(e: psycopg.Error) -> str:
    return (e.diag.message_primary or "").split(" ", 1)[0]


def wait_until(what: str, check: Any) -> None:
    deadline = time.monotonic() + 120
    while not check():
        assert time.monotonic() < deadline, f"no {what} after 120 s"
        time.sleep(0.02)


@pytest.fixture
def pg(tmp_path: Path) -> Iterator[Servers]:
    with Servers("postgres", "--pg-config", PRELOAD, dir=tmp_path) as servers:
        with connect(servers) as conn:
            conn.execute("CREATE EXTENSION snowflake")
        yield servers


# --- exact: the vectors, the library, `snowflake sql` ------------------------------------
def applicable(trace: dict[str, Any]) -> bool:
    """What the PL/pgSQL functions issue too: sequence_start=zero, no rollover, 63 bits, and a
    layout that lasts past today (its IDs are issued near the server's clock)."""
    o = trace["options_fields"]
    layout = sf.Layout(trace["layout"])
    return (o["rollover"] is None and o["sequence_start"] == "zero" and layout.total_bits <= 63
            and layout.last_unix_ms > time.time() * 1000 + 86_400_000)


SQL_TRACES = [t for t in TRACES if applicable(t)]


def test_most_traces_apply() -> None:
    assert len(SQL_TRACES) >= 7, [t["name"] for t in SQL_TRACES]
    assert any(t["options_fields"]["max_drift_ms"] > 0 for t in SQL_TRACES)


def test_traces_are_bit_identical_to_the_library_and_snowflake_sql(pg: Servers) -> None:
    """Each trace, moved by whole seconds (which keeps every layout's tick boundaries) to just
    past the server's mark: the extension's next_id_at, the library's generator and the PL/pgSQL
    functions of `snowflake sql` give the same ID or the same error at every step."""
    with connect(pg) as conn:
        for i, trace in enumerate(SQL_TRACES):
            layout = sf.Layout(trace["layout"])
            prefix = f"trace{i}"
            conn.execute(layout.sql("postgres", prefix=prefix))
            conn.execute("SELECT snowflake.install(%s, %s)", [trace["layout"], f"ext{i}"])
            node = [trace["node"].get(name, 0) for name in layout.node_fields]
            drift = trace["options_fields"]["max_drift_ms"]
            lib = sf.Generator(trace["layout"], node=trace["node"], max_drift_ms=drift, max_wait_ms=0, isolated=True)
            times = [s["unix_ms"] for s in trace["steps"]]
            # Past the mark (which every identity's first state starts from) and the clock.
            mark = int(one(conn, "SELECT last_value >> 16 FROM snowflake.mark"))
            start = max(server_ms(conn) + 1000, mark + 1)
            shift = -(-(start - min(times)) // 1000) * 1000
            args = ", ".join(["%s"] * (len(node) + 2))
            for step in trace["steps"]:
                at = step["unix_ms"] + shift
                # A time is taken at most 1 s ahead of the server's clock: wait for the clock.
                wait_until("the clock", lambda: server_ms(conn) >= at - 900)
                got = []
                for fn in (f"ext{i}_next_id_at", f"{prefix}_next_id_at"):
                    try:
                        got.append(str(one(conn, f"SELECT {fn}({args})", [*node, at, drift])))
                    except psycopg.Error as e:
                        got.append(code_of(e))
                try:
                    want = str(lib.next_id_at(at))
                except sf.SnowflakeError as e:
                    want = e.code  # type: ignore[attr-defined]
                assert got == [want, want], (trace["name"], step, shift)
                if "id" in step:  # the vector's own ID, moved by whole seconds of time
                    moved = layout.decode(int(step["id"]))
                    assert layout.decode(int(want)).sequence == moved.sequence, (trace["name"], step)


def test_bounds_decoding_and_uuids_are_cores(pg: Servers) -> None:
    with connect(pg) as conn:
        for name in ("twitter", "sonyflake", "baidu", "js53",
                     "time:40,shard:12,sequence:11;epoch=2020-01-01T00:00:00Z;tick=2ms"):
            layout = sf.Layout(name)
            # An instant inside every layout's range (baidu's ends in 2024, js53's starts in 2026).
            at_ms = max(1_700_000_123_456, layout.epoch_ms + 1_000_123_456)
            lo = one(conn, "SELECT snowflake.min_id(%s, to_timestamp(%s / 1000.0))", [name, at_ms])
            hi = one(conn, "SELECT snowflake.max_id(%s, to_timestamp(%s / 1000.0))", [name, at_ms])
            assert (lo, hi) == (layout.min_id(at_ms), layout.max_id(at_ms)), name
            node = {f: 1 for f in layout.node_fields}
            id_ = layout.compose(at_ms, node, 3)
            row = conn.execute("SELECT unix_ms, sequence, node FROM snowflake.decode(%s, %s)", [name, id_]).fetchone()
            parts = layout.decode(id_)
            assert row == (parts.unix_ms, parts.sequence, [parts.fields[f] for f in layout.node_fields]), name
            u = one(conn, "SELECT snowflake.to_uuid(%s, %s)", [name, id_])
            assert u == layout.to_uuid(id_), name
            assert one(conn, "SELECT snowflake.from_uuid(%s, %s)", [name, u]) == id_, name
        # The preset schemas: the surface of `snowflake sql`, a search_path away.
        conn.execute("SET search_path = snowflake_twitter, public")
        id_ = one(conn, "SELECT snowflake_next_id(1, 3)")
        assert conn.execute("SELECT datacenter, worker FROM snowflake_decode(%s)", [id_]).fetchone() == (1, 3)
        assert one(conn, "SELECT snowflake_min_id(now() - interval '1 hour')") < id_
        assert one(conn, "SELECT snowflake_max_id(now() + interval '1 hour')") > id_
        # js53: IDs that a JavaScript number holds exactly, the same as the library's.
        conn.execute("SET search_path = snowflake_js53, public")
        id_ = one(conn, "SELECT snowflake_next_id(9)")
        assert 0 < id_ < 2**53 and sf.Layout("js53").decode(id_).fields == {"worker": 9}
        assert conn.execute("SELECT worker FROM snowflake_decode(%s)", [id_]).fetchone() == (9,)


# --- never a repeat ------------------------------------------------------------------------
def test_eight_sessions_for_ten_seconds_never_repeat(pg: Servers) -> None:
    results: list[list[int]] = [[] for _ in range(8)]
    errors: list[BaseException] = []
    go = threading.Barrier(8)

    def session(k: int) -> None:
        try:
            with connect(pg) as conn:
                go.wait()
                end = time.monotonic() + SECONDS
                while time.monotonic() < end:
                    if k % 4 == 3:  # a block at a time, beside single IDs
                        results[k] += one(conn, "SELECT snowflake_twitter.snowflake_next_ids_array(1, 3, 500)")
                    else:
                        results[k].append(one(conn, "SELECT snowflake_twitter.snowflake_next_id(1, 3)"))
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=session, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    every = [i for r in results for i in r]
    print(f"8 sessions, {SECONDS:.0f} s: {len(every)} IDs")
    assert len(every) > 8 * 100
    assert len(set(every)) == len(every), f"{len(every) - len(set(every))} repeats"
    for r in results:
        assert r == sorted(r) and len(set(r)) == len(r), "a session's IDs increase"


def test_next_ids_as_rows_and_array_and_single_never_meet(pg: Servers) -> None:
    with connect(pg) as conn:
        rows = [r[0] for r in conn.execute("SELECT snowflake.next_ids('twitter', ARRAY[3, 9], 20000)").fetchall()]
        arr = one(conn, "SELECT snowflake.next_ids_array('twitter', ARRAY[3, 9], 20000)")
        single = [one(conn, "SELECT snowflake_twitter.snowflake_next_id(3, 9)") for _ in range(100)]
        assert len(rows) == len(arr) == 20000
        every = rows + arr + single
        assert every == sorted(every) and len(set(every)) == len(every)
        assert one(conn, "SELECT count(*) FROM snowflake.next_ids('twitter', ARRAY[3, 9], 0)") == 0


def test_rollbacks_and_statement_timeouts_never_give_an_id_back(pg: Servers) -> None:
    seen: list[int] = []
    with connect(pg) as conn:
        for _ in range(20):
            conn.execute("BEGIN")
            seen.append(one(conn, "SELECT snowflake_twitter.snowflake_next_id(2, 2)"))
            seen += one(conn, "SELECT snowflake_twitter.snowflake_next_ids_array(2, 2, 300)")
            conn.execute("ROLLBACK")
        conn.execute("SET statement_timeout = '100ms'")
        for _ in range(5):
            with pytest.raises(psycopg.errors.QueryCanceled):
                conn.execute("SELECT max(snowflake_twitter.snowflake_next_id(2, 2)) FROM generate_series(1, 100000000)")
        conn.execute("RESET statement_timeout")
        after = one(conn, "SELECT snowflake_twitter.snowflake_next_ids_array(2, 2, 5000)")
    assert min(after) > max(seen)
    every = seen + after
    assert len(set(every)) == len(every)


# --- crashes -------------------------------------------------------------------------------
def burst_then_kill(pg: Servers) -> tuple[set[int], int]:
    """4 sessions issue (single IDs, blocks, transactions rolled back) until the clients hold
    20,000 IDs; then the postmaster and its backends are SIGKILLed mid-burst."""
    got: list[int] = []
    lock = threading.Lock()
    stop = threading.Event()

    def session(k: int) -> None:
        try:
            with connect(pg) as conn:
                while not stop.is_set():
                    if k == 0:
                        ids = one(conn, "SELECT snowflake_twitter.snowflake_next_ids_array(4, 4, 200, max_drift_ms => 1000)")
                    elif k == 1:
                        conn.execute("BEGIN")
                        ids = [one(conn, "SELECT snowflake_twitter.snowflake_next_id(4, 4)")]
                        conn.execute("ROLLBACK")
                    else:
                        ids = [one(conn, "SELECT snowflake_twitter.snowflake_next_id(4, 4, max_drift_ms => 1000)")]
                    with lock:
                        got.extend(ids)
        except psycopg.Error:
            pass  # the server went away

    threads = [threading.Thread(target=session, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    wait_until("20,000 IDs", lambda: len(got) >= 20_000)
    pg.command("kill")
    stop.set()
    for t in threads:
        t.join()
    with lock:
        return set(got), len(got)


@pytest.mark.parametrize("synchronous_commit", ["off", "on"])
def test_kill_9_of_the_postmaster_mid_burst_never_repeats(tmp_path: Path, synchronous_commit: str) -> None:
    with Servers("postgres", "--pg-config", PRELOAD, "--pg-config", f"synchronous_commit={synchronous_commit}",
                 dir=tmp_path) as pg:
        with connect(pg) as conn:
            conn.execute("CREATE EXTENSION snowflake")
        before, n = burst_then_kill(pg)
        pg.command("start")
        with connect(pg) as conn:
            after = one(conn, "SELECT snowflake_twitter.snowflake_next_ids_array(4, 4, 20000, max_wait_ms => 5000)")
            after.append(one(conn, "SELECT snowflake_twitter.snowflake_next_id(4, 4, max_wait_ms => 5000)"))
    assert len(before) == n, "no repeat before the crash"
    repeated = before & set(after)
    print(f"kill -9 (synchronous_commit={synchronous_commit}): {n} IDs before, {len(after)} after, "
          f"{len(repeated)} repeats")
    assert not repeated
    assert min(after) > max(before), "the next run starts past every ID issued before the crash"


def test_a_promoted_asynchronous_standby_never_issues_the_lost_primarys_ids(tmp_path: Path) -> None:
    layout = sf.Layout("twitter")
    with Servers("postgres", "--standby", "--pg-config", PRELOAD, dir=tmp_path) as pg:
        with connect(pg) as admin:
            admin.execute("CREATE EXTENSION snowflake")
            one(admin, "SELECT snowflake_twitter.snowflake_next_id(5, 5)")
            # The insert location, past the install's commit (serve.py's primary runs with
            # synchronous_commit=off: the write location may still be before it).
            lsn = one(admin, "SELECT pg_current_wal_insert_lsn()")
        with connect(pg, "standby") as sb:
            wait_until("the install on the standby",
                       lambda: one(sb, "SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", [lsn]))
            # A standby issues nothing.
            with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
                sb.execute("SELECT snowflake_twitter.snowflake_next_id(5, 5)")
            # Cut off: what the primary issues from now on never reaches it.
            sb.execute("ALTER SYSTEM SET primary_conninfo = ''")
            sb.execute("SELECT pg_reload_conf()")
            wait_until("the standby's WAL receiver to stop",
                       lambda: one(sb, "SELECT count(*) FROM pg_stat_wal_receiver") == 0)
        with connect(pg) as conn:
            primary = set(one(conn, "SELECT snowflake_twitter.snowflake_next_ids_array(5, 5, 200000, "
                                    "max_drift_ms => 1000, max_wait_ms => 5000)"))
            at = server_ms(conn) + 900
            primary.add(one(conn, "SELECT snowflake_twitter.snowflake_next_id_at(5, 5, %s, max_drift_ms => 1000)", [at]))
            ahead = layout.decode(max(primary)).unix_ms - server_ms(conn)
        pg.command("kill")
        pg.command("promote")
        with connect(pg, "standby") as conn:
            try:
                again: Any = one(conn, "SELECT snowflake_twitter.snowflake_next_id_at(5, 5, %s, max_drift_ms => 1000)", [at])
            except psycopg.errors.ObjectNotInPrerequisiteState as e:
                again = code_of(e)
            assert again not in primary, f"the promoted standby issued {again} again"
            after = set(one(conn, "SELECT snowflake_twitter.snowflake_next_ids_array(5, 5, 20000, "
                                  "max_drift_ms => 1000, max_wait_ms => 5000)"))
    gap_ms = layout.decode(min(after)).unix_ms - layout.decode(max(primary)).unix_ms
    print(f"promotion: the primary's last ID {ahead} ms ahead of its clock; the standby's first {gap_ms} ms past it")
    assert not primary & after
    assert min(after) > max(primary)


# --- bad input -----------------------------------------------------------------------------
BAD_INPUT = [
    ("SELECT snowflake.next_id(%s, ARRAY[1, 2])", ["time:41,sequence:0"], "22023", "ERR_SNOWFLAKE_LAYOUT"),
    ("SELECT snowflake.next_id(%s, ARRAY[1, 2])", ["nonesuch"], "22023", "ERR_SNOWFLAKE_LAYOUT"),
    ("SELECT snowflake.next_id(%s, ARRAY[1, 2])", ["time:48,sequence:16;epoch=0"], "22023", "ERR_SNOWFLAKE_VALUE"),
    ("SELECT snowflake.next_id(%s, ARRAY[32, 1])", ["twitter"], "22023", "ERR_SNOWFLAKE_VALUE"),
    ("SELECT snowflake.next_id(%s, ARRAY[-1, 1])", ["twitter"], "22023", "ERR_SNOWFLAKE_VALUE"),
    ("SELECT snowflake.next_id(%s, ARRAY[1])", ["twitter"], "22023", "ERR_SNOWFLAKE_VALUE"),
    ("SELECT snowflake.next_id(%s, ARRAY[1, NULL])", ["twitter"], "42804", "ERR_SNOWFLAKE_TYPE"),
    ("SELECT snowflake.next_id(%s, ARRAY[1, 1], max_drift_ms => 5000)", ["twitter"], "22023", "ERR_SNOWFLAKE_VALUE"),
    ("SELECT snowflake.next_id(%s, ARRAY[1, 1], max_wait_ms => -1)", ["twitter"], "22023", "ERR_SNOWFLAKE_VALUE"),
    ("SELECT snowflake.next_ids_array(%s, ARRAY[1, 1], -1)", ["twitter"], "22023", "ERR_SNOWFLAKE_VALUE"),
    ("SELECT snowflake.next_id_at(%s, ARRAY[1, 1], 4102444800000)", ["twitter"], "22023", "ERR_SNOWFLAKE_VALUE"),
    ("SELECT snowflake.next_id_at(%s, ARRAY[1, 1], 1000)", ["twitter"], "22008", "ERR_SNOWFLAKE_TIME_RANGE"),
    ("SELECT snowflake.min_id(%s, '1999-01-01')", ["twitter"], "22008", "ERR_SNOWFLAKE_TIME_RANGE"),
    ("SELECT snowflake.decode(%s, -1)", ["twitter"], "22003", "ERR_SNOWFLAKE_INVALID_ID"),
    ("SELECT snowflake.from_uuid(%s, gen_random_uuid())", ["twitter"], None, None),
]


def test_bad_input_raises_cores_typed_errors(pg: Servers) -> None:
    with connect(pg) as conn:
        for sql, params, sqlstate, code in BAD_INPUT:
            with pytest.raises(psycopg.Error) as e:
                conn.execute(sql, params)
            if code is None:  # what core says of a random UUID, whichever kind it is
                assert code_of(e.value).startswith("ERR_SNOWFLAKE_"), e.value
            else:
                assert (e.value.sqlstate, code_of(e.value)) == (sqlstate, code), (sql, params, str(e.value))
            # Nothing changed: the identity still issues.
            assert one(conn, "SELECT snowflake_twitter.snowflake_next_id(1, 1)") > 0
