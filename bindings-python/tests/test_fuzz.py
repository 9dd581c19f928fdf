"""Hypothesis: random input of every Python type through every entry point (layout specs,
node values, options, IDs, ID strings and encodings). Each gives a result that checks out or
a libsnowflake error (a SnowflakeError, or a SnowflakeTypeError for a wrong Python type):
never a crash, a hang, a bare ValueError/OverflowError from the conversion, or a silent wrap.
A failure prints the falsifying example; hypothesis replays it."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

import libsnowflake as sf
from conftest import load_vectors

settings.register_profile("shared-machine", deadline=None)
settings.load_profile("shared-machine")

TEXT = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789:,;=-TZ._ !\u00e9\x00\U0001F600", max_size=60)
SPECS = st.one_of(
    st.sampled_from(["twitter", "discord", "instagram", "sonyflake", "baidu", "mastodon", "game", "nope"]),
    st.builds(
        lambda t, name, n, s, epoch, tick: f"time:{t},{name}:{n},sequence:{s}{epoch}{tick}",
        st.integers(0, 70),
        st.sampled_from(["worker", "sequence", "time", "x"]),
        st.integers(0, 30),
        st.integers(0, 30),
        # No epoch at all: a custom spec must state one (issue 13).
        st.sampled_from(["", ";epoch=0", ";epoch=1288834974657", ";epoch=-1", ";epoch=today", ";epoch=2024-01-01T00:00:00Z"]),
        st.sampled_from(["", ";tick=1ms", ";tick=0s", ";tick=10ms", ";tick=x"]),
    ),
    TEXT,
)
ANY = st.one_of(
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.none(),
    TEXT,
    st.binary(max_size=8),
    st.lists(st.integers(0, 9), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(0, 3), max_size=2),
)
ENCODINGS = st.one_of(st.sampled_from(["decimal", "hex", "base32", "base36", "base58", "base62"]), TEXT)
OPTIONS = st.sampled_from(["max_drift_ms", "max_wait_ms", "sequence_start", "rollover", "maxWaitMs", "shared", "nope"])
NODE_KEYS = st.one_of(st.sampled_from(["worker", "datacenter", "shard", "time", "sequence"]), TEXT, st.integers(0, 3))


def attempt(f, check=None):
    """Runs f: a libsnowflake error is fine, any other exception fails the test."""
    try:
        result = f()
    except sf.SnowflakeError:
        return None
    if check is not None:
        check(result)
    return result


def is_u64(v):
    assert type(v) is int and 0 <= v < 2**64, v


@settings(max_examples=1500)
@given(SPECS)
def test_layout_specs(spec: str) -> None:
    layout = attempt(lambda: sf.Layout(spec))
    if layout is not None:
        assert str(sf.Layout(str(layout))) == str(layout), "a layout reads back"


@settings(max_examples=1500)
@given(TEXT, ENCODINGS, ANY)
def test_ids_strings_and_encodings(text: str, encoding: str, value: object) -> None:
    v = attempt(lambda: sf.decode_str(text, encoding))
    if v is not None:
        is_u64(v)
        assert sf.decode_str(sf.encode(v, encoding), encoding) == v, "round trip"
    attempt(lambda: sf.encode(value, encoding), lambda s: isinstance(s, str))
    parts = attempt(lambda: sf.Layout("twitter").decode(value))
    if parts is not None:
        assert type(value) is int and not isinstance(value, bool), f"decode accepted {value!r}"


@settings(max_examples=1500)
@given(st.one_of(st.sampled_from(["twitter", "game"]), SPECS), st.dictionaries(NODE_KEYS, ANY, max_size=3), OPTIONS, ANY)
def test_generators(spec: str, node: dict, option: str, value: object) -> None:
    def make():
        return sf.Generator(spec, node, isolated=True, **{option: value})

    g = attempt(make)
    if g is None:
        return
    if node:
        # A mapping names every node field, but those the generator sets itself (issue 13).
        exempt = {value} if option == "rollover" else set()
        missing = set(g.layout.node_fields) - set(node) - exempt
        assert not missing, f"{node} was accepted without {missing}"
    if ":" in spec and not re.search(r"epoch\s*=", spec):
        raise AssertionError(f"{spec!r} was accepted without an epoch")
    id_ = attempt(lambda: g.next_id_at(1_800_000_000_000))
    if id_ is not None:
        is_u64(id_)
        fields = g.layout.decode(id_).fields
        for name, v in node.items():
            assert fields[name] == v and type(v) is int and not isinstance(v, bool), (name, v)


# --- issue 26: counts up to 2**64 and beyond, public-ID keys, Redis addresses ---------------
MAX_IDS = load_vectors("tables")["limits"]["max_ids_per_call"]
COUNTS = st.one_of(
    st.integers(0, 3000),
    st.integers(MAX_IDS + 1, 2**64 + 5),
    st.integers(2**64 - 5, 2**80),
    st.integers(-(2**70), -1),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.none(),
    TEXT,
    st.binary(max_size=4),
)


@settings(max_examples=1500)
@given(COUNTS)
def test_counts(n: object) -> None:
    g = sf.Generator("twitter", isolated=True)
    for call, lo, hi in ((g.next_ids, 0, MAX_IDS), (g.next_ids_array, 0, MAX_IDS), (g.reserve, 1, 2**64 - 1)):
        valid = type(n) is int and lo <= n <= hi
        try:
            got = call(n)  # type: ignore[operator]
        except sf.SnowflakeTypeError:
            assert type(n) is not int, f"{call.__name__}({n!r}) refused an int's type"
            continue
        except sf.ValueRangeError:
            assert type(n) is int and not valid, f"{call.__name__}({n!r})"
            continue
        assert valid, f"{call.__name__} accepted {n!r}"
        if call == g.reserve:
            assert 1 <= got.count <= n  # type: ignore[union-attr, operator]
        else:
            assert len(got) == n  # type: ignore[arg-type]


KEYS = st.one_of(st.binary(max_size=40), TEXT, st.integers(), st.none(), st.builds(bytearray, st.binary(max_size=20)),
                 st.lists(st.integers(0, 255), max_size=16), st.floats())


@settings(max_examples=1000)
@given(KEYS, ENCODINGS)
def test_public_ids_keys(key: object, encoding: str) -> None:
    try:
        p = sf.PublicIds(key, encoding)  # type: ignore[arg-type]
    except sf.SnowflakeTypeError as e:
        assert type(key) is not bytes, f"bytes refused as a type: {key!r}"
        assert str(e).startswith("`key` must be"), e
        return
    except sf.SnowflakeError:
        assert type(key) is bytes, key
        return
    assert type(key) is bytes and len(key) == 16
    assert p.decode(p.encode(175928847299117063)) == 175928847299117063


ADDRESSES = [
    "redis://:{p}@127.0.0.1:1/0", "redis://app:{p}@127.0.0.1:1/0", "rediss://app:{p}@localhost:1/0",
    "unix:///nonexistent/snowflake.sock?db=2&pass={p}", "redis+sentinel://:{p}@127.0.0.1:1,127.0.0.1:2/m/0",
    "redis://127.0.0.1:1/0?PASSWORD={p}", "redis+sentinel://127.0.0.1:1/m?sentinel_password={p}",
]


@settings(max_examples=300)
@given(st.text(alphabet="/?#@:&=%+ x9", max_size=4), st.text(alphabet="abcdefghijkLMNOPQ0123456789", min_size=10, max_size=10),
       st.sampled_from(ADDRESSES))
def test_no_message_shows_a_redis_password(noise: str, core: str, form: str) -> None:
    url = form.replace("{p}", noise + core + noise)
    try:
        sf.Generator("twitter", {"datacenter": 1}, lease=url, max_wait_ms=0)
    except sf.SnowflakeError as e:
        assert core not in str(e) and core not in repr(e), f"{url}: {e}"
    else:
        raise AssertionError(f"{url}: a lease where no Redis listens")
