"""gunicorn, as users run it (issue 13): 4 sync workers, no --preload, a WSGI app that makes a
plain generator (no coordination option) for every request, behind real HTTP requests from
several concurrent clients. The workers are separate processes with one identity: no ID may
come twice, and the IDs must come from all 4 workers.

gunicorn is installed into .venv by scripts/install-deps.sh.
"""

from __future__ import annotations

import http.client
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

WORKERS = 4
CLIENTS = 8
IDS_PER_REQUEST = 1000
MIN_REQUESTS = 300  # 300k IDs
MAX_REQUESTS = 3000  # while some worker has not answered yet

APP = '''
import os
import libsnowflake as sf


def app(environ, start_response):
    # A generator per request, with no coordination option, as a WSGI app makes one.
    gen = sf.Generator("twitter", {"datacenter": 3, "worker": 7})
    n = int(environ.get("QUERY_STRING") or 1)
    ids = [gen.next_id() for _ in range(n // 2)] + gen.next_ids(n - n // 2)
    body = ("%d %s" % (os.getpid(), " ".join(map(str, ids)))).encode()
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
    return [body]
'''


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _booted(log: Path) -> set[str]:
    text = log.read_text() if log.exists() else ""
    return set(re.findall(r"Booting worker with pid: (\d+)", text))


def _start(tmp: Path) -> tuple[subprocess.Popen[bytes], int, Path]:
    """gunicorn on a free port, its 4 workers booted. Tries three ports: another program of
    the machine may take the free port between our look and gunicorn's bind."""
    env = dict(os.environ, SNOWFLAKE_SHM_DIR=str(tmp / "shm"))
    for attempt in range(3):
        port = _free_port()
        log = tmp / f"gunicorn-{attempt}.log"
        proc = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "--workers", str(WORKERS), "--bind", f"127.0.0.1:{port}",
             "--chdir", str(tmp), "--error-logfile", str(log), "--log-level", "info", "--timeout", "120",
             "app:app"],
            env=env, cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        )
        deadline = time.monotonic() + 120  # a loaded 2-core machine
        while time.monotonic() < deadline and proc.poll() is None and len(_booted(log)) < WORKERS:
            time.sleep(0.05)
        if proc.poll() is None and len(_booted(log)) >= WORKERS:
            return proc, port, log
        _stop(proc)
        if "Address already in use" not in (log.read_text() if log.exists() else ""):
            break
    raise AssertionError(f"gunicorn did not boot {WORKERS} workers:\n" + (log.read_text() if log.exists() else ""))


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the master (it stops its workers), then SIGKILL to the whole group."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # any worker left behind: the group is the master's
    except ProcessLookupError:
        pass
    proc.wait()


def test_gunicorn_four_workers_plain_generators_never_repeat(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(APP)
    (tmp_path / "shm").mkdir(mode=0o700)
    proc, port, log = _start(tmp_path)
    answers: list[tuple[str, list[int]]] = []
    errors: list[str] = []
    lock = threading.Lock()
    started = 0

    def client() -> None:
        nonlocal started
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        try:
            while True:
                with lock:
                    pids = {pid for pid, _ in answers}
                    if errors or started >= MAX_REQUESTS or (started >= MIN_REQUESTS and len(pids) >= WORKERS):
                        return
                    started += 1
                # A new connection each time: a sync worker closes it after its answer.
                conn.close()
                conn.request("GET", f"/?{IDS_PER_REQUEST}")
                r = conn.getresponse()
                body = r.read().decode()
                with lock:
                    if r.status != 200:
                        errors.append(f"HTTP {r.status}: {body[:300]}")
                        return
                    pid, *ids = body.split()
                    answers.append((pid, [int(x) for x in ids]))
        except Exception as e:  # reported below
            with lock:
                errors.append(f"{type(e).__name__}: {e}")
        finally:
            conn.close()

    try:
        threads = [threading.Thread(target=client) for _ in range(CLIENTS)]
        t0 = time.monotonic()
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=600)
        seconds = time.monotonic() - t0
        booted = _booted(log)
    finally:
        _stop(proc)

    assert not errors, errors[:3]
    assert all(not t.is_alive() for t in threads), "a client hung"
    everything = [i for _, ids in answers for i in ids]
    assert all(len(ids) == IDS_PER_REQUEST for _, ids in answers)
    assert all(ids == sorted(set(ids)) for _, ids in answers), "an answer's IDs are not increasing"
    repeats = len(everything) - len(set(everything))
    assert repeats == 0, f"{repeats} repeated IDs among {len(everything)} from {WORKERS} gunicorn workers"
    # twitter: time:41, datacenter:5, worker:5, sequence:12 (written out, not the library's decode)
    wrong = [i for i in everything if ((i >> 17) & 31, (i >> 12) & 31) != (3, 7)]
    assert not wrong, f"IDs of another node: {wrong[:3]}"
    pids = {pid for pid, _ in answers}
    assert pids == booted and len(pids) == WORKERS, f"answers from worker pids {sorted(pids)}, booted {sorted(booted)}"
    print(f"gunicorn: {len(answers)} requests, {len(everything)} IDs in {seconds:.1f}s from {len(pids)} workers")
