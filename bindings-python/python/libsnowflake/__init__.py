"""libsnowflake: Snowflake-style 64-bit, time-ordered, unique IDs.

One Rust implementation shared bit for bit by C, C++, PHP, Python and Node::

    >>> from libsnowflake import Generator, Layout
    >>> gen = Generator("twitter", node={"datacenter": 1, "worker": 3})
    >>> a, b = gen.next_id(), next(gen)
    >>> a < b
    True
    >>> Layout("twitter").decode(a).fields
    {'datacenter': 1, 'worker': 3}

Generators are thread-safe and lock-free. After ``os.fork()`` (``multiprocessing`` with the
fork start method, ``gunicorn --preload``) a generator inherited from the parent raises
:class:`ForkedProcessError`, and so does making one with the parent's node values: each
process needs its own node values, so that no two processes can ever issue the same ID.
"""

# No `from __future__ import annotations` here: nothing in this file needs it, and it would
# leave `annotations` among the package's names (dir(libsnowflake)).
from ._errors import (
    ClockBehindError,
    ForkedProcessError,
    InvalidIdError,
    LayoutError,
    LeaseError,
    SequenceExhaustedError,
    SharedMismatchError,
    SnowflakeError,
    SnowflakeOSError,
    BusyError,
    SnowflakeTypeError,
    StateFileError,
    TimeRangeError,
    ValueRangeError,
)
from ._native import (
    Block,
    Field,
    Generator,
    Layout,
    Parts,
    PublicIds,
    Stats,
    __version__,
    decode_str,
    encode,
)

__all__ = [
    "Block",
    "ClockBehindError",
    "Field",
    "ForkedProcessError",
    "Generator",
    "InvalidIdError",
    "Layout",
    "LayoutError",
    "LeaseError",
    "Parts",
    "PublicIds",
    "SequenceExhaustedError",
    "SharedMismatchError",
    "SnowflakeError",
    "SnowflakeOSError",
    "BusyError",
    "SnowflakeTypeError",
    "Stats",
    "StateFileError",
    "TimeRangeError",
    "ValueRangeError",
    "__version__",
    "decode_str",
    "encode",
]

