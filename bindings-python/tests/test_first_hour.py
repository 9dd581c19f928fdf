"""What a new user meets in the first hour (issue 29): options as text, an unknown keyword
as a TypeError, ``await next_id_async()`` that never blocks the loop, a clean ``dir()``, and
an expired layout's end given as a date."""

from __future__ import annotations

import asyncio
import time
import types

import pytest

import libsnowflake as sf


def test_options_as_text_are_cores() -> None:
    # The text C, the CLI and SNOWFLAKE_OPTIONS take; keywords add to it.
    g = sf.Generator("twitter", "datacenter=2,worker=7", options="max_wait_ms=0; max_drift_ms=5", isolated=True)
    assert (g.max_wait_ms, g.max_drift_ms, g.isolated) == (0, 5, True)
    assert g.node == {"datacenter": 2, "worker": 7}
    # An option given both ways: neither silently wins.
    with pytest.raises(sf.ValueRangeError, match="`max_wait_ms`: is given both in the options text and as a keyword"):
        sf.Generator("twitter", "datacenter=2,worker=7", options="max_wait_ms=0", max_wait_ms=5)
    # Options separated like node values get the hint the node values' error gives the other way.
    with pytest.raises(sf.ValueRangeError, match="options are separated by `;`, not `,`"):
        sf.Generator("twitter", "datacenter=2,worker=7", options="max_wait_ms=0,max_drift_ms=5")
    with pytest.raises(sf.ValueRangeError, match="node values are separated by `,`"):
        sf.Generator("twitter", "datacenter=2;worker=7")
    with pytest.raises(sf.SnowflakeTypeError, match="`options` must be a string of `key=value` pairs"):
        sf.Generator("twitter", options={"max_wait_ms": 0})  # type: ignore[arg-type]
    # A text value holding `;` cannot be written in the text: the keyword takes it.
    with pytest.raises(sf.ValueRangeError, match="`b`: options are written `key=value`"):
        sf.Generator("twitter", options="shared=a;b")


def test_an_unknown_keyword_is_a_type_error() -> None:
    with pytest.raises(TypeError) as e:
        sf.Generator("twitter", max_wait=0)  # type: ignore[call-arg]
    assert isinstance(e.value, sf.SnowflakeTypeError) and isinstance(e.value, sf.SnowflakeError)
    assert e.value.code == "ERR_SNOWFLAKE_TYPE"
    assert "max_wait_ms" in str(e.value) and "lease_password_file" in str(e.value)


def test_dir_lists_no_leaked_names() -> None:
    public = [n for n in dir(sf) if not n.startswith("_")]
    assert "annotations" not in public
    # The adapters (libsnowflake.pydantic, .sqlalchemy, .django) are submodules: once another
    # test imports one, Python lists it on the package, as it does for every package.
    adapters = {
        n for n in public if isinstance(getattr(sf, n), types.ModuleType) and getattr(sf, n).__name__ == f"libsnowflake.{n}"
    }
    assert adapters <= {"pydantic", "sqlalchemy", "django"}, adapters
    assert sorted(set(public) - adapters) == sorted(n for n in sf.__all__ if not n.startswith("_"))


def test_an_expired_layout_says_when_it_ended() -> None:
    # baidu: 28 bits of seconds from 2016-05-20 ended on 2024-11-20.
    with pytest.raises(sf.TimeRangeError) as e:
        sf.Generator("baidu", {"worker": 1}).next_id()
    message = str(e.value)
    assert "past the layout's last instant 1732109055999 (2024-11-20T13:24:15.999Z)" in message
    assert "Z) is past" in message  # the time it was asked for, as a date too


def test_next_id_async_never_blocks_the_loop() -> None:
    # Two IDs a second: the third and later wait for the next second. A ticker on the same loop
    # must keep running meanwhile (a blocking next_id() would stop it for up to a second).
    gen = sf.Generator("time:41,worker:10,sequence:1;epoch=0;tick=1s", {"worker": 11}, max_wait_ms=3000)

    async def main() -> tuple[list[int], float, float]:
        gaps: list[float] = []
        stop = asyncio.Event()

        async def ticker() -> None:
            last = time.perf_counter()
            while not stop.is_set():
                await asyncio.sleep(0.01)
                now = time.perf_counter()
                gaps.append(now - last)
                last = now

        task = asyncio.create_task(ticker())
        start = time.perf_counter()
        ids = [await gen.next_id_async() for _ in range(5)]
        # A coroutine like any other: gather and create_task take it.
        ids += await asyncio.gather(gen.next_id_async(), asyncio.create_task(gen.next_id_async()))
        elapsed = time.perf_counter() - start
        stop.set()
        await task
        return ids, elapsed, max(gaps)

    ids, elapsed, worst_gap = asyncio.run(main())
    assert len(set(ids)) == 7 and ids[:5] == sorted(ids[:5])
    assert elapsed > 1.0  # it did wait for the clock (7 IDs at 2 a second)
    # Generous for a loaded machine; a blocked loop would show a gap near a whole second.
    assert worst_gap < 0.5, worst_gap


def test_next_id_async_raises_as_next_id_does() -> None:
    gen = sf.Generator("time:41,worker:10,sequence:1;epoch=0;tick=1s", {"worker": 12}, max_wait_ms=0)

    async def main() -> None:
        await gen.next_id_async()
        await gen.next_id_async()
        with pytest.raises(sf.SequenceExhaustedError):
            await gen.next_id_async()

    asyncio.run(main())
    with pytest.raises(RuntimeError):
        gen.next_id_async().send(None)  # no running event loop: asyncio's own error
