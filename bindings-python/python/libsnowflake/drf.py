"""Django REST framework field for Snowflake IDs: an ``int`` in Python, a decimal string in
JSON, so that JavaScript clients keep every bit (``JSON.parse`` rounds a number above 2^53)::

    from rest_framework import serializers
    from libsnowflake.drf import SnowflakeIdField

    class OrderSerializer(serializers.ModelSerializer):
        id = SnowflakeIdField(read_only=True)
        parent = SnowflakeIdField(required=False, allow_null=True)

Input is what pydantic's ``SnowflakeId`` accepts, and what Node's ``libsnowflake/json``
``parse`` accepts (``tests/vectors/json_ids.json``): an ``int`` from 0 to 2^64 - 1, or its
decimal digits as a string, read by the library's own parser; a bool, a float, a negative
number, text that is not plain digits, a list or a dict is a validation error (HTTP 400).

Needs ``djangorestframework``: ``pip install 'libsnowflake[drf]'``.
"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers  # type: ignore[import-untyped]  # DRF ships no type hints

from ._native import decode_str

__all__ = ["SnowflakeIdField"]

_MAX = (1 << 64) - 1


class SnowflakeIdField(serializers.Field):  # type: ignore[misc]
    """A Snowflake ID: an ``int`` in Python, a decimal string in the API's JSON."""

    default_error_messages = {
        "invalid": "A Snowflake ID is an int from 0 to 2^64 - 1, or its decimal digits as a string.",
    }

    def to_representation(self, value: Any) -> str:
        return str(int(value))

    def to_internal_value(self, data: Any) -> int:
        if isinstance(data, bool):
            self.fail("invalid")
        if isinstance(data, int):
            if 0 <= data <= _MAX:
                return data
            self.fail("invalid")
        if isinstance(data, str):
            try:
                # The library's strict decimal parser: digits only, no sign, no overflow.
                return decode_str(data, "decimal")
            except ValueError:
                self.fail("invalid")
        self.fail("invalid")
        raise AssertionError("unreachable: fail() raises")
