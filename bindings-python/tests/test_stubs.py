"""The .pyi stubs describe the compiled module exactly (mypy.stubtest), and type-check
the way users call the library."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def test_stubtest(tmp_path: Path) -> None:
    # Run outside the source tree, so that the installed package (with its compiled module)
    # is what gets checked, and mypy's cache stays out of the repository.
    allowlist = Path(__file__).with_name("stubtest_allowlist.txt")
    r = subprocess.run([sys.executable, "-m", "mypy.stubtest", "libsnowflake",
                        "--mypy-config-file", str(tmp_path / "none.ini"), "--allowlist", str(allowlist)],
                       capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr


def test_user_code_type_checks(tmp_path: Path) -> None:
    code = '''
import array, datetime
import libsnowflake as sf

gen = sf.Generator("twitter", node={"datacenter": 0, "worker": 3}, max_wait_ms=0)
a: int = gen.next_id()
ids: list[int] = gen.next_ids(10)
arr: array.array[int] = gen.next_ids_array(10)
parts: sf.Parts = gen.layout.decode(a)
when: datetime.datetime = parts.datetime
lo: int = sf.Layout("twitter").min_id(datetime.datetime.now(datetime.timezone.utc))
text: str = sf.encode(a, "base62", reverse=True)
back: int = sf.decode_str(text, "base62", reverse=True)
public = sf.PublicIds(b"0123456789abcdef", "base62")
shown: str = public.encode(a)
again: int = public.decode(shown)
ddl: str = sf.Layout("twitter").sql("postgres", prefix="ids")
import uuid
view: uuid.UUID = sf.Layout("twitter").to_uuid(a)
back_id: int = sf.Layout("twitter").from_uuid(str(view))
sources: dict[str, str] = gen.stats().sources
from_env = sf.Generator()
try:
    gen.try_next_id()
except sf.ClockBehindError as e:
    wait: int = e.retry_after_ms + e.behind_ms
except sf.SequenceExhaustedError as e:
    wait = e.retry_after_ms
for i in gen:
    break
'''
    path = tmp_path / "user.py"
    path.write_text(code)
    r = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental",
                        "--cache-dir", str(tmp_path / "cache"), str(path)],
                       capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
