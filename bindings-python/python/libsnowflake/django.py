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

A primary key the library fills is not an input: ``SnowflakeField(primary_key=True)`` has
no form field (as Django's ``AutoField``) unless given ``editable=True``, so the admin's add
form and ``ModelForm`` leave it out instead of requiring an "Id"; ``model_to_dict`` and the
serializers still include it.

JavaScript rounds a JSON number above 2^53, and Django's ``JsonResponse``,
``serializers.serialize("json")`` and ``model_to_dict`` write IDs as numbers.
:class:`SnowflakeJSONEncoder` writes every integer that JavaScript would round as a decimal
string (smaller ones stay numbers; a client that wants one type reads both)::

    JsonResponse(model_to_dict(order), encoder=SnowflakeJSONEncoder)
    serializers.serialize("json", Order.objects.all(), cls=SnowflakeJSONEncoder)

Needs ``django>=4.2``: ``pip install 'libsnowflake[django]'``.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Union

from django.core.serializers.json import DjangoJSONEncoder  # type: ignore[import-untyped]
from django.db import models  # type: ignore[import-untyped]  # Django ships no type hints

from ._adapters import bigint_id, default_generator
from ._native import Generator

__all__ = ["SnowflakeField", "SnowflakeJSONEncoder"]

#: The largest integer JavaScript reads from JSON without rounding (``Number.MAX_SAFE_INTEGER``).
JS_SAFE_MAX = (1 << 53) - 1

_GeneratorSource = Union[Generator, Callable[[], Generator], None]


class SnowflakeField(models.BigIntegerField):  # type: ignore[type-arg]
    """A ``BigIntegerField`` filled from a generator when a new row has no value."""

    description = "A Snowflake ID (a 64-bit time-ordered integer)"

    def __init__(self, *args: Any, generator: _GeneratorSource = None, **kwargs: Any) -> None:
        self._generator_source = generator
        self._generator: Optional[Generator] = generator if isinstance(generator, Generator) else None
        # The library fills a primary key: not a form's input (the admin would require it),
        # unless the code says `editable=True`.
        self._fills_key = bool(kwargs.get("primary_key")) and "editable" not in kwargs
        super().__init__(*args, **kwargs)

    def formfield(self, **kwargs: Any) -> Any:
        # No form field, as Django's AutoField: forms (the admin's add form) leave the key out,
        # while model_to_dict() and serializers still see it (editable=False would hide it
        # from model_to_dict too).
        if self._fills_key:
            return None
        return super().formfield(**kwargs)

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



def _js_safe(value: Any) -> Any:
    """``value`` with every integer beyond JavaScript's safe range as its decimal string."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return str(value) if abs(value) > JS_SAFE_MAX else value
    if isinstance(value, dict):
        return {k: _js_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_js_safe(v) for v in value]
    return value


class SnowflakeJSONEncoder(DjangoJSONEncoder):  # type: ignore[misc]
    """``DjangoJSONEncoder`` that writes every integer JavaScript would round (beyond
    2^53 - 1) as a decimal string, so that a browser keeps 64-bit IDs whole:
    ``JsonResponse(data, encoder=SnowflakeJSONEncoder)``,
    ``serializers.serialize("json", queryset, cls=SnowflakeJSONEncoder)``."""

    def iterencode(self, o: Any, _one_shot: bool = False) -> Any:
        # json calls default() only for what it cannot write, never for an int: the values
        # are converted before encoding.
        return super().iterencode(_js_safe(o), _one_shot)
