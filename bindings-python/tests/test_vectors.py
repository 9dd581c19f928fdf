"""The shared vectors (tests/vectors/*.json): the same layouts, encodings and generator
traces every language is held to, bit for bit."""

from __future__ import annotations

from typing import Any

import pytest

import libsnowflake as sf
from conftest import load_vectors

LAYOUTS = load_vectors("layouts")
ENCODINGS = load_vectors("encodings")
GENERATOR = load_vectors("generator")


def code_of(exc: BaseException) -> str:
    assert isinstance(exc, sf.SnowflakeError), f"{exc!r} is not a SnowflakeError"
    return exc.code


@pytest.mark.parametrize("v", LAYOUTS["layouts"], ids=lambda v: v["spec"])
def test_layout(v: dict[str, Any]) -> None:
    layout = sf.Layout(v["spec"])
    assert str(layout) == v["canonical"]
    assert sf.Layout(v["canonical"]) == layout
    assert layout.fingerprint == int(v["fingerprint"])
    assert layout.total_bits == v["total_bits"]
    assert layout.capacity_per_tick == v["capacity_per_tick"]
    assert layout.epoch_ms == v["epoch_ms"]
    assert layout.tick_ms == v["tick_ms"]
    assert layout.last_unix_ms == v["last_unix_ms"]
    assert [(f.name, f.bits, f.shift) for f in layout.fields] == [
        (f["name"], f["bits"], f["shift"]) for f in v["fields"]
    ]
    for d in v["decode"]:
        parts = layout.decode(int(d["id"]))
        assert (parts.id, parts.unix_ms, parts.tick, parts.sequence) == (
            int(d["id"]), d["unix_ms"], d["tick"], d["sequence"])
        assert parts.fields == d["fields"]
        assert list(parts.fields) == list(layout.node_fields)
    for b in v["bounds"]:
        assert layout.min_id(b["unix_ms"]) == int(b["min_id"])
        assert layout.max_id(b["unix_ms"]) == int(b["max_id"])


@pytest.mark.parametrize("v", LAYOUTS["compose"], ids=lambda v: f"{v['spec']}@{v['unix_ms']}")
def test_compose(v: dict[str, Any]) -> None:
    layout = sf.Layout(v["spec"])
    if "error" in v:
        with pytest.raises(sf.SnowflakeError) as e:
            layout.compose(v["unix_ms"], v["fields"], v["sequence"])
        assert code_of(e.value) == v["error"]
    else:
        assert layout.compose(v["unix_ms"], fields=v["fields"], sequence=v["sequence"]) == int(v["id"])


@pytest.mark.parametrize("v", LAYOUTS["invalid"], ids=lambda v: repr(v["spec"]))
def test_invalid_layout(v: dict[str, Any]) -> None:
    with pytest.raises(sf.LayoutError) as e:
        sf.Layout(v["spec"])
    assert code_of(e.value) == v["error"]
    assert v["message_contains"] in str(e.value)


@pytest.mark.parametrize("v", LAYOUTS["decode_invalid"], ids=lambda v: f"{v['spec']}:{v['id']}")
def test_decode_invalid(v: dict[str, Any]) -> None:
    with pytest.raises(sf.InvalidIdError) as e:
        sf.Layout(v["spec"]).decode(int(v["id"]))
    assert code_of(e.value) == v["error"]


@pytest.mark.parametrize("v", ENCODINGS["ids"], ids=lambda v: v["id"])
def test_encodings(v: dict[str, Any]) -> None:
    id_ = int(v["id"])
    for reverse, table in ((False, v["plain"]), (True, v["reverse"])):
        for encoding, text in table.items():
            assert sf.encode(id_, encoding, reverse=reverse) == text, (encoding, reverse)
            assert sf.decode_str(text, encoding, reverse=reverse) == id_, (encoding, reverse)


@pytest.mark.parametrize("v", ENCODINGS["aliases"], ids=lambda v: v["text"])
def test_encoding_aliases(v: dict[str, Any]) -> None:
    assert sf.decode_str(v["text"], v["encoding"]) == int(v["id"])


@pytest.mark.parametrize("v", ENCODINGS["invalid"], ids=lambda v: f"{v['encoding']}:{v['text']!r}")
def test_encoding_invalid(v: dict[str, Any]) -> None:
    with pytest.raises(sf.InvalidIdError) as e:
        sf.decode_str(v["text"], v["encoding"])
    assert code_of(e.value) == v["error"]


@pytest.mark.parametrize("trace", GENERATOR["traces"], ids=lambda t: t["name"])
def test_generator_trace(trace: dict[str, Any]) -> None:
    o = trace["options_fields"]
    assert "isolated=true" in trace["options"]
    gen = sf.Generator(
        trace["layout"],
        trace["node"],
        max_drift_ms=o["max_drift_ms"],
        max_wait_ms=o["max_wait_ms"],
        sequence_start=o["sequence_start"],
        rollover=o["rollover"],
        isolated=True,
    )
    # The text form of the node values gives the same generator.
    twin = sf.Generator(trace["layout"], trace["node_spec"], max_drift_ms=o["max_drift_ms"],
                        max_wait_ms=o["max_wait_ms"], sequence_start=o["sequence_start"],
                        rollover=o["rollover"], isolated=True)
    for i, step in enumerate(trace["steps"]):
        for g in (gen, twin):
            if "error" in step:
                with pytest.raises(sf.SnowflakeError) as e:
                    g.next_id_at(step["unix_ms"])
                assert code_of(e.value) == step["error"], f"step {i}"
            else:
                assert g.next_id_at(step["unix_ms"]) == int(step["id"]), f"step {i}"
