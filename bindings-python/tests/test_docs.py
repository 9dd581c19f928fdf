"""The documentation's examples run: every ```python block of docs/python.md, docs/scale.md
(the simulation of a fleet's Redis load) and of the package README, each as a script in a fresh interpreter; and the gunicorn recipes (shared=,
lease=), as written, under a real gunicorn with 4 workers, a killed worker, with and
without --preload."""

from __future__ import annotations

import os
import http.client
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import libsnowflake as sf
from conftest import REPO

DOCS = [REPO / "docs" / "python.md", REPO / "docs" / "scale.md", REPO / "docs" / "integrations-python.md", REPO / "bindings-python" / "README.md"]


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
    env = dict(os.environ, SNOWFLAKE_SHM_DIR=str(tmp_path))
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path,
                       timeout=120, env=env)
    assert r.returncode == 0, f"{path} example {i} failed:\n{code}\n{r.stdout}\n{r.stderr}"


def named_block(first_line: str) -> str:
    for _, _, code in BLOCKS:
        if code.startswith(first_line + "\n"):
            return code
    raise AssertionError(f"no example starting with {first_line!r}")


class UnixHTTPConnection(http.client.HTTPConnection):
    """HTTP over gunicorn's unix socket: in the test's own directory, no port to collide on."""

    def __init__(self, path: str) -> None:
        super().__init__("localhost", timeout=60)
        self.path = path

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.path)


def get(sock: str) -> int:
    c = UnixHTTPConnection(sock)
    try:
        c.request("GET", "/")
        r = c.getresponse()
        assert r.status == 200, (r.status, r.read())
        return int(r.read())
    finally:
        c.close()


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
    sock = str(tmp_path / "gunicorn.sock")
    cmd = [gunicorn, "-w", "4", "-b", f"unix:{sock}", app]
    if (tmp_path / "gunicorn.conf.py").exists():
        cmd[1:1] = ["-c", "gunicorn.conf.py"]
    if preload:
        cmd.insert(1, "--preload")
    env = dict(os.environ, PYTHONPATH=str(tmp_path), SNOWFLAKE_SHM_DIR=str(tmp_path))
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        # Ready when it answers (a deadline for a hang, far beyond a loaded machine's start-up).
        deadline = time.monotonic() + 120
        while True:
            try:
                get(sock)
                break
            except OSError:
                assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
                assert time.monotonic() < deadline, "gunicorn did not start"
                time.sleep(0.1)
        ids: list[int] = []
        with ThreadPoolExecutor(16) as pool:
            ids += pool.map(lambda _: get(sock), range(800))
            # A worker dies; the master starts another.
            os.kill(min(worker_pids(proc.pid)), signal.SIGKILL)
            time.sleep(1.0)
            ids += pool.map(lambda _: get(sock), range(800))
    finally:
        proc.send_signal(signal.SIGTERM)
        out = proc.communicate(timeout=120)[0].decode(errors="replace")
        # pytest shows it when the test fails, also where a request failed above (flaky.sh met
        # one request reset by a worker, and this output was lost).
        print(f"gunicorn's output:\n{out}")
    assert len(ids) == 1600
    assert len(set(ids)) == len(ids), "duplicate IDs across gunicorn workers"
    workers = {sf.Layout("twitter").decode(i).fields["worker"] for i in ids}
    if recipe == "shared":
        assert workers == {1}
    else:
        assert len(workers) >= 2, (workers, out)
    assert "Traceback" not in out, out
