"""Issue 28 in Python: configuration from the environment (``Generator()``), where each value
came from (``stats().sources``), the UUIDv7 view, the js53 preset, and the framework adapters
(``libsnowflake.pydantic``, ``.sqlalchemy``, ``.django``) tested with the frameworks
themselves, on SQLite and on a real PostgreSQL started by tests/servers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any, Iterator

import psycopg
import pytest
import sqlalchemy as sa
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

import libsnowflake as sf
from conftest import REPO, load_vectors
from libsnowflake.sqlalchemy import SnowflakeId, snowflake_default
from servers import Servers

UUIDS = load_vectors("uuid")
TWITTER = sf.Layout("twitter")


@pytest.fixture(scope="module")
def pg(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    with Servers("postgres", dir=tmp_path_factory.mktemp("postgres")) as servers:
        yield servers.info["postgres"]


# ---- configuration from the environment ------------------------------------------------------


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in ("SNOWFLAKE_LAYOUT", "SNOWFLAKE_NODE", "SNOWFLAKE_OPTIONS", "SNOWFLAKE_REQUIRE_NODE"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_generator_takes_what_the_code_leaves_unset_from_the_environment(env: pytest.MonkeyPatch) -> None:
    env.setenv("SNOWFLAKE_LAYOUT", "discord")
    env.setenv("SNOWFLAKE_NODE", "worker=21,process=7")
    env.setenv("SNOWFLAKE_OPTIONS", "max_wait_ms=0;sequence_start=spread:4")
    g = sf.Generator()
    assert g.layout == sf.Layout("discord")
    assert g.node == {"worker": 21, "process": 7}
    assert g.max_wait_ms == 0
    assert sf.Layout("discord").decode(g.next_id()).fields == {"worker": 21, "process": 7}
    sources = g.stats().sources
    assert sources["layout"] == "SNOWFLAKE_LAYOUT" and sources["node"] == "SNOWFLAKE_NODE"
    assert sources["max_wait_ms"] == "SNOWFLAKE_OPTIONS" and sources["sequence_start"] == "SNOWFLAKE_OPTIONS"
    assert sources["max_drift_ms"] == "default"
    assert list(sources)[:3] == ["layout", "node", "max_drift_ms"]

    # The code's values win, key by key.
    g = sf.Generator("twitter", {"datacenter": 1, "worker": 2}, max_wait_ms=5)
    assert (g.layout, g.max_wait_ms) == (TWITTER, 5)
    s = g.stats().sources
    assert (s["layout"], s["node"], s["max_wait_ms"], s["sequence_start"]) == ("code", "code", "code", "SNOWFLAKE_OPTIONS")
    # The code's layout and the environment's node values: read against that layout.
    env.setenv("SNOWFLAKE_NODE", "datacenter=3,worker=4")
    g = sf.Generator("twitter")
    assert g.node == {"datacenter": 3, "worker": 4} and g.stats().sources["node"] == "SNOWFLAKE_NODE"


def test_nothing_set_is_twitter_zeros_and_defaults(env: pytest.MonkeyPatch) -> None:
    g = sf.Generator(isolated=True)
    assert g.layout == TWITTER and g.node == {"datacenter": 0, "worker": 0}
    assert {k: v for k, v in g.stats().sources.items() if v != "default"} == {"isolated": "code"}


@pytest.mark.parametrize(
    "name, value, error, message",
    [
        ("SNOWFLAKE_LAYOUT", "twiter", sf.LayoutError, 'environment variable SNOWFLAKE_LAYOUT="twiter": invalid layout: `twiter` is not a preset'),
        ("SNOWFLAKE_LAYOUT", "", sf.LayoutError, 'environment variable SNOWFLAKE_LAYOUT="": invalid layout: the layout spec is empty'),
        ("SNOWFLAKE_NODE", "datacenter=1", sf.ValueRangeError, 'environment variable SNOWFLAKE_NODE="datacenter=1": the node values give no value for `worker`'),
        ("SNOWFLAKE_NODE", "datacenter=1,worker=$(POD_INDEX)", sf.ValueRangeError, 'SNOWFLAKE_NODE="datacenter=1,worker=$(POD_INDEX)": `worker`: a node value is a whole number'),
        ("SNOWFLAKE_NODE", " ", sf.ValueRangeError, "the variable is set but empty"),
        # The options text's `;` hint (issue 29) reaches the variable too.
        ("SNOWFLAKE_OPTIONS", "max_wait_ms=0,max_drift_ms=5", sf.ValueRangeError, 'SNOWFLAKE_OPTIONS="max_wait_ms=0,max_drift_ms=5": `max_wait_ms`: options are separated by `;`, not `,`'),
        # A retired option in the variable says why, naming the variable.
        ("SNOWFLAKE_OPTIONS", "run_lock=true", sf.ValueRangeError, 'SNOWFLAKE_OPTIONS="run_lock=true": `run_lock`: run_lock was retired'),
        ("SNOWFLAKE_OPTIONS", "lease=redis://app:s3cret@cache:6379/0;lease_ttl_ms=1", sf.ValueRangeError, 'SNOWFLAKE_OPTIONS="lease=redis://app:***@cache:6379/0;lease_ttl_ms=1": lease_ttl_ms = 1 is out of range'),
    ],
)
def test_a_malformed_variable_is_a_typed_error_naming_it(
    env: pytest.MonkeyPatch, name: str, value: str, error: type, message: str
) -> None:
    env.setenv(name, value)
    with pytest.raises(error) as e:
        sf.Generator()
    assert message in str(e.value)
    assert "s3cret" not in str(e.value)
    assert isinstance(e.value, ValueError)


# Issue 40: the environment's rules are core's, so each message is the same in every front end.
ISSUE_40_REFUSED = [
    # A lease's field is the lease's, from the environment as from the code.
    ({"SNOWFLAKE_NODE": "datacenter=1,worker=0", "SNOWFLAKE_OPTIONS": "lease=local"}, sf.ValueRangeError,
     'environment variable SNOWFLAKE_NODE="datacenter=1,worker=0": `worker`: this field is set by the generator (the lease or the rollover): give it no node value'),
    # A `;` in a lease's password: neither half of it in the message.
    ({"SNOWFLAKE_OPTIONS": "lease=redis://app:pa;ss@cache:6379/0;max_wait_ms=0"}, sf.ValueRangeError,
     'environment variable SNOWFLAKE_OPTIONS="lease=redis://***;***;max_wait_ms=0": `lease`: the lease address holds a `;` (in its password?), which separates options: percent-encode it as %3B, or give the password with lease_password_file='),
    # An option misplaced in the layout's variable: its key, never its value.
    ({"SNOWFLAKE_LAYOUT": "twitter;lease=redis://app:s3cret@cache/0"}, sf.ValueRangeError,
     'environment variable SNOWFLAKE_LAYOUT="twitter;lease=***": `lease`: is not part of a layout (a layout takes `epoch=` and `tick=`): options go in SNOWFLAKE_OPTIONS'),
    ({"SNOWFLAKE_OPTIONS": "isolated=true"}, sf.ValueRangeError,
     'environment variable SNOWFLAKE_OPTIONS="isolated=true": `isolated`: isolated takes a generator outside the host\'s record (for tests and replays with a clock of their own): give it in the code, never from the environment'),
    ({"SNOWFLAKE_REQUIRE_NODE": "1"}, sf.ValueRangeError,
     'environment variable SNOWFLAKE_REQUIRE_NODE="1": `SNOWFLAKE_NODE`: no node values are given, in the code or in SNOWFLAKE_NODE, and node 0 is refused: set SNOWFLAKE_NODE (`datacenter=1,worker=7`) or a lease'),
    ({"SNOWFLAKE_NODE": "datacenter=1,wroker=7"}, sf.ValueRangeError,
     'environment variable SNOWFLAKE_NODE="datacenter=1,wroker=7": the layout has no field `wroker`: did you mean `worker`? (its node fields: datacenter, worker)'),
]


@pytest.mark.parametrize("variables, error, message", ISSUE_40_REFUSED)
def test_issue_40_environment_refusals_say_exactly_what(env: pytest.MonkeyPatch, variables: dict, error: type, message: str) -> None:
    env.delenv("SNOWFLAKE_REQUIRE_NODE", raising=False)
    for name, value in variables.items():
        env.setenv(name, value)
    with pytest.raises(error) as e:
        sf.Generator()
    assert str(e.value) == message
    assert "s3cret" not in str(e.value) and "pa;ss" not in str(e.value) and "ss@" not in str(e.value)


def test_a_lease_and_the_other_node_values_from_the_environment(env: pytest.MonkeyPatch) -> None:
    env.setenv("SNOWFLAKE_NODE", "datacenter=1")
    env.setenv("SNOWFLAKE_OPTIONS", "lease=local;max_wait_ms=0")
    g = sf.Generator()
    parts = TWITTER.decode(g.next_id())
    assert parts.fields["datacenter"] == 1 and g.stats().sources["node"] == "SNOWFLAKE_NODE"
    # The same as the code's `lease="local"` with `node="datacenter=1"`.
    h = sf.Generator(node="datacenter=1", lease="local", max_wait_ms=0)
    assert TWITTER.decode(h.next_id()).fields["datacenter"] == 1
    assert TWITTER.decode(h.next_id()).fields["worker"] != parts.fields["worker"]


@pytest.mark.parametrize("empty", [{}, "", None])
def test_empty_node_values_give_none_so_the_environment_applies(env: pytest.MonkeyPatch, empty: object) -> None:
    env.setenv("SNOWFLAKE_NODE", "datacenter=2,worker=9")
    g = sf.Generator("twitter", empty, max_wait_ms=0)
    assert g.node == {"datacenter": 2, "worker": 9} and g.stats().sources["node"] == "SNOWFLAKE_NODE"


def test_warnings_go_to_stderr_once(env: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> None:
    env.setenv("SNOWFLAKE_NOD", "datacenter=1,worker=7")
    env.setenv("SNOWFLAKE_NODE", "datacenter=3,worker=4")
    env.setenv("SNOWFLAKE_USER", "warehouse-user")  # the data warehouse's: never warned about
    for _ in range(3):
        sf.Generator("twitter", {"datacenter": 5, "worker": 6}, max_wait_ms=0)
    err = capfd.readouterr().err
    assert err.count("libsnowflake: warning: environment variable SNOWFLAKE_NOD is not one libsnowflake reads (it is ignored): did you mean SNOWFLAKE_NODE?\n") == 1, err
    assert err.count('libsnowflake: warning: environment variable SNOWFLAKE_NODE="datacenter=3,worker=4" is set, but the code gives node values (datacenter=5,worker=6), which win: leave node values to the environment, or unset SNOWFLAKE_NODE\n') == 1, err
    assert "SNOWFLAKE_USER" not in err


def test_the_options_text_and_keywords_win_over_the_environment_key_by_key(env: pytest.MonkeyPatch) -> None:
    # Issue 28 meets issue 29: `options="…"` and the keywords are the code's options, together;
    # SNOWFLAKE_OPTIONS fills only the keys the code gives neither way.
    env.setenv("SNOWFLAKE_OPTIONS", "max_wait_ms=0;max_drift_ms=7;sequence_start=spread:4")
    g = sf.Generator("twitter", "datacenter=1,worker=5", options="max_wait_ms=25", max_drift_ms=3)
    assert (g.max_wait_ms, g.max_drift_ms) == (25, 3)
    s = g.stats().sources
    assert (s["max_wait_ms"], s["max_drift_ms"], s["sequence_start"]) == ("code", "code", "SNOWFLAKE_OPTIONS")
    # A key given twice by the code is refused, whatever the environment holds.
    with pytest.raises(sf.ValueRangeError, match="given both in the options text and as a keyword"):
        sf.Generator("twitter", "datacenter=1,worker=5", options="max_wait_ms=25", max_wait_ms=3)
    # An unknown keyword is still a TypeError with the environment set.
    with pytest.raises(sf.SnowflakeTypeError, match="unexpected keyword argument `max_wait`"):
        sf.Generator("twitter", max_wait=0)  # type: ignore[call-arg]
    # The node values' text from the environment, read against the code's layout.
    env.setenv("SNOWFLAKE_NODE", "worker=9,process=2")
    g = sf.Generator("discord", options="max_wait_ms=25")
    assert g.node == {"worker": 9, "process": 2}
    assert sf.Layout("discord").decode(g.next_id()).fields == {"worker": 9, "process": 2}
    assert g.stats().sources["node"] == "SNOWFLAKE_NODE"
    # The code's text wins over the environment's.
    g = sf.Generator("discord", "worker=10,process=3", options="max_wait_ms=25")
    assert g.node == {"worker": 10, "process": 3} and g.stats().sources["node"] == "code"


def test_generators_made_in_code_say_so(env: pytest.MonkeyPatch) -> None:
    g = sf.Generator("twitter", "datacenter=1,worker=1", isolated=True, max_wait_ms=0)
    sources = g.stats().sources
    assert sources["layout"] == sources["node"] == sources["isolated"] == sources["max_wait_ms"] == "code"
    assert sources["shared"] == "default"
    assert "sources" in dir(g.stats())


# ---- UUIDv7 -----------------------------------------------------------------------------------


def test_uuid_vectors() -> None:
    n = 0
    for row in UUIDS["layouts"]:
        layout = sf.Layout(row["spec"])
        previous = None
        for case in row["cases"]:
            u = layout.to_uuid(int(case["id"]))
            assert isinstance(u, uuid.UUID)
            assert str(u) == case["uuid"] and u.version == 7 and u.variant == uuid.RFC_4122
            assert u.int >> 80 == case["unix_ms"]
            assert layout.from_uuid(u) == int(case["id"]) == layout.from_uuid(case["uuid"].upper())
            if previous is not None:
                assert u > previous and str(u) > str(previous)
            previous = u
            n += 1
    assert n > 50
    for case in UUIDS["to_uuid_invalid"]:
        error = sf.TimeRangeError if case["error"] == "ERR_SNOWFLAKE_TIME_RANGE" else sf.InvalidIdError
        with pytest.raises(error):
            sf.Layout(case["spec"]).to_uuid(int(case["id"]))
    for case in UUIDS["from_uuid_invalid"]:
        with pytest.raises(sf.InvalidIdError, match=case["message_contains"]):
            sf.Layout(case["spec"]).from_uuid(case["uuid"])
    with pytest.raises(sf.SnowflakeTypeError):
        TWITTER.from_uuid(12345)  # type: ignore[arg-type]
    # A random UUIDv7 (Python 3.14's uuid7, or one made by hand) is no ID of the layout.
    with pytest.raises(sf.InvalidIdError):
        TWITTER.from_uuid(uuid.UUID(int=(1700000000000 << 80) | (7 << 76) | (0b10 << 62) | 0x1234))


def test_uuid_view_of_new_ids_reads_the_right_time_in_postgresql(pg: dict[str, Any]) -> None:
    g = sf.Generator("twitter", {"datacenter": 1, "worker": 5}, isolated=True)
    ids = g.next_ids(2000)
    uuids = [TWITTER.to_uuid(i) for i in ids]
    with psycopg.connect(pg["dsn"], autocommit=True) as conn:
        conn.execute("CREATE TABLE uuid_view (u uuid PRIMARY KEY, id bigint NOT NULL)")
        with conn.cursor() as cur:
            cur.executemany("INSERT INTO uuid_view VALUES (%s, %s)", list(zip(uuids, ids)))
        version = conn.execute("SHOW server_version_num").fetchone()[0]
        # The 48-bit timestamp, read from the bits (PostgreSQL 17+ has uuid_extract_timestamp).
        extract = (
            "floor(extract(epoch FROM uuid_extract_timestamp(u)) * 1000)::bigint"
            if int(version) >= 170000
            else "('x' || substr(replace(u::text, '-', ''), 1, 12))::bit(48)::bigint"
        )
        rows = conn.execute(f"SELECT id, {extract}, uuid_extract_version(u) FROM uuid_view ORDER BY u" if int(version) >= 170000
                            else f"SELECT id, {extract}, substr(u::text, 15, 1)::int FROM uuid_view ORDER BY u").fetchall()
    assert [r[0] for r in rows] == ids  # sorted as UUIDs == sorted as IDs
    assert all(r[1] == TWITTER.decode(r[0]).unix_ms and r[2] == 7 for r in rows)


def test_js53_ids_are_safe_integers() -> None:
    js53 = sf.Layout("js53")
    assert (js53.total_bits, js53.capacity_per_tick, str(js53)) == (53, 64, "time:41,worker:6,sequence:6;epoch=1767225600000;tick=1ms")
    assert js53.last_unix_ms == 1767225600000 + (1 << 41) - 1
    g = sf.Generator("js53", {"worker": 63}, isolated=True)
    assert all(i < 2**53 for i in g.next_ids(1000))


# ---- pydantic -----------------------------------------------------------------------------------


def test_pydantic_snowflake_id() -> None:
    from pydantic import BaseModel, ValidationError

    from libsnowflake.pydantic import SnowflakeId

    class Order(BaseModel):
        id: SnowflakeId
        parent: SnowflakeId | None = None

    big = (1 << 64) - 1
    assert Order(id=175928847299117063).id == 175928847299117063
    assert Order(id="175928847299117063").id == 175928847299117063
    assert type(Order(id="7").id) is int
    assert Order(id=big).model_dump_json() == f'{{"id":"{big}","parent":null}}'
    assert Order(id=5).model_dump() == {"id": 5, "parent": None}
    assert Order.model_validate_json('{"id": 175928847299117063}').id == 175928847299117063
    assert Order.model_validate_json('{"id": "18446744073709551615"}').id == big
    for bad in [True, 1.0, -1, big + 1, "12a", " 12", "+12", "", "0x10", "18446744073709551616", None, [1]]:
        with pytest.raises(ValidationError):
            Order(id=bad)
    for bad_json in ['{"id": 1.5}', '{"id": true}', '{"id": "-3"}', '{"id": -3}']:
        with pytest.raises(ValidationError):
            Order.model_validate_json(bad_json)
    schema = Order.model_json_schema()["properties"]["id"]
    assert schema["type"] == "string" and schema["pattern"] == "^[0-9]{1,20}$"
    # Round trip through JSON: every bit kept, as a JavaScript client would see it (a string).
    g = sf.Generator("discord", {"worker": 1, "process": 2}, isolated=True)
    for i in g.next_ids(100):
        dumped = Order(id=i).model_dump_json()
        assert json.loads(dumped)["id"] == str(i) and Order.model_validate_json(dumped).id == i


def test_pydantic_snowflake_id_agrees_with_every_languages_json_helpers() -> None:
    # tests/vectors/json_ids.json: the values Node's libsnowflake/json parse() and stringify()
    # accept and refuse too (issue 40). Python's JSON parser keeps a number's digits, so an
    # exact_number case reads as its ID here.
    from pydantic import BaseModel, TypeAdapter, ValidationError

    from libsnowflake.pydantic import SnowflakeId

    class Order(BaseModel):
        id: SnowflakeId

    cases = load_vectors("json_ids")
    for c in cases["parse"]:
        text = '{"id": %s}' % c["json"]
        if c["id"] is not None:
            assert Order.model_validate_json(text).id == int(c["id"]), text
        else:
            with pytest.raises(ValidationError):
                Order.model_validate_json(text)
    adapter = TypeAdapter(SnowflakeId)
    for c in cases["stringify"]:
        if c["json"] is not None:
            assert adapter.dump_json(adapter.validate_python(int(c["id"]))).decode() == c["json"]
        else:
            with pytest.raises(ValidationError):
                adapter.validate_python(int(c["id"]))


# ---- SQLAlchemy ------------------------------------------------------------------------------------


def sqlalchemy_round(url: str, **engine_args: Any) -> None:
    ids = sf.Generator("twitter", {"datacenter": 4, "worker": 11})

    class Base(DeclarativeBase):
        pass

    class Order(Base):
        __tablename__ = "orders_sa"
        id: Mapped[int] = mapped_column(SnowflakeId, primary_key=True, default=snowflake_default(ids))
        item: Mapped[str] = mapped_column(sa.String(40))

    class Event(Base):
        __tablename__ = "events_sa"
        id: Mapped[int] = mapped_column(SnowflakeId, primary_key=True, default=snowflake_default())
        order_id: Mapped[int] = mapped_column(SnowflakeId, sa.ForeignKey("orders_sa.id"))

    engine = sa.create_engine(url, **engine_args)
    Base.metadata.drop_all(engine)
    Base.metadata.create_all(engine)
    assert "BIGINT" in str(sa.schema.CreateTable(Order.__table__).compile(engine)).upper()
    start = int(time.time() * 1000)
    with Session(engine) as session:
        orders = [Order(item=str(i)) for i in range(300)]
        session.add_all(orders)
        session.flush()  # the keys are made in Python: known before the INSERT
        keys = [o.id for o in orders]
        assert keys == sorted(set(keys)) and all(TWITTER.decode(k).fields == {"datacenter": 4, "worker": 11} for k in keys)
        session.add_all([Event(order_id=k) for k in keys[:10]])
        session.commit()
    with Session(engine) as session:
        got = session.scalars(sa.select(Order.id).order_by(Order.id)).all()
        assert got == keys and all(type(k) is int for k in got)
        # An ID's time may lag the wall clock by one tick (the cached clock): from start - 1.
        lo, hi = TWITTER.min_id(start - 1), TWITTER.max_id(int(time.time() * 1000))
        assert session.scalars(sa.select(Order.id).where(Order.id.between(lo, hi)).order_by(Order.id)).all() == keys
        events = session.scalars(sa.select(Event.id)).all()
        # snowflake_default(): the process's generator from the environment (twitter, zeros here).
        assert len(events) == 10 and all(TWITTER.decode(e).fields == {"datacenter": 0, "worker": 0} for e in events)
        session.add(Order(id=1 << 63, item="too big"))
        with pytest.raises(sa.exc.StatementError) as e:
            session.flush()
        assert isinstance(e.value.orig, sf.ValueRangeError)
    Base.metadata.drop_all(engine)
    engine.dispose()


def test_sqlalchemy_on_sqlite(tmp_path: Path) -> None:
    sqlalchemy_round(f"sqlite:///{tmp_path / 'orders.db'}")


def test_sqlalchemy_on_postgresql(pg: dict[str, Any]) -> None:
    sqlalchemy_round("postgresql+psycopg://", creator=lambda: psycopg.connect(pg["dsn"]))


# ---- Django, with its own test runner -----------------------------------------------------------------


def run_django(extra_env: dict[str, str]) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SNOWFLAKE_") or k == "SNOWFLAKE_SHM_DIR"}
    env.update(
        SNOWFLAKE_NODE="datacenter=7,worker=30",
        EXPECT_DATACENTER="7",
        EXPECT_WORKER="30",
        PYTHONPATH=str(Path(__file__).parent / "django_project"),
        **extra_env,
    )
    r = subprocess.run(
        [sys.executable, "manage.py", "test", "--noinput", "-v", "2", "orders"],
        cwd=Path(__file__).parent / "django_project",
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    assert "Ran 9 tests" in out and "OK" in out, out
    return out


def test_django_on_sqlite() -> None:
    run_django({})


def test_django_on_postgresql(pg: dict[str, Any]) -> None:
    out = run_django({"SNOWFLAKE_TEST_PG": f"{pg['socket_dir']},{pg['port']},{pg['user']},{pg['database']}"})
    assert f"('test_{pg['database']}')" in out, out  # Django's test database on the server
