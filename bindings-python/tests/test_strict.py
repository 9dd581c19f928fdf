"""Issue 13's stricter input, from Python: a custom layout states its epoch, node values name
every node field or none, bools and floats are not IDs or node values, a bad state_file or
the retired lease_dir fails when the generator is made (naming the path, or what replaced it), and stats() say how long the
layout has left."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

import libsnowflake as sf

FULL = {"datacenter": 1, "worker": 3}


def test_a_custom_spec_states_its_epoch() -> None:
    today = dt.datetime.now(dt.timezone.utc).date().isoformat()
    with pytest.raises(sf.LayoutError, match="must state its epoch") as e:
        sf.Layout("time:41,worker:10,sequence:12")
    assert f";epoch={today}T00:00:00Z" in str(e.value) and "2039-09-07" in str(e.value)
    # The suggestion is a spec that works.
    suggested = str(e.value).split("`;")[1].split("`")[0]
    assert sf.Layout(f"time:41,worker:10,sequence:12;{suggested}").epoch_ms <= sf.Layout("twitter").last_unix_ms
    assert sf.Layout("time:41,worker:10,sequence:12;epoch=0").epoch_ms == 0
    assert sf.Layout("twitter").epoch_ms == 1288834974657


@pytest.mark.parametrize("node, missing", [
    ({"datacenter": 1}, "`worker`"),
    ({"worker": 3}, "`datacenter`"),
    ("worker=3", "`datacenter`"),
])
def test_node_values_name_every_node_field_or_none(node: object, missing: str) -> None:
    with pytest.raises(sf.ValueRangeError, match=missing) as e:
        sf.Generator("twitter", node, isolated=True)
    assert e.value.code == "ERR_SNOWFLAKE_VALUE" and "name every node field" in str(e.value)
    with pytest.raises(sf.ValueRangeError, match=missing):
        sf.Layout("twitter").compose(1_700_000_000_000, node)
    # All of them, or none (all zeros).
    g = sf.Generator("twitter", FULL, isolated=True)
    assert sf.Layout("twitter").decode(g.next_id_at(1_700_000_000_000)).fields == FULL
    assert sf.Layout("twitter").decode(sf.Generator("twitter", {}, isolated=True).next_id_at(1_700_000_000_000)).fields == {
        "datacenter": 0, "worker": 0}


def test_fields_the_generator_sets_are_left_out(tmp_path: Path) -> None:
    rolled = "time:41,clock:2,worker:8,sequence:12;epoch=0"
    assert sf.Generator(rolled, {"worker": 3}, rollover="clock", isolated=True).next_id_at(1_700_000_000_000) > 0
    with pytest.raises(sf.ValueRangeError, match="clock"):
        sf.Generator(rolled, {"worker": 3, "clock": 0}, rollover="clock", isolated=True)
    leased = sf.Generator("twitter", {"datacenter": 2}, lease="local")
    assert sf.Layout("twitter").decode(leased.next_id()).fields["datacenter"] == 2
    with pytest.raises(sf.ValueRangeError, match="worker"):
        sf.Generator("twitter", {"datacenter": 2, "worker": 0}, lease="local")


@pytest.mark.parametrize("call", [
    lambda: sf.Layout("twitter").decode(True),
    lambda: sf.Layout("twitter").decode(False),
    lambda: sf.Layout("twitter").decode(1.0),
    lambda: sf.Layout("twitter").decode(float("nan")),
    lambda: sf.encode(True),
    lambda: sf.encode(2.0),
    lambda: sf.Generator("twitter", {"datacenter": True, "worker": 1}),
    lambda: sf.Generator("twitter", {"datacenter": 1, "worker": 1.0}),
    lambda: sf.Generator("twitter", {"datacenter": 1, "worker": float("nan")}),
    lambda: sf.Layout("twitter").compose(1_700_000_000_000, {"datacenter": 1, "worker": False}),
    lambda: sf.Generator("twitter", isolated=True).next_id_at(True),
    lambda: sf.Generator("twitter", isolated=True).next_ids(True),
])
def test_bools_and_floats_are_not_ids_or_node_values(call) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(sf.SnowflakeTypeError) as e:
        call()
    assert isinstance(e.value, TypeError) and e.value.code == "ERR_SNOWFLAKE_TYPE"


def test_a_node_value_of_the_wrong_type_names_its_field() -> None:
    with pytest.raises(sf.SnowflakeTypeError, match="`worker` must be a whole number, not a boolean"):
        sf.Generator("twitter", {"datacenter": 1, "worker": True})
    with pytest.raises(sf.SnowflakeTypeError, match="`datacenter`"):
        sf.Generator("twitter", {"datacenter": 1.5, "worker": 1})


def test_state_file_problems_fail_at_open_naming_the_path(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-dir" / "ids.state"
    with pytest.raises(sf.SnowflakeError) as e:
        sf.Generator("twitter", FULL, state_file=missing)
    assert str(missing.parent) in str(e.value), str(e.value)
    assert not missing.parent.exists(), "nothing was made"
    # A path that is not a regular file is refused before a byte of it is read or written.
    for not_a_file, what in [(Path("/dev/null"), "character device"), (tmp_path, "directory")]:
        with pytest.raises(sf.StateFileError, match=what) as e:
            sf.Generator("twitter", FULL, state_file=not_a_file)
        assert str(not_a_file) in str(e.value), str(e.value)


def test_retired_options_say_what_replaced_them(tmp_path: Path) -> None:
    with pytest.raises(sf.ValueRangeError, match="lease_dir was retired") as e:
        sf.Generator("twitter", {"datacenter": 1}, lease="local", lease_dir=tmp_path)  # type: ignore[call-arg]
    with pytest.raises(sf.ValueRangeError, match="run_lock was retired"):
        sf.Generator("twitter", FULL, run_lock=True)  # type: ignore[call-arg]
    assert e.value.code == "ERR_SNOWFLAKE_VALUE"


def test_stats_say_how_long_the_layout_has_left() -> None:
    layout = sf.Layout("twitter")
    s = sf.Generator(layout, FULL, isolated=True).stats()
    assert s.last_unix_ms == layout.last_unix_ms
    now = int(dt.datetime.now(dt.timezone.utc).timestamp() * 1000)
    assert abs(s.ms_left - (layout.last_unix_ms - now)) < 60_000
    assert isinstance(s.years_left, float) and s.years_left == pytest.approx(s.ms_left / (365.2425 * 86_400_000))
    assert "years_left=" in repr(s)
