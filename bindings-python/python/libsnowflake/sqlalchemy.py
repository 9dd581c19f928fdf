"""SQLAlchemy (2.x) column type and default for Snowflake IDs.

:class:`SnowflakeId` is a ``BIGINT`` column that holds IDs as Python ``int``; and
:func:`snowflake_default` makes a column default that issues a new ID for every row inserted::

    from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
    from libsnowflake import Generator
    from libsnowflake.sqlalchemy import SnowflakeId, snowflake_default

    ids = Generator("twitter", node={"datacenter": 1, "worker": 3})

    class Base(DeclarativeBase):
        pass

    class Order(Base):
        __tablename__ = "orders"
        id: Mapped[int] = mapped_column(SnowflakeId, primary_key=True, default=snowflake_default(ids))

The ID is made in Python before the ``INSERT`` (SQLAlchemy knows the primary key without a
``RETURNING``), in the order rows are flushed, so the table's primary key grows with time.
``BIGINT`` is signed: a layout of 64 bits (``discord``, ``mastodon``) issues IDs from 2^63
on in the second half of its life, which the column refuses with
:class:`~libsnowflake.ValueRangeError` rather than store a negative number; use a 63-bit
layout (``twitter``, ``instagram``, ``sonyflake``, ``js53``) for a ``BIGINT`` key.

Needs ``sqlalchemy>=2``: ``pip install 'libsnowflake[sqlalchemy]'``.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from sqlalchemy.engine import Dialect
from sqlalchemy.types import BigInteger, TypeDecorator

from ._adapters import bigint_id, default_generator
from ._native import Generator

__all__ = ["SnowflakeId", "snowflake_default", "default_generator"]


class SnowflakeId(TypeDecorator[int]):
    """A ``BIGINT`` column of Snowflake IDs: ``int`` in Python, refusing what ``BIGINT`` cannot hold."""

    impl = BigInteger
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Dialect) -> Optional[int]:
        return bigint_id(value)

    def process_result_value(self, value: Any, dialect: Dialect) -> Optional[int]:
        return None if value is None else int(value)


def snowflake_default(generator: Optional[Generator] = None) -> Callable[[], int]:
    """A column default that issues ``generator.next_id()`` for each row inserted; without a
    generator, the process's generator from the environment (:func:`default_generator`)."""
    if generator is None:

        def next_from_environment() -> int:
            return default_generator().next_id()

        return next_from_environment
    next_id = generator.next_id

    def next_from_generator() -> int:
        return next_id()

    return next_from_generator
