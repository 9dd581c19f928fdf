"""The binding against core's tables (tests/vectors/tables.json): every error kind raises the
class the table names, with its code and built-in base; every option of the table is accepted
by name, and a wrong type or value is refused by core with the same message as everywhere."""

from __future__ import annotations

import builtins

import pytest

import libsnowflake as sf
from conftest import load_vectors

TABLES = load_vectors("tables")


@pytest.mark.parametrize("row", TABLES["errors"], ids=lambda r: r["kind"])
def test_error_classes_are_the_tables(row: dict) -> None:
    cls = getattr(sf, row["python"])
    assert issubclass(cls, sf.SnowflakeError)
    if row["python_builtin"]:
        assert issubclass(cls, getattr(builtins, row["python_builtin"]))
    if cls is not sf.SnowflakeError and cls is not sf.ValueRangeError:
        # Classes shared by several kinds (C-only ones) carry their first kind's code.
        assert cls.code == row["code"]


def test_every_class_is_in_the_table() -> None:
    named = {row["python"] for row in TABLES["errors"]}
    public = {n for n in sf.__all__ if n.endswith("Error") and n != "SnowflakeError"}
    assert public <= named, public - named


@pytest.mark.parametrize("option", TABLES["options"], ids=lambda o: o["name"])
def test_every_option_is_a_keyword(option: dict) -> None:
    # Unset (None) is the default for every option; the generator still opens.
    kwargs = {"isolated": True, option["name"]: None}
    sf.Generator("twitter", {"worker": 1, "datacenter": 1}, **kwargs)
    if option["type"] == "integer":
        with pytest.raises(sf.SnowflakeTypeError, match=option["name"]):
            sf.Generator("twitter", **{option["name"]: "5"})
        with pytest.raises(sf.ValueRangeError, match=f"{option['name']} = -1 is out of range"):
            sf.Generator("twitter", **{option["name"]: -1})


def test_an_unknown_option_lists_the_table() -> None:
    # An unexpected keyword is a TypeError in Python (issue 29), with core's list of options.
    with pytest.raises(sf.SnowflakeTypeError) as e:
        sf.Generator("twitter", max_wait=0)
    assert isinstance(e.value, TypeError)
    assert str(e.value).startswith("unexpected keyword argument `max_wait`; the options are ")
    for option in TABLES["options"]:
        assert option["name"] in str(e.value)
    # An unknown key of the options text is a bad value, as in C and the CLI.
    with pytest.raises(sf.ValueRangeError, match="unknown option `max_wait`"):
        sf.Generator("twitter", options="max_wait=0")
