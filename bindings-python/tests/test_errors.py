"""Every exception of the tree, raised for real from Python, and what never happens instead
(a wrapped integer, a silently accepted wrong type)."""

from __future__ import annotations

import datetime as dt
import os

import pytest

import libsnowflake as sf

UTC = dt.timezone.utc
TINY = "time:41,worker:10,sequence:2;epoch=0;tick=1ms"  # 4 IDs a tick


def test_tree() -> None:
    for cls in (sf.LayoutError, sf.ValueRangeError, sf.InvalidIdError):
        assert issubclass(cls, sf.SnowflakeError) and issubclass(cls, ValueError)
    for cls in (sf.TimeRangeError, sf.ClockBehindError, sf.SequenceExhaustedError, sf.ForkedProcessError):
        assert issubclass(cls, sf.SnowflakeError) and not issubclass(cls, ValueError)
    codes = {c.code for c in (sf.LayoutError, sf.ValueRangeError, sf.InvalidIdError, sf.TimeRangeError,
                              sf.ClockBehindError, sf.SequenceExhaustedError, sf.ForkedProcessError)}
    assert codes == {"ERR_SNOWFLAKE_LAYOUT", "ERR_SNOWFLAKE_VALUE", "ERR_SNOWFLAKE_INVALID_ID",
                     "ERR_SNOWFLAKE_TIME_RANGE", "ERR_SNOWFLAKE_CLOCK_BEHIND",
                     "ERR_SNOWFLAKE_SEQUENCE_EXHAUSTED", "ERR_SNOWFLAKE_FORKED"}


def test_layout_error() -> None:
    with pytest.raises(sf.LayoutError, match="appears more than once"):
        sf.Layout("time:41,worker:5,worker:5,sequence:12")
    with pytest.raises(ValueError):
        sf.Layout("time:65,sequence:1")


@pytest.mark.parametrize("make", [
    lambda: sf.Generator("twitter", {"datacenter": 0, "worker": 32}),
    lambda: sf.Generator("twitter", {"shard": 1}),
    lambda: sf.Generator("twitter", {"sequence": 1}),
    lambda: sf.Generator("twitter", "worker=x"),
    lambda: sf.Generator("twitter", sequence_start="spread:0"),
    lambda: sf.Generator("twitter", sequence_start="sometimes"),
    lambda: sf.Generator("twitter", rollover="shard"),
    lambda: sf.Layout("twitter").compose(1700000000000, {"datacenter": 0, "worker": 1}, sequence=4096),
    lambda: sf.encode(1, "base64"),
    lambda: sf.Generator("twitter").reserve(0),
])
def test_value_range_error(make) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(sf.ValueRangeError) as e:
        make()
    assert isinstance(e.value, ValueError) and e.value.code == "ERR_SNOWFLAKE_VALUE"


def test_value_range_error_names_field_and_limit() -> None:
    with pytest.raises(sf.ValueRangeError, match=r"worker = 32 is out of range: the largest allowed is 31"):
        sf.Generator("twitter", node={"datacenter": 0, "worker": 32})


def test_invalid_id_error() -> None:
    with pytest.raises(sf.InvalidIdError, match="11"):
        sf.decode_str("0Czks0tP37", "base62")
    with pytest.raises(sf.InvalidIdError):
        sf.decode_str("18446744073709551616", "decimal")
    with pytest.raises(sf.InvalidIdError):
        sf.Layout("twitter").decode(2**63)


def test_time_range_error() -> None:
    layout = sf.Layout("twitter")
    with pytest.raises(sf.TimeRangeError, match="before the layout's epoch"):
        layout.min_id(0)
    with pytest.raises(sf.TimeRangeError, match="past the layout's last instant"):
        layout.max_id(layout.last_unix_ms + 1)
    with pytest.raises(sf.TimeRangeError):
        layout.min_id(dt.datetime(1969, 12, 31, tzinfo=UTC))
    with pytest.raises(sf.TimeRangeError):
        sf.Generator("twitter", isolated=True).next_id_at(1)


def test_sequence_exhausted_error() -> None:
    gen = sf.Generator(TINY, {"worker": 1}, max_wait_ms=0, isolated=True)
    ids = [gen.next_id_at(5000) for _ in range(4)]
    assert ids == sorted(set(ids))
    with pytest.raises(sf.SequenceExhaustedError) as e:
        gen.next_id_at(5000)
    assert e.value.retry_after_ms == 1
    assert gen.next_id_at(5001) > ids[-1]


def test_clock_behind_error() -> None:
    gen = sf.Generator(TINY, {"worker": 1}, max_wait_ms=0, isolated=True)
    gen.next_id_at(10_000)
    with pytest.raises(sf.ClockBehindError) as e:
        gen.next_id_at(9_990)
    assert e.value.behind_ms == 10
    assert e.value.retry_after_ms == 10
    assert "10 ms behind" in str(e.value)


def test_try_next_id_never_waits() -> None:
    # 4 IDs a second: the fifth of a second cannot come without waiting.
    gen = sf.Generator("time:41,worker:10,sequence:2;epoch=0;tick=1s", {"worker": 2}, isolated=True)
    taken = 0
    with pytest.raises(sf.SequenceExhaustedError) as e:
        for _ in range(9):  # more than two seconds' worth: no luck with the clock gets them all
            gen.try_next_id()
            taken += 1
    assert 1 <= taken <= 8  # a second may end between two calls
    assert 0 < e.value.retry_after_ms <= 1000


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork() is POSIX")
def test_forked_process_error() -> None:
    # A process_only generator's state is its process's; a default one's is the host's, and
    # keeps working in a child (tests/test_fork.py).
    gen = sf.Generator("twitter", {"worker": 30, "datacenter": 30}, process_only=True)
    gen.next_id()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        code = 1
        try:
            try:
                gen.next_id()
            except sf.ForkedProcessError as e:
                code = 0 if e.code == "ERR_SNOWFLAKE_FORKED" else 2
            os.write(w, b"%d" % code)
        finally:
            os._exit(0)
    os.close(w)
    out = os.read(r, 8)
    os.waitpid(pid, 0)
    assert out == b"0"


# -- wrong types and out-of-range integers: TypeError / OverflowError, never a wrap ------

@pytest.mark.parametrize("call", [
    lambda: sf.Layout(41),
    lambda: sf.Layout("twitter").decode(1.0),
    lambda: sf.Layout("twitter").decode("175928847299117063"),
    lambda: sf.Layout("twitter").min_id(1.7e12),
    lambda: sf.Layout("twitter").min_id("2020-01-01"),
    lambda: sf.Layout("twitter").min_id(dt.datetime(2020, 1, 1)),  # naive
    lambda: sf.Generator(3),
    lambda: sf.Generator("twitter", node=[("worker", 3)]),
    lambda: sf.Generator("twitter", node={"datacenter": 0, "worker": 3.0}),
    lambda: sf.Generator("twitter", node={"datacenter": 0, "worker": "3"}),
    lambda: sf.Generator("twitter", node={3: 3}),
    lambda: sf.Generator("twitter", max_wait_ms=1.5),
    lambda: sf.Generator("twitter", max_drift_ms="5"),
    lambda: sf.Generator("twitter").next_ids(2.0),
    lambda: sf.encode("1"),
    lambda: sf.encode(1.0),
    lambda: sf.decode_str(12),
])
def test_type_error(call) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(TypeError):
        call()


@pytest.mark.parametrize("call", [
    lambda: sf.Layout("twitter").decode(-1),
    lambda: sf.Layout("twitter").decode(2**64),
    lambda: sf.encode(-1),
    lambda: sf.encode(2**64),
    lambda: sf.Generator("twitter").next_ids(-1),
])
def test_out_of_range_integers(call) -> None:  # type: ignore[no-untyped-def]
    # Core's range check, naming the argument: a ValueRangeError (a ValueError), never a wrap
    # and never PyO3's bare "can't convert negative int to unsigned".
    with pytest.raises(sf.ValueRangeError, match=r"^`?(id|n)`? = "):
        call()


@pytest.mark.parametrize("call", [
    lambda: sf.Layout("twitter").min_id(-1),
    lambda: sf.Layout("twitter").min_id(2**64 + 1288834974657),
    lambda: sf.Generator("twitter", isolated=True).next_id_at(-1),
    lambda: sf.Generator("twitter", isolated=True).next_id_at(2**64 + 1700000000000),
])
def test_times_no_layout_holds(call) -> None:  # type: ignore[no-untyped-def]
    # A time before 1970 or past 2**64 - 1 ms is a TimeRangeError, as a time outside the
    # layout is, and as in Node and PHP (issue 26: it was a ValueRangeError here alone).
    with pytest.raises(sf.TimeRangeError, match=r"^time -?\d+ \(Unix ms\) is (before 1970|past 2\^64 - 1 ms)"):
        call()


@pytest.mark.parametrize(("call", "name"), [
    (lambda: sf.Generator("twitter", node={"datacenter": 0, "worker": -1}), "worker = -1"),
    (lambda: sf.Generator("twitter", node={"datacenter": 0, "worker": 2**64 + 3}), "worker = 18446744073709551619"),
    (lambda: sf.Generator("twitter", max_wait_ms=-1), "max_wait_ms = -1"),
    (lambda: sf.Generator("twitter", max_drift_ms=2**64), "max_drift_ms = 18446744073709551616"),
])
def test_node_values_and_options_out_of_range_name_the_field(call, name: str) -> None:  # type: ignore[no-untyped-def]
    # Core checks them (as for every front end): a ValueError naming the field, never a wrap.
    with pytest.raises(sf.ValueRangeError, match=name):
        call()


def test_u64_extremes_are_exact() -> None:
    top = 2**64 - 1
    for enc in ("decimal", "hex", "base32", "base36", "base58", "base62"):
        assert sf.decode_str(sf.encode(top, enc), enc) == top
    assert sf.Layout("time:44,sequence:20;epoch=0").decode(top).sequence == 2**20 - 1


def test_generator_cannot_be_pickled() -> None:
    import pickle

    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(sf.Generator("twitter", {"datacenter": 0, "worker": 5}))
