"""Pydantic (v2) types for Snowflake IDs: an ``int`` in Python, a decimal string in JSON.

JavaScript reads a JSON number above 2^53 with its low bits lost (``JSON.parse`` makes it a
double), so an API that sends 64-bit IDs as numbers corrupts them in every browser. A field
of type :data:`SnowflakeId` is a plain ``int`` in Python, accepts an ``int`` or a decimal
string (``"175928847299117063"``) when validating, and is written as a string in JSON::

    >>> from pydantic import BaseModel
    >>> from libsnowflake.pydantic import SnowflakeId
    >>> class Order(BaseModel):
    ...     id: SnowflakeId
    >>> order = Order(id="175928847299117063")
    >>> order.id
    175928847299117063
    >>> order.model_dump_json()
    '{"id":"175928847299117063"}'
    >>> Order.model_validate_json('{"id": 175928847299117063}').id
    175928847299117063

Validation is strict: a bool, a float, a negative number, one above 2^64 - 1, or a string
that is not plain decimal digits is a ``ValidationError`` (the decimal text is read by the
library's own parser, which every language shares). The JSON schema says ``string`` with the
pattern of decimal digits, so clients generated from it keep the IDs as strings.

Needs ``pydantic>=2``: ``pip install 'libsnowflake[pydantic]'``.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import core_schema

from ._native import decode_str

__all__ = ["SnowflakeId", "SnowflakeIdAnnotation"]

_MAX = (1 << 64) - 1
_PATTERN = r"^[0-9]{1,20}$"


def _from_text(text: str) -> int:
    # The library's strict decimal parser: digits only, no sign, no spaces, no overflow.
    return decode_str(text, "decimal")


class SnowflakeIdAnnotation:
    """The pydantic metadata of :data:`SnowflakeId` (``Annotated[int, SnowflakeIdAnnotation]``)."""

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        number = core_schema.int_schema(ge=0, le=_MAX, strict=True)
        text = core_schema.chain_schema(
            [core_schema.str_schema(strict=True), core_schema.no_info_plain_validator_function(_from_text)]
        )
        either = core_schema.union_schema(
            [number, text],
            custom_error_type="snowflake_id",
            custom_error_message="a Snowflake ID is an int from 0 to 2^64 - 1, or its decimal digits as a string",
        )
        return core_schema.json_or_python_schema(
            json_schema=either,
            python_schema=either,
            # str(int) in pydantic-core itself: no Python call per value.
            serialization=core_schema.to_string_ser_schema(when_used="json"),
        )

    @classmethod
    def __get_pydantic_json_schema__(cls, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        return {"type": "string", "pattern": _PATTERN, "description": "A Snowflake ID: a 64-bit unsigned integer in decimal digits"}


#: An ``int`` in Python; an ``int`` or decimal string when validated; a string in JSON.
SnowflakeId = Annotated[int, SnowflakeIdAnnotation]
