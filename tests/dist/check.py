"""Run by tests/dist/run.sh with the Python of a fresh virtualenv that installed a package
from dist/python/ (the wheel, or the sdist built offline): the installed libsnowflake
decodes the shared vectors, gives their public IDs and PostgreSQL SQL, and issues IDs.

    python check.py <tests/vectors> <expected version>

Prints one line, `ok <version> <n> vectors, <m> IDs from <module file>`; any failure raises.
"""
import json
import sys
from pathlib import Path

import libsnowflake as sf

vectors, version = Path(sys.argv[1]), sys.argv[2]
assert sf.__version__ == version, f"installed {sf.__version__}, expected {version}"
assert "site-packages" in sf.__file__, f"libsnowflake comes from {sf.__file__}, not the venv"
checked = 0

for v in json.loads((vectors / "layouts.json").read_text())["layouts"]:
    layout = sf.Layout(v["spec"])
    assert str(layout) == v["canonical"], v["spec"]
    for d in v["decode"]:
        parts = layout.decode(int(d["id"]))
        got = (parts.unix_ms, parts.tick, parts.sequence, parts.fields)
        assert got == (d["unix_ms"], d["tick"], d["sequence"], d["fields"]), (v["spec"], d, got)
        checked += 1

for v in json.loads((vectors / "encodings.json").read_text())["ids"]:
    for reverse, table in ((False, v["plain"]), (True, v["reverse"])):
        for encoding, text in table.items():
            assert sf.encode(int(v["id"]), encoding, reverse=reverse) == text, (v["id"], encoding)
            assert sf.decode_str(text, encoding, reverse=reverse) == int(v["id"]), (text, encoding)
            checked += 1

for trace in json.loads((vectors / "generator.json").read_text())["traces"]:
    o = trace["options_fields"]
    gen = sf.Generator(trace["layout"], trace["node"], max_drift_ms=o["max_drift_ms"],
                       max_wait_ms=o["max_wait_ms"], sequence_start=o["sequence_start"],
                       rollover=o["rollover"], isolated=True)
    for step in trace["steps"]:
        try:
            got = str(gen.next_id_at(step["unix_ms"]))
        except sf.SnowflakeError as e:
            got = e.code
        assert got == step.get("id", step.get("error")), (trace["name"], step, got)
        checked += 1

# Public IDs (issue 14): the same texts as every language, and back.
public = json.loads((vectors / "public_ids.json").read_text())
for row in public["keys"]:
    p = sf.PublicIds(bytes.fromhex(row["key_hex"]), row["encoding"])
    for c in row["cases"]:
        assert p.encode(int(c["id"])) == c["text"], (row["key_hex"], c)
        assert p.decode(c["text"]) == int(c["id"]), (row["key_hex"], c)
        checked += 1

# The PostgreSQL SQL (issue 14): core's text for every preset, or the refusal of a 64-bit one.
for v in json.loads((vectors / "sql_scripts.json").read_text())["scripts"]:
    layout = sf.Layout(v["spec"])
    if "error" in v:
        try:
            layout.sql(v["dialect"])
            raise AssertionError(f"{v['spec']}: a 64-bit layout's SQL was not refused")
        except sf.ValueRangeError as e:
            assert e.code == v["error"], (v["spec"], e.code)
    else:
        assert layout.sql(v["dialect"], prefix=v["prefix"]) == v["sql"], v["spec"]
    checked += 1

# The UUIDv7 view (issue 28): every vector, both ways.
for row in json.loads((vectors / "uuid.json").read_text())["layouts"]:
    layout = sf.Layout(row["spec"])
    for c in row["cases"]:
        assert str(layout.to_uuid(int(c["id"]))) == c["uuid"] and layout.from_uuid(c["uuid"]) == int(c["id"]), c
        checked += 1

# The framework adapters ship in the wheel (their frameworks are extras, not installed here).
import importlib.util

for module in ("libsnowflake.pydantic", "libsnowflake.sqlalchemy", "libsnowflake.django"):
    assert importlib.util.find_spec(module) is not None, f"{module} is not in the wheel"

# New IDs from the system clock: unique, increasing, of this node.
gen = sf.Generator("twitter", node={"datacenter": 1, "worker": 3})
ids = [gen.next_id() for _ in range(1000)] + gen.next_ids(9000)
assert ids == sorted(set(ids)) and len(ids) == 10000, "IDs repeat or go back"
assert {tuple(sf.Layout("twitter").decode(i).fields.values()) for i in ids} == {(1, 3)}

# The first hour (issue 29): options as text, an unknown keyword is a TypeError, asyncio, a
# clean dir(), an expired layout's date.
import asyncio  # noqa: E402

text = sf.Generator("twitter", node="datacenter=1,worker=3", options="max_wait_ms=0")
assert text.max_wait_ms == 0 and text.next_id() > ids[-1]
try:
    sf.Generator("twitter", max_wait=0)
    raise AssertionError("an unknown keyword was taken")
except TypeError as e:
    assert isinstance(e, sf.SnowflakeTypeError) and "max_wait_ms" in str(e), e
later = asyncio.run(text.next_id_async())
assert later > ids[-1]
assert "annotations" not in dir(sf)
try:
    sf.Generator("baidu", node={"worker": 1}).next_id()
    raise AssertionError("baidu issued past its end")
except sf.TimeRangeError as e:
    assert "(2024-11-20T13:24:15.999Z)" in str(e), e
print(f"ok {sf.__version__} {checked} vectors, {len(ids)} IDs from {sf.__file__}")
