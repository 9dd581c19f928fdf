"""PublicIds (issue 14): the shared vectors (a pure-Python Speck64/128 model wrote them), the
order and prefixes of consecutive IDs' texts, other keys, and bad input as typed errors."""

from __future__ import annotations

import pickle
from typing import Any

import pytest

import libsnowflake as sf
from conftest import load_vectors

V = load_vectors("public_ids")


def ids_of(v: dict[str, Any]) -> sf.PublicIds:
    return sf.PublicIds(bytes.fromhex(v["key_hex"]), v.get("encoding", "base62"))


def test_the_speck_paper_vector() -> None:
    ka = V["known_answer"]
    assert V["cipher"] == "Speck64/128"
    assert ids_of(ka).encode(int(ka["id"])) == ka["text"]


@pytest.mark.parametrize("row", V["keys"], ids=lambda r: f"{r['key_hex'][:8]}-{r['encoding']}")
def test_vectors(row: dict[str, Any]) -> None:
    p = ids_of(row)
    assert p.encoding == row["encoding"]
    for case in row["cases"]:
        assert p.encode(int(case["id"])) == case["text"]
        assert p.decode(case["text"]) == int(case["id"])


def test_the_default_encoding_is_base62() -> None:
    row = V["keys"][0]
    assert row["encoding"] == "base62"
    p = sf.PublicIds(bytes.fromhex(row["key_hex"]))
    assert [p.encode(int(c["id"])) for c in row["cases"]] == [c["text"] for c in row["cases"]]


@pytest.mark.parametrize("v", V["invalid_keys"] + V["invalid_encodings"], ids=lambda v: f"{len(v['key_hex'])}-{v.get('encoding')}")
def test_bad_keys_and_encodings(v: dict[str, Any]) -> None:
    with pytest.raises(sf.ValueRangeError) as e:
        ids_of(v)
    assert e.value.code == v["error"]
    assert isinstance(e.value, ValueError)


@pytest.mark.parametrize("v", V["invalid_texts"], ids=lambda v: repr(v["text"]))
def test_bad_texts(v: dict[str, Any]) -> None:
    with pytest.raises(sf.InvalidIdError) as e:
        ids_of(v).decode(v["text"])
    assert e.value.code == v["error"]


def test_wrong_types_and_ranges() -> None:
    with pytest.raises(TypeError):
        sf.PublicIds("0123456789abcdef")  # type: ignore[arg-type]
    p = sf.PublicIds(b"0123456789abcdef")
    with pytest.raises(sf.ValueRangeError, match="^id = "):
        p.encode(2**64)
    with pytest.raises(sf.ValueRangeError, match="^id = "):
        p.encode(-1)
    with pytest.raises(sf.SnowflakeTypeError):
        p.encode(True)
    with pytest.raises(sf.SnowflakeTypeError):
        p.encode(1.0)


def test_consecutive_ids_reveal_no_order_and_no_prefix() -> None:
    gen = sf.Generator("twitter", node={"datacenter": 1, "worker": 3}, isolated=True, max_wait_ms=0)
    ids = [gen.next_id_at(1_700_000_000_000) for _ in range(2000)]
    assert ids == list(range(ids[0], ids[0] + 2000))
    p = sf.PublicIds(b"0123456789abcdef")
    texts = [p.encode(i) for i in ids]
    assert len(set(texts)) == len(texts)
    rises = sum(a < b for a, b in zip(texts, texts[1:]))
    assert 800 <= rises <= 1200, rises  # a sorted run has 1999; a random order about 1000
    # Uniform below 2**64, base62 texts start with one of 22 characters: neighbours share
    # the first about 1 time in 22 (91 expected), two characters about 1 in 1360.
    one = sum(a[0] == b[0] for a, b in zip(texts, texts[1:]))
    two = sum(a[:2] == b[:2] for a, b in zip(texts, texts[1:]))
    assert one <= 140 and two <= 10, (one, two)
    assert [p.decode(t) for t in texts] == ids


def test_another_key_gives_other_texts() -> None:
    a, b = sf.PublicIds(bytes(16)), sf.PublicIds(bytes(15) + b"\x01")
    ids = range(1724551110456389632, 1724551110456389632 + 500)
    assert all(a.encode(i) != b.encode(i) for i in ids)


def test_the_key_never_shows() -> None:
    key = b"SECRETSECRETSECR"
    p = sf.PublicIds(key)
    assert "SECRET" not in repr(p) and repr(p) == "PublicIds(<key>, encoding='base62')"
    with pytest.raises(TypeError, match="secret key"):
        pickle.dumps(p)
    with pytest.raises(sf.ValueRangeError) as e:
        sf.PublicIds(b"SECRET-but-17-byt")
    assert "SECRET" not in str(e.value) and "key of 17 bytes" in str(e.value)
