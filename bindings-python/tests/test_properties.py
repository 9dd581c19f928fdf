"""Hypothesis: encodings round-trip and keep order; compose and decode are inverse."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

# The machine running the tests is shared with other builds: no per-example deadline.
settings.register_profile("shared-machine", deadline=None)
settings.load_profile("shared-machine")

import libsnowflake as sf

U64 = st.integers(min_value=0, max_value=2**64 - 1)
ENCODINGS = st.sampled_from(["decimal", "hex", "base32", "base36", "base58", "base62"])
FIXED = st.sampled_from(["hex", "base32", "base36", "base58", "base62"])


@given(U64, ENCODINGS, st.booleans())
def test_encode_round_trip(id_: int, encoding: str, reverse: bool) -> None:
    text = sf.encode(id_, encoding, reverse=reverse)
    assert sf.decode_str(text, encoding, reverse=reverse) == id_
    assert text.isascii() and text.isalnum()


@given(U64, U64, FIXED)
def test_fixed_width_encodings_sort_like_numbers(a: int, b: int, encoding: str) -> None:
    ea, eb = sf.encode(a, encoding), sf.encode(b, encoding)
    assert len(ea) == len(eb)
    assert (ea < eb) == (a < b)
    ra, rb = sf.encode(a, encoding, reverse=True), sf.encode(b, encoding, reverse=True)
    assert (ra < rb) == (a > b)


@given(st.text(max_size=25), ENCODINGS)
def test_decode_str_never_wraps(text: str, encoding: str) -> None:
    try:
        v = sf.decode_str(text, encoding)
    except sf.InvalidIdError:
        return
    assert 0 <= v < 2**64


@st.composite
def layouts(draw: st.DrawFn) -> sf.Layout:
    """Random valid layouts: time first, one sequence anywhere below, 0-3 node fields."""
    time_bits = draw(st.integers(20, 44))
    room = 64 - time_bits
    seq_bits = draw(st.integers(1, min(22, room)))
    room -= seq_bits
    nodes = []
    for i in range(draw(st.integers(0, 3))):
        if room == 0:
            break
        b = draw(st.integers(1, min(10, room)))
        room -= b
        nodes.append(f"n{i}:{b}")
    pos = draw(st.integers(0, len(nodes)))
    fields = [f"time:{time_bits}", *nodes[:pos], f"sequence:{seq_bits}", *nodes[pos:]]
    tick = draw(st.sampled_from(["1ms", "10ms", "1s"]))
    epoch = draw(st.integers(0, 1_700_000_000_000))
    return sf.Layout(f"{','.join(fields)};epoch={epoch};tick={tick}")


@settings(max_examples=300)
@given(layouts(), st.data())
def test_compose_decode_round_trip(layout: sf.Layout, data: st.DataObject) -> None:
    unix_ms = data.draw(st.integers(layout.epoch_ms, layout.last_unix_ms))
    by_name = {f.name: f for f in layout.fields}
    fields = {n: data.draw(st.integers(0, by_name[n].max)) for n in layout.node_fields}
    sequence = data.draw(st.integers(0, by_name["sequence"].max))
    id_ = layout.compose(unix_ms, fields, sequence)
    parts = layout.decode(id_)
    assert parts.fields == fields and parts.sequence == sequence
    # decode gives the start of the tick holding unix_ms.
    assert parts.unix_ms <= unix_ms < parts.unix_ms + layout.tick_ms
    assert layout.compose(parts.unix_ms, parts.fields, parts.sequence) == id_
    assert layout.min_id(unix_ms) <= id_ <= layout.max_id(unix_ms) <= layout.max_value


@settings(max_examples=200)
@given(layouts(), st.data())
def test_ids_order_like_time(layout: sf.Layout, data: st.DataObject) -> None:
    t = st.integers(layout.epoch_ms, layout.last_unix_ms)
    a, b = sorted((data.draw(t), data.draw(t)))
    if layout.decode(layout.min_id(a)).tick < layout.decode(layout.min_id(b)).tick:
        assert layout.max_id(a) < layout.min_id(b)
