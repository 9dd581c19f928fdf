"""The documentation's examples run: every ```python block of docs/python.md and of the
package README, each as a script in a fresh interpreter; and the gunicorn recipes (shared=,
lease=), as written, under a real gunicorn with 4 workers, a killed worker, with and
without --preload."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import libsnowflake as sf
from conftest import REPO

DOCS = [REPO / "docs" / "python.md", REPO / "bindings-python" / "README.md"]


def python_blocks(path: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", path.read_text(), flags=re.S)


BLOCKS = [(path, i, code) for path in DOCS for i, code in enumerate(python_blocks(path))]


def test_docs_have_examples() -> None:
    for path in DOCS:
        assert python_blocks(path), f"{path} has no python example"


@pytest.mark.parametrize("path,i,code", BLOCKS, ids=[f"{p.parent.name}/{p.name}#{i}" for p, i, _ in BLOCKS])
def test_example_runs(path: Path, i: int, code: str, tmp_path: Path) -> None:
    script = tmp_path / "example.py"
    script.write_text(code)
    # Shared states and leases of the examples go to the test's directory.
    env = dict(os.environ, SNOWFLAKE_SHM_DIR=str(tmp_path), SNOWFLAKE_LEASE_DIR=str(tmp_path / "leases"))
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path,
                       timeout=120, env=env)
    assert r.returncode == 0, f"{path} example {i} failed:\n{code}\n{r.stdout}\n{r.stderr}"


def named_block(first_line: str) -> str:
    for _, _, code in BLOCKS:
        if code.startswith(first_line + "\n"):
            return code
    raise AssertionError(f"no example starting with {first_line!r}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def get(url: str) -> int:
    with urllib.request.urlopen(url, timeout=10) as r:
        return int(r.read())


def worker_pids(master: int) -> set[int]:
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(master)], capture_output=True, text=True)
    return {int(p) for p in out.stdout.split()}


RECIPES = {
    # recipe: (files by their first line, WSGI app)
    "shared": (["# app.py"], "app:application"),
    "lease": (["# gunicorn.conf.py", "# leased_app.py"], "leased_app:application"),
}


@pytest.mark.parametrize("preload", [True, False], ids=["preload", "no-preload"])
@pytest.mark.parametrize("recipe", sorted(RECIPES))
def test_gunicorn_recipe(tmp_path: Path, recipe: str, preload: bool) -> None:
    gunicorn = shutil.which("gunicorn", path=str(Path(sys.executable).parent))
    assert gunicorn, "gunicorn is installed by scripts/install-deps.sh"
    files, app = RECIPES[recipe]
    for first_line in files:
        (tmp_path / first_line[2:]).write_text(named_block(first_line))
    port = free_port()
    cmd = [gunicorn, "-w", "4", "-b", f"127.0.0.1:{port}", app]
    if (tmp_path / "gunicorn.conf.py").exists():
        cmd[1:1] = ["-c", "gunicorn.conf.py"]
    if preload:
        cmd.insert(1, "--preload")
    env = dict(os.environ, PYTHONPATH=str(tmp_path), SNOWFLAKE_SHM_DIR=str(tmp_path),
               SNOWFLAKE_LEASE_DIR=str(tmp_path / "leases"))
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                get(url)
                break
            except OSError:
                assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
                assert time.monotonic() < deadline, "gunicorn did not start"
                time.sleep(0.1)
        ids: list[int] = []
        with ThreadPoolExecutor(16) as pool:
            ids += pool.map(lambda _: get(url), range(800))
            # A worker dies; the master starts another.
            os.kill(min(worker_pids(proc.pid)), signal.SIGKILL)
            time.sleep(1.0)
            ids += pool.map(lambda _: get(url), range(800))
    finally:
        proc.send_signal(signal.SIGTERM)
        out = proc.communicate(timeout=30)[0].decode(errors="replace")
    assert len(ids) == 1600
    assert len(set(ids)) == len(ids), "duplicate IDs across gunicorn workers"
    workers = {sf.Layout("twitter").decode(i).fields["worker"] for i in ids}
    if recipe == "shared":
        assert workers == {1}
    else:
        assert len(workers) >= 2, (workers, out)
    assert "Traceback" not in out, out
