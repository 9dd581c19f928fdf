"""Django model field for Snowflake IDs.

:class:`SnowflakeField` is a ``BigIntegerField`` whose value, when a new row is saved
without one, comes from a generator::

    from django.db import models
    from libsnowflake.django import SnowflakeField

    class Order(models.Model):
        id = SnowflakeField(primary_key=True)

With no ``generator=``, the field uses the process's generator made from the environment
(``Generator()``: ``SNOWFLAKE_LAYOUT``, ``SNOWFLAKE_NODE``, ``SNOWFLAKE_OPTIONS``; made on
first use, so in each worker process after gunicorn's or uWSGI's ``fork()``). Pass
``generator=Generator(...)``, or a function that returns one, to choose it in code.

The ID is set in Python before the ``INSERT`` (``save()``, ``create()`` and
``bulk_create()`` alike), so the instance has its primary key at once and the table's key
grows with time. Migrations record the field as a plain ``BigIntegerField``-like column: the
generator is the running process's, never serialized. ``BIGINT`` is signed: IDs of a 64-bit
layout from 2^63 on are refused (use a 63-bit layout such as ``twitter`` or ``js53``).

Needs ``django>=4.2``: ``pip install 'libsnowflake[django]'``.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Union

from django.db import models  # type: ignore[import-untyped]  # Django ships no type hints

from ._adapters import bigint_id, default_generator
from ._native import Generator

__all__ = ["SnowflakeField"]

_GeneratorSource = Union[Generator, Callable[[], Generator], None]


class SnowflakeField(models.BigIntegerField):  # type: ignore[type-arg]
    """A ``BigIntegerField`` filled from a generator when a new row has no value."""

    description = "A Snowflake ID (a 64-bit time-ordered integer)"

    def __init__(self, *args: Any, generator: _GeneratorSource = None, **kwargs: Any) -> None:
        self._generator_source = generator
        self._generator: Optional[Generator] = generator if isinstance(generator, Generator) else None
        super().__init__(*args, **kwargs)

    def generator(self) -> Generator:
        """The generator this field issues from."""
        if self._generator is None:
            source = self._generator_source
            if source is None:
                self._generator = default_generator()
            else:
                self._generator = source()  # type: ignore[operator]
        return self._generator

    def new_id(self) -> int:
        """A new ID for a row being inserted."""
        return self.generator().next_id()

    def pre_save(self, model_instance: models.Model, add: bool) -> Any:
        value = getattr(model_instance, self.attname)
        if add and value is None:
            value = self.new_id()
            setattr(model_instance, self.attname, value)
        return value

    def get_pk_value_on_save(self, instance: models.Model) -> Any:
        return self.new_id()

    def get_prep_value(self, value: Any) -> Any:
        return bigint_id(super().get_prep_value(value))

