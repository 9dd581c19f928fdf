"""The Python API of issue 4: layouts, parts, generators, blocks, stats, encodings."""

from __future__ import annotations

import array
import datetime as dt
import pickle
import threading
import time

import pytest

import libsnowflake as sf

UTC = dt.timezone.utc


def test_public_names() -> None:
    for name in sf.__all__:
        obj = getattr(sf, name)
        if name != "__version__":
            assert obj.__doc__, f"{name} has no docstring"
    assert sf.__version__.count(".") == 2
    # The compiled module stays private: the public classes say they are libsnowflake's.
    assert sf.Generator.__module__ == "libsnowflake"


def test_docstrings_on_every_method() -> None:
    for cls in (sf.Layout, sf.Generator, sf.Parts, sf.Field, sf.Block, sf.Stats):
        for name, member in vars(cls).items():
            if not name.startswith("_"):
                assert member.__doc__, f"{cls.__name__}.{name} has no docstring"


def test_layout_text_eq_hash_repr() -> None:
    a = sf.Layout("twitter")
    b = sf.Layout("time:41, datacenter:5, worker:5, sequence:12; tick=1ms; epoch=2010-11-04T01:42:54.657Z")
    assert a == b and hash(a) == hash(b) and a is not b
    assert a != sf.Layout("discord") and a != "twitter"
    assert str(a) == "time:41,datacenter:5,worker:5,sequence:12;epoch=1288834974657;tick=1ms"
    assert repr(a) == f"Layout('{a}')"
    assert eval(repr(a), {"Layout": sf.Layout}) == a
    assert {a: 1}[b] == 1
    assert pickle.loads(pickle.dumps(a)) == a
    assert a.node_fields == ("datacenter", "worker")
    assert [f.kind for f in a.fields] == ["time", "node", "node", "sequence"]
    assert a.fields[0].max == 2**41 - 1


def test_presets() -> None:
    presets = sf.Layout.presets()
    assert list(presets) == ["twitter", "discord", "instagram", "sonyflake", "baidu", "mastodon", "game", "js53"]
    for name, layout in presets.items():
        assert sf.Layout(name) == layout
    assert presets["sonyflake"].tick_ms == 10
    assert presets["baidu"].tick_ms == 1000


def test_decode_parts_frozen_with_datetime() -> None:
    # A real Discord ID (from Discord's documentation).
    parts = sf.Layout("discord").decode(175928847299117063)
    assert (parts.unix_ms, parts.sequence, parts.fields) == (1462015105796, 7, {"worker": 1, "process": 0})
    assert parts.datetime == dt.datetime(2016, 4, 30, 11, 18, 25, 796000, tzinfo=UTC)
    assert parts.datetime.tzinfo is not None and parts.datetime.utcoffset() == dt.timedelta(0)
    with pytest.raises(AttributeError):
        parts.sequence = 8  # type: ignore[misc]
    parts.fields["worker"] = 9  # a copy: the parts stay as they were
    assert parts.fields["worker"] == 1
    assert parts == sf.Layout("discord").decode(175928847299117063)
    assert hash(parts) == hash(sf.Layout("discord").decode(175928847299117063))
    assert "sequence=7" in repr(parts)


def test_compose_and_bounds_accept_aware_datetimes() -> None:
    layout = sf.Layout("discord")
    when = dt.datetime(2016, 4, 30, 11, 18, 25, 796000, tzinfo=UTC)
    assert layout.compose(when, {"worker": 1, "process": 0}, sequence=7) == 175928847299117063
    # Another zone, the same instant.
    tokyo = when.astimezone(dt.timezone(dt.timedelta(hours=9)))
    assert layout.min_id(tokyo) == layout.min_id(1462015105796)
    assert layout.max_id(when) == layout.min_id(when) + 2**22 - 1
    # Exact to the millisecond, where a float timestamp would round.
    odd = dt.datetime(2286, 11, 20, 17, 46, 40, 1000, tzinfo=UTC)
    assert sf.Layout("mastodon").min_id(odd) >> 16 == 10_000_000_000_001
    with pytest.raises(TypeError, match="naive"):
        layout.min_id(dt.datetime(2020, 1, 1))


def test_generator_defaults_and_properties() -> None:
    gen = sf.Generator()
    assert gen.layout == sf.Layout("twitter")
    assert gen.node == {"datacenter": 0, "worker": 0}
    assert (gen.max_drift_ms, gen.max_wait_ms, gen.sequence_start, gen.rollover, gen.isolated) == (
        0, 1000, "zero", None, False)
    g2 = sf.Generator(sf.Layout("sonyflake"), {"machine": 7}, max_drift_ms=50, max_wait_ms=0,
                      sequence_start="spread:16", isolated=True)
    assert (g2.max_drift_ms, g2.max_wait_ms, g2.sequence_start, g2.isolated) == (50, 0, "spread:16", True)
    assert g2.node == {"machine": 7}
    assert "machine=7" in repr(g2)
    g3 = sf.Generator("time:41,clock:3,worker:7,sequence:12;epoch=0", {"worker": 1}, rollover="clock",
                      isolated=True)
    assert g3.rollover == "clock"


def test_next_id_iteration_and_batches() -> None:
    gen = sf.Generator("twitter", {"datacenter": 2, "worker": 9})
    a = gen.next_id()
    b = next(gen)
    it = iter(gen)
    assert it is gen
    c = [x for x, _ in zip(gen, range(5))]
    d = gen.next_ids(10_000)
    e = gen.next_ids_array(10_000)
    assert isinstance(d, list) and isinstance(e, array.array) and e.typecode == "Q"
    assert gen.next_ids(0) == [] and len(gen.next_ids_array(0)) == 0
    seq = [a, b, *c, *d, *e, gen.try_next_id()]
    assert seq == sorted(seq) and len(set(seq)) == len(seq)
    layout = gen.layout
    assert {tuple(layout.decode(x).fields.values()) for x in seq} == {(2, 9)}
    assert abs(layout.decode(seq[-1]).unix_ms - time.time() * 1000) < 5_000


def test_reserve_block() -> None:
    gen = sf.Generator("time:41,worker:10,sequence:12;epoch=1288834974657", {"worker": 3})
    block = gen.reserve(100)
    assert 1 <= block.count <= 100 and block.stride == 1 and len(block) == block.count
    ids = list(block)
    assert ids == list(range(block.first, block.first + block.count))
    assert block.last == ids[-1] and ids[0] in block and ids[-1] + 1 not in block and "x" not in block
    assert gen.next_id() > block.last
    # Sonyflake's sequence sits above the machine id: the stride is 2**16.
    sony = sf.Generator("sonyflake", {"machine": 1}).reserve(3)
    assert sony.stride == 2**16 and list(sony) == [sony.first + i * 2**16 for i in range(sony.count)]


def test_stats() -> None:
    # 256 IDs a tick, 5000 IDs: about 20 ticks. A wait is counted only when the clock has not
    # moved on by itself meanwhile, so one tick boundary alone could pass without a wait on a
    # slow or loaded machine; twenty cannot.
    gen = sf.Generator("time:41,worker:10,sequence:8;epoch=0", {"worker": 5}, isolated=True)
    gen.next_ids(5000)
    s = gen.stats()
    assert s.issued == 5000 and s.waits >= 1 and s.clock_behind == 0 and s.rollovers == 0
    assert "issued=5000" in repr(s)


def test_same_identity_shares_state() -> None:
    # A new generator per request cannot repeat an ID: same layout and node, one state.
    ids = []
    for _ in range(2000):
        ids.append(sf.Generator("twitter", {"datacenter": 3, "worker": 3}).next_id())
    assert len(set(ids)) == len(ids) and ids == sorted(ids)


def test_encode_decode_str() -> None:
    assert sf.encode(175928847299117063) == "0Czks0tP37X"
    assert sf.encode(175928847299117063, "base62") == "0Czks0tP37X"
    assert sf.decode_str("0Czks0tP37X") == 175928847299117063
    assert sf.encode(255, "hex") == "00000000000000ff"
    assert sf.encode(0, "hex", reverse=True) == "ffffffffffffffff"
    assert sf.decode_str("ffffffffffffffff", "hex", reverse=True) == 0
    assert sf.decode_str("0000000000o1l", "base32") == 33


def test_waiting_releases_the_gil() -> None:
    # 4 IDs a second: the fifth waits for the next second. Another thread must run meanwhile.
    gen = sf.Generator("time:41,worker:10,sequence:2;epoch=0;tick=1s", {"worker": 9}, max_wait_ms=2000)
    progress = 0
    done = threading.Event()

    def count() -> None:
        nonlocal progress
        while not done.is_set():
            progress += 1

    t = threading.Thread(target=count)
    t.start()
    try:
        start = time.perf_counter()
        ids = gen.next_ids(9)  # at least two seconds' worth: waits at least once
        waited = time.perf_counter() - start
    finally:
        done.set()
        t.join()
    assert ids == sorted(set(ids)) and gen.stats().waits >= 1
    assert waited > 0.5
    # Holding the GIL for the wait would have left the counter near zero.
    assert progress > 100_000, progress


def test_plan_is_cores_planner() -> None:
    twitter = sf.Layout("twitter")
    p = twitter.plan(hosts=1_000, processes_per_host=50, peak_per_second=100_000, years=10)
    node_bits = sum(f.bits for f in twitter.fields if f.kind == "node")
    assert p["node_values"] == 2**node_bits
    assert p["hosts_fit"] and not p["processes_fit"]
    assert p["capacity_per_second"] == twitter.capacity_per_tick * 1000 // twitter.tick_ms
    assert p["advice"] == "lease per host"
    assert sf.Layout("baidu").plan(hosts=1, peak_per_second=1, years=1)["advice"] == "does not fit"
    with pytest.raises(TypeError):
        twitter.plan(hosts=1000)  # type: ignore[call-arg]
