"""Issue 26's defects at the edges, in Python: counts that aborted the interpreter, key types
that raised PyO3's plain TypeError, a time far ahead that locked an identity out, and the
message for a time behind the state."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time

import pytest

import libsnowflake as sf
from conftest import load_vectors

MAX_IDS_PER_CALL = load_vectors("tables")["limits"]["max_ids_per_call"]
YEAR_2080_MS = 3_471_292_800_000


def run_limited(code: str) -> subprocess.CompletedProcess[str]:
    """`code` in a new interpreter whose address space is limited to 1 GiB: a count that
    allocates more must raise there, never abort."""
    prelude = "import resource\nresource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))\n"
    return subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code)],
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("call", ["next_ids", "next_ids_array"])
def test_huge_counts_raise_at_once_and_never_abort(call: str) -> None:
    # Before: next_ids(2**40) was accepted, then aborted the interpreter (SIGABRT) once memory
    # ran out, inside PyO3's conversion of an int.
    r = run_limited(f"""
        import libsnowflake as sf
        g = sf.Generator("twitter", isolated=True)
        for n in (2**40, 2**64 - 1, 2**64, {MAX_IDS_PER_CALL} + 1):
            try:
                g.{call}(n)
            except sf.ValueRangeError as e:
                assert "largest allowed is {MAX_IDS_PER_CALL}" in str(e), e
            else:
                raise AssertionError(n)
        # Within the limit, but more than this process may allocate: MemoryError, at once.
        try:
            g.{call}({MAX_IDS_PER_CALL})
        except MemoryError:
            pass
        else:
            raise AssertionError("no MemoryError")
        assert len(g.{call}(5000)) == 5000
        print("ok")
    """)
    assert r.returncode == 0 and r.stdout.strip() == "ok", (r.returncode, r.stdout, r.stderr[-2000:])


def test_counts_of_every_type_are_typed_errors() -> None:
    g = sf.Generator("twitter", isolated=True)
    for f in (g.next_ids, g.next_ids_array, g.reserve):
        for bad in (1.5, 2.0, "5", True, None, b"5"):
            with pytest.raises(sf.SnowflakeTypeError, match="`n` must be a whole number"):
                f(bad)  # type: ignore[arg-type]
        with pytest.raises(sf.ValueRangeError):
            f(-1)
    with pytest.raises(sf.ValueRangeError):
        g.reserve(2**64)
    assert g.reserve(2**64 - 1).count == 4096  # a tick's room: reserve allocates nothing


@pytest.mark.parametrize("key", ["a str key", bytearray(16), memoryview(b"0" * 16), 16, None, [0] * 16])
def test_a_public_ids_key_of_another_type_is_a_snowflake_type_error_naming_key(key: object) -> None:
    with pytest.raises(sf.SnowflakeTypeError, match="^`key` must be 16 bytes") as e:
        sf.PublicIds(key)  # type: ignore[arg-type]
    assert isinstance(e.value, TypeError) and e.value.code == "ERR_SNOWFLAKE_TYPE"


def test_public_ids_text_and_encoding_of_another_type_are_typed() -> None:
    p = sf.PublicIds(b"0123456789abcdef")
    with pytest.raises(sf.SnowflakeTypeError, match="`text` must be a str"):
        p.decode(b"0Czks0tP37X")  # type: ignore[arg-type]
    with pytest.raises(sf.SnowflakeTypeError, match="`encoding` must be a str"):
        sf.PublicIds(b"0123456789abcdef", 62)  # type: ignore[arg-type]
    assert sf.PublicIds(b"0123456789abcdef", encoding="hex").encoding == "hex"


def test_a_time_far_ahead_is_refused_where_the_state_is_shared() -> None:
    # Before: accepted, and every later call of the identity waited for 2080.
    layout = "time:41,worker:10,sequence:12;epoch=1288834974657"
    g = sf.Generator(layout, {"worker": 901}, max_wait_ms=0)
    with pytest.raises(sf.ValueRangeError) as e:
        g.next_id_at(YEAR_2080_MS)
    text = str(e.value)
    assert "ahead of the clock" in text and "years" in text and "isolated" in text, text
    g.next_id()  # not locked out
    lone = sf.Generator(layout, {"worker": 901}, isolated=True)
    assert sf.Layout(layout).decode(lone.next_id_at(YEAR_2080_MS)).unix_ms == YEAR_2080_MS


def test_a_time_behind_the_state_says_why_and_what_replays_need() -> None:
    g = sf.Generator("time:41,worker:10,sequence:12;epoch=1288834974657", {"worker": 902}, process_only=True)
    g.next_id()
    week_ago = int(time.time() * 1000) - 561_600_000
    with pytest.raises(sf.ClockBehindError) as e:
        g.next_id_at(week_ago)
    text = str(e.value)
    assert "behind this identity's state" in text and "could repeat" in text, text
    assert "replays and backfills need a generator with `isolated` set to true" in text, text
    assert "retry in" not in text
    assert e.value.behind_ms > 561_000_000


@pytest.mark.parametrize("t", [-1, -(2**70), 2**64, 2**70])
def test_a_time_no_layout_holds_is_a_time_range_error(t: int) -> None:
    with pytest.raises(sf.TimeRangeError):
        sf.Generator("twitter", isolated=True).next_id_at(t)
