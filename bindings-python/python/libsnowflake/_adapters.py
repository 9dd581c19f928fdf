"""What the framework adapters share, with no framework imported: the process's generator
from the environment, and the bound of a ``BIGINT`` column."""

from __future__ import annotations

import threading
from typing import Any, Optional

from ._errors import SnowflakeTypeError, ValueRangeError
from ._native import Generator

BIGINT_MAX = (1 << 63) - 1

_lock = threading.Lock()
_default: Optional[Generator] = None


def default_generator() -> Generator:
    """The process's generator made from the environment (``Generator()``: ``SNOWFLAKE_LAYOUT``,
    ``SNOWFLAKE_NODE``, ``SNOWFLAKE_OPTIONS``, then the defaults), made on first use: in each
    worker process, after any ``fork()``."""
    global _default
    if _default is None:
        with _lock:
            if _default is None:
                _default = Generator()
    return _default


def bigint_id(value: Any) -> Optional[int]:
    """``value`` as a ``BIGINT`` column's ID: ``None``, or an ``int`` from 0 to 2^63 - 1."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise SnowflakeTypeError(f"a Snowflake ID column takes an int, not {type(value).__name__}")
    if not 0 <= value <= BIGINT_MAX:
        raise ValueRangeError(
            f"id = {value} does not fit a BIGINT column (0 to 2^63 - 1): IDs of a 64-bit layout from 2^63 on need a 63-bit layout (twitter, js53, ...)"
        )
    return value
