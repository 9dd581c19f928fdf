"""A throw-away PostgreSQL for the tests and benchmarks of `snowflake sql`, with the interface
of tests/servers/servers.py's `Servers` (issue 19), so that its users move to the shared helpers
by changing one import:

    from postgres import Servers          # later: from servers import Servers
    with Servers("postgres", dir=tmp_path) as s:
        pg = s.info["postgres"]           # socket_dir, port, user, database, dsn, bin_dir, ...
        psycopg.connect(pg["dsn"])

Only `postgres` is served here, the way serve.py does it: a cluster made by initdb in a
directory of its own (under `dir`, or in /tmp when PostgreSQL's user cannot reach `dir`), run
as the `postgres` user when we are root (PostgreSQL refuses root), with no TCP listener and its
unix socket in that directory; ready when `pg_isready` says so; stopped and removed by `stop()`,
by `with`, and by an `atexit` hook, however the test ends. Missing binaries are an error, never
a skip (scripts/install-deps.sh installs them).
"""

from __future__ import annotations

import atexit
import os
import pwd
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, Optional, Union


class ServerError(RuntimeError):
    pass


def postgres_bin() -> Path:
    env = os.environ.get("PG_BIN")
    if env:
        return Path(env)
    dirs = sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0)
    for d in reversed(dirs):
        if (d / "initdb").exists():
            return d
    found = shutil.which("initdb")
    if found:
        return Path(found).parent
    raise ServerError("PostgreSQL is not installed (apt postgresql; bash scripts/install-deps.sh installs it)")


class Servers:
    """`Servers("postgres", dir=...)`: starts at once; `info["postgres"]` describes it."""

    def __init__(self, kind: str, *args: str, dir: Optional[Union[str, Path]] = None,
                 db_user: str = "snowflake", database: str = "postgres", timeout_s: float = 180) -> None:
        if kind != "postgres" or args:
            raise ServerError(f"only `postgres` without options is served here, not {kind} {' '.join(args)}")
        self.bin = postgres_bin()
        self.os_user: Optional[str] = None
        self.base: Optional[Path] = None
        self.info: dict[str, Any] = {}
        self._started = False
        atexit.register(self.stop)
        try:
            self._start(Path(dir) if dir is not None else None, db_user, database, timeout_s)
        except BaseException:
            self.stop()
            raise

    def _as_user(self, argv: list[str]) -> subprocess.CompletedProcess[str]:
        if self.os_user:
            argv = ["runuser", "-u", self.os_user, "--", *argv]
        return subprocess.run(argv, capture_output=True, text=True,
                              env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C", "TZ": "UTC"})

    def _start(self, dir: Optional[Path], db_user: str, database: str, timeout_s: float) -> None:
        uid = os.geteuid()
        if uid == 0:
            try:
                pw = pwd.getpwnam("postgres")
            except KeyError:
                raise ServerError("no user `postgres` to run PostgreSQL as (apt postgresql creates it)") from None
            self.os_user, uid = "postgres", pw.pw_uid
        # A short path (a unix socket's path holds at most 107 bytes) that PostgreSQL's user can
        # reach: the test's directory when it can, else /tmp.
        parent = dir if dir is not None and self.os_user is None else Path("/tmp")
        self.base = Path(tempfile.mkdtemp(prefix="sf-pg-", dir=parent))
        self.base.chmod(0o711)
        home, sock = self.base / "postgres", self.base / "pg"
        for p in (home, sock):
            p.mkdir(mode=0o755)
            os.chown(p, uid, -1)
        data, log, port = home / "data", home / "postgres.log", 5432  # the port only names the socket
        r = self._as_user([str(self.bin / "initdb"), "-D", str(data), "-U", db_user, "-E", "UTF8",
                           "--locale=C", "--no-sync", "--auth=trust"])
        if r.returncode != 0:
            raise ServerError(f"initdb failed:\n{(r.stdout + r.stderr)[-3000:]}")
        settings = {"listen_addresses": "''", "unix_socket_directories": f"'{sock}'", "port": str(port),
                    "fsync": "off", "synchronous_commit": "off", "full_page_writes": "off",
                    "shared_buffers": "32MB", "max_connections": "60"}
        r = self._as_user([str(self.bin / "pg_ctl"), "-D", str(data), "-l", str(log), "-w",
                           "-t", str(int(timeout_s)), "-o", " ".join(f"-c {k}={v}" for k, v in settings.items()),
                           "start"])
        self._started = True
        if r.returncode != 0:
            raise ServerError(f"pg_ctl start failed:\n{r.stdout}{r.stderr}\n{self._tail(log)}")
        deadline = time.monotonic() + timeout_s
        while subprocess.run([str(self.bin / "pg_isready"), "-q", "-h", str(sock), "-p", str(port),
                              "-U", db_user, "-d", database]).returncode != 0:
            if time.monotonic() > deadline:
                raise ServerError(f"postgres (pg_isready) did not become ready:\n{self._tail(log)}")
            time.sleep(0.05)
        self.info = {"postgres": {
            "running": True, "port": port, "socket_dir": str(sock), "host": None,
            "user": db_user, "password": None, "database": database,
            "dsn": f"postgresql://{db_user}@/{database}?host={sock}&port={port}",
            "data_dir": str(data), "log": str(log), "bin_dir": str(self.bin), "os_user": self.os_user,
        }}

    @staticmethod
    def _tail(log: Path) -> str:
        try:
            return log.read_text()[-4000:]
        except OSError:
            return ""

    def stop(self) -> None:
        """Stops the server and removes its files; returns when that is done."""
        if self.base is None:
            return
        if self._started:
            self._as_user([str(self.bin / "pg_ctl"), "-D", str(self.base / "postgres" / "data"), "-m", "immediate",
                           "-w", "stop"])
            self._started = False
        shutil.rmtree(self.base, ignore_errors=True)
        self.base = None

    def __enter__(self) -> "Servers":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()


__all__ = ["Servers", "ServerError"]
