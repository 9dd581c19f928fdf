"""Layout.redis_script() (issue 6): the text is core's (tests/vectors/redis_scripts.json), and
the script, loaded into a real redis-server of the test's own (tests/servers), issues
exact IDs that decode with the binding's Layout to the node values they were asked for."""

from __future__ import annotations

import time
from typing import Any, Iterator

import pytest
import redis
from servers import Servers

import libsnowflake as sf
from conftest import load_vectors

SCRIPTS = load_vectors("redis_scripts")["scripts"]


def test_every_preset_has_a_vector() -> None:
    assert sorted(v["spec"] for v in SCRIPTS) == sorted(sf.Layout.presets())


@pytest.mark.parametrize("v", SCRIPTS, ids=lambda v: v["spec"])
def test_the_script_is_cores(v: dict[str, Any]) -> None:
    layout = sf.Layout(v["spec"])
    script = layout.redis_script()
    assert script == v["script"]
    # The header, from the layout's own properties.
    names = " ".join(f"<{n}>" for n in layout.node_fields)
    assert f"\n-- EVALSHA <sha1> 1 <state-key> {names}\n" in script
    assert f"\nlocal EPOCH = {layout.epoch_ms}\n" in script
    assert f"\nlocal TICK = {layout.tick_ms}\n" in script
    assert list(layout.node_fields) == v["node_fields"]


def test_a_custom_layout_gets_its_own_script() -> None:
    layout = sf.Layout("time:40,region:4,shard:8,sequence:11;epoch=1600000000000;tick=2ms")
    script = layout.redis_script()
    assert script.startswith(f"-- libsnowflake: IDs of the layout {layout}\n")
    assert "\n-- EVALSHA <sha1> 1 <state-key> <region> <shard>\n" in script
    assert "\nlocal NODE = {{'region', 19, 0, 15, '15'}, {'shard', 11, 0, 255, '255'}}\n" in script


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[redis.Redis]:
    # A redis-server of this module's own, answering PING on its unix socket (tests/servers).
    with Servers("redis", "--no-tcp", dir=tmp_path_factory.mktemp("redis")) as s:
        client = redis.Redis(unix_socket_path=s.info["redis"]["unix_socket"], decode_responses=True)
        try:
            yield client
        finally:
            client.close()


def redis_ms(r: redis.Redis) -> int:
    s, us = r.time()
    return int(s) * 1000 + int(us) // 1000


def take(r: redis.Redis, sha: str, key: str, node: list[int], n: int) -> list[int]:
    """n IDs from the script; a full tick (an error reply) is retried."""
    ids: list[int] = []
    while len(ids) < n:
        try:
            reply = r.evalsha(sha, 1, key, *node)
        except redis.ResponseError as e:
            if "Redis started within this tick" in str(e):
                # The first second of a Redis: the script waits out the tick of its start.
                time.sleep(0.02)
                continue
            assert str(e).startswith("ERR_SNOWFLAKE_SEQUENCE_EXHAUSTED retry_after_ms="), e
            continue
        assert isinstance(reply, str) and reply.isdigit(), reply
        ids.append(int(reply))
    return ids


@pytest.mark.parametrize("spec,node", [
    ("twitter", {"datacenter": 17, "worker": 29}),      # 63-bit IDs, far above 2**53
    ("discord", {"worker": 31, "process": 1}),
    ("sonyflake", {"machine": 65535}),                  # 10 ms ticks, node below the sequence
    ("game", {"platform": 5, "area": 2047, "app": 3}),  # 64 IDs a tick, 5 node fields
])
def test_the_script_issues_exact_ids_in_redis(server: redis.Redis, spec: str,
                                              node: dict[str, int]) -> None:
    layout = sf.Layout(spec)
    sha = server.script_load(layout.redis_script())
    values = [node[name] for name in layout.node_fields]
    key = f"ids:{spec}"
    before = redis_ms(server)
    ids = take(server, sha, key, values, 500)
    after = redis_ms(server)
    assert all(a < b for a, b in zip(ids, ids[1:])), "one key's IDs increase"
    assert ids[0] > 2**53, "IDs above 2**53 (where a double would round) come out exact"
    for id_ in ids:
        parts = layout.decode(id_)
        assert parts.fields == node
        # Its tick holds an instant between the two TIME calls around the batch.
        assert before - layout.tick_ms < parts.unix_ms <= after
        # Exact: the ID is the one the binding composes from its decoded parts.
        assert layout.compose(parts.unix_ms, parts.fields, parts.sequence) == id_
    # The state key holds the last tick and sequence, as the script's semantics say.
    last = layout.decode(ids[-1])
    assert server.hmget(key, "t", "s") == [str(last.tick), str(last.sequence)]


def test_the_script_rejects_bad_node_values(server: redis.Redis) -> None:
    layout = sf.Layout("twitter")
    sha = server.script_load(layout.redis_script())
    with pytest.raises(redis.ResponseError, match="^ERR_SNOWFLAKE_VALUE worker = 32 is out of range"):
        server.evalsha(sha, 1, "ids:bad", 1, 32)
    with pytest.raises(redis.ResponseError, match="^ERR_SNOWFLAKE_VALUE expected 2 node values, got 1"):
        server.evalsha(sha, 1, "ids:bad", 1)
    # Issue 26: strict like every front end (tonumber() took these, the last as worker 1).
    for bad in ["1.0", "0x1", " 1", "1e0", "+1", "0.99999999999999999", "", "1 "]:
        with pytest.raises(redis.ResponseError, match=r"^ERR_SNOWFLAKE_VALUE worker = .*: a node value is a whole number in digits"):
            server.evalsha(sha, 1, "ids:bad", 1, bad)
    assert server.exists("ids:bad") == 0, "a rejected call leaves no state"
