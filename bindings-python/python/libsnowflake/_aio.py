"""``Generator.next_id_async``: an ID for ``asyncio`` code that never blocks the event loop.

The generator's rules stay core's: an ID that is there now comes from ``try_next_id``
(which never waits); only when it would have to wait (a full tick, a clock behind) does
``next_id`` run, with its own ``max_wait_ms``, on the loop's default executor, waiting for the
clock without the GIL while the loop serves other tasks.
"""

import asyncio

from ._errors import ClockBehindError, SequenceExhaustedError


async def next_id_async(generator):  # type: ignore[no-untyped-def]
    try:
        return generator.try_next_id()
    except (SequenceExhaustedError, ClockBehindError):
        return await asyncio.get_running_loop().run_in_executor(None, generator.next_id)
