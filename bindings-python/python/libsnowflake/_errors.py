"""The exceptions libsnowflake raises.

Every error of the library is a :class:`SnowflakeError`; those caused by a bad argument are
also ``ValueError``, a value of the wrong type also ``TypeError``. Each class carries the
stable ``code`` that the C, PHP and Node bindings report for the same failure; which class
each kind of error is comes from core's table of kinds (``tests/vectors/tables.json``, which
the tests check these classes against). A value is never silently wrapped.
"""

from __future__ import annotations

__all__ = [
    "SnowflakeError",
    "LayoutError",
    "ValueRangeError",
    "InvalidIdError",
    "TimeRangeError",
    "ClockBehindError",
    "SequenceExhaustedError",
    "ForkedProcessError",
    "SharedMismatchError",
    "LeaseError",
    "StateFileError",
    "SnowflakeOSError",
    "BusyError",
    "SnowflakeTypeError",
]


class SnowflakeError(Exception):
    """The root of every libsnowflake error."""

    code: str = "ERR_SNOWFLAKE"


class LayoutError(SnowflakeError, ValueError):
    """A layout spec is invalid; the message names the problem (zero width, over 64 bits...)."""

    code = "ERR_SNOWFLAKE_LAYOUT"


class ValueRangeError(SnowflakeError, ValueError):
    """A node value, option or argument is out of range or unknown for the layout."""

    code = "ERR_SNOWFLAKE_VALUE"


class InvalidIdError(SnowflakeError, ValueError):
    """An encoded ID string is malformed, or an ID has bits set above the layout's width."""

    code = "ERR_SNOWFLAKE_INVALID_ID"


class TimeRangeError(SnowflakeError):
    """An instant is before the layout's epoch or after its last instant."""

    code = "ERR_SNOWFLAKE_TIME_RANGE"


class ClockBehindError(SnowflakeError):
    """The clock is behind the generator by more than ``max_drift_ms``, for longer than
    ``max_wait_ms`` allows.

    ``behind_ms`` is how far behind it is; ``retry_after_ms`` when a retry can succeed.
    """

    code = "ERR_SNOWFLAKE_CLOCK_BEHIND"

    def __init__(self, message: str, behind_ms: int = 0, retry_after_ms: int = 0) -> None:
        super().__init__(message)
        self.behind_ms: int = behind_ms
        self.retry_after_ms: int = retry_after_ms


class SequenceExhaustedError(SnowflakeError):
    """Every sequence number of the current tick (and of the ticks ``max_drift_ms`` lets the
    generator borrow) is taken, and waiting would take longer than ``max_wait_ms``.

    ``retry_after_ms`` is when a retry can succeed.
    """

    code = "ERR_SNOWFLAKE_SEQUENCE_EXHAUSTED"

    def __init__(self, message: str, retry_after_ms: int = 0) -> None:
        super().__init__(message)
        self.retry_after_ms: int = retry_after_ms


class ForkedProcessError(SnowflakeError):
    """This process was forked from one that had the generator (or one with the same layout
    and node values): issuing from it here could repeat the parent's IDs. Make a generator
    with this process's own node values (e.g. its own worker value)."""

    code = "ERR_SNOWFLAKE_FORKED"


class SharedMismatchError(SnowflakeError, ValueError):
    """Another generator of this host's state of the layout and node values disagrees with
    this one (``max_drift_ms``, ``sequence_start``, ``state_file``, ``process_only``, a lease);
    the message names the difference and what to do."""

    code = "ERR_SNOWFLAKE_SHARED_MISMATCH"


class LeaseError(SnowflakeError):
    """No worker value could be leased (``lease=``), or a lease was lost: the generator stops
    issuing rather than risk another holder's IDs."""

    code = "ERR_SNOWFLAKE_LEASE"


class StateFileError(SnowflakeError):
    """A state file (``state_file=``) is corrupt, or belongs to another layout or node."""

    code = "ERR_SNOWFLAKE_STATE_FILE"


class BusyError(SnowflakeError):
    """Another process held a lock of the host's record of these layout and node values, of a
    state file or of a host lease longer than ``max_wait_ms`` allows (a stopped process,
    most likely): the message names it. Nothing was issued; retry."""

    code = "ERR_SNOWFLAKE_BUSY"


class SnowflakeOSError(SnowflakeError, OSError):
    """A file, lock, shared mapping or network operation of ``shared=``, ``state_file=`` or
    ``lease=`` failed. ``errno`` and ``filename`` are those of the failed operation, and
    ``action`` says what was being done."""

    code = "ERR_SNOWFLAKE_IO"
    action: str = ""


class SnowflakeTypeError(SnowflakeError, TypeError):
    """An option or node value of the wrong type: a ``str`` or ``float`` for a whole number, a
    ``bool`` for a number; the message names the option or field and what it takes."""

    code = "ERR_SNOWFLAKE_TYPE"
