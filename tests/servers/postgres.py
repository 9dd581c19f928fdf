#!/usr/bin/env python3
"""A throw-away PostgreSQL server for tests and benchmarks: the one place that starts one.

- The cluster lives in a fresh temporary directory (``initdb``), listens on no TCP port
  (``listen_addresses=''``) and only on a unix socket in that same directory, so that any
  number of test runs on one machine never meet.
- It runs as an unprivileged user: the current one, or ``postgres`` (the user Debian's
  ``postgresql`` package creates) when we are root, as in CI; PostgreSQL refuses to run as
  root.
- It is ready when ``pg_isready`` says so, and is stopped (``pg_ctl stop -m immediate``) and
  its directory removed however the test ends: ``with Postgres() as pg:`` (or ``stop()`` in a
  ``finally``), with an ``atexit`` hook as a last resort.

Binaries come from ``$PG_BIN``, else the newest ``/usr/lib/postgresql/*/bin`` (Debian), else
``$PATH``. Missing binaries are an error, never a skip: ``scripts/install-deps.sh`` installs
them.

Use from Python (tests put ``tests/servers`` on ``sys.path``)::

    with Postgres() as pg:
        out = pg.psql("SELECT 1")            # psql -At, as the superuser
        conn = psycopg.connect(**pg.connect_args())

or from a shell, for scripts (the command gets PGHOST, PGPORT, PGUSER, PGDATABASE)::

    python3 tests/servers/postgres.py -- psql -c 'SELECT version()'
"""

from __future__ import annotations

import atexit
import glob
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Any, Optional, Sequence


def pg_bin_dir() -> str:
    env = os.environ.get("PG_BIN")
    if env:
        return env
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                   key=lambda p: int(p.split("/")[4]) if p.split("/")[4].isdigit() else 0)
    if found:
        return os.path.dirname(found[-1])
    initdb = shutil.which("initdb")
    if initdb:
        return os.path.dirname(initdb)
    raise RuntimeError("PostgreSQL's initdb was not found: install it with scripts/install-deps.sh "
                       "(apt-get install postgresql), or set PG_BIN")


class Postgres:
    """One server. ``start()`` returns once it accepts connections."""

    def __init__(self, *, settings: Optional[dict[str, str]] = None, startup_timeout_s: float = 60.0):
        self.bin = pg_bin_dir()
        self.settings = settings or {}
        self.startup_timeout_s = startup_timeout_s
        self.dir: Optional[str] = None
        self.port = 5432  # only names the socket file: there is no TCP listener
        self.user = "postgres"
        self.database = "postgres"
        self._run_as: Optional[str] = None
        self._started = False

    # --- running commands as the server's user ---------------------------------------------
    def _cmd(self, args: Sequence[str]) -> list[str]:
        if self._run_as is None:
            return list(args)
        return ["runuser", "-u", self._run_as, "--", *args]

    def _run(self, args: Sequence[str], **kw: Any) -> subprocess.CompletedProcess[str]:
        return subprocess.run(self._cmd(args), capture_output=True, text=True, **kw)

    @property
    def socket_dir(self) -> str:
        assert self.dir is not None
        return self.dir

    @property
    def data_dir(self) -> str:
        return os.path.join(self.socket_dir, "data")

    def env(self) -> dict[str, str]:
        """Environment variables that point libpq clients (psql, psycopg) at this server."""
        return {"PGHOST": self.socket_dir, "PGPORT": str(self.port),
                "PGUSER": self.user, "PGDATABASE": self.database}

    def connect_args(self) -> dict[str, Any]:
        """Keyword arguments for ``psycopg.connect``."""
        return {"host": self.socket_dir, "port": self.port, "user": self.user, "dbname": self.database}

    # --- life cycle -----------------------------------------------------------------------
    def start(self) -> "Postgres":
        if os.geteuid() == 0:
            self._run_as = "postgres"
            try:
                pwd.getpwnam(self._run_as)
            except KeyError:
                raise RuntimeError("running as root needs the `postgres` user "
                                   "(apt-get install postgresql creates it)") from None
        else:
            self.user = pwd.getpwuid(os.geteuid()).pw_name
        # A short path: a unix socket's path must fit in 107 bytes.
        self.dir = tempfile.mkdtemp(prefix="sfpg-", dir="/tmp")
        atexit.register(self.stop)
        if self._run_as:
            os.chown(self.dir, pwd.getpwnam(self._run_as).pw_uid, -1)
        try:
            r = self._run([os.path.join(self.bin, "initdb"), "-D", self.data_dir, "-U", self.user,
                           "-A", "trust", "-E", "UTF8", "--no-sync", "--locale=C"])
            if r.returncode != 0:
                raise RuntimeError(f"initdb failed:\n{r.stdout}{r.stderr}")
            options = {
                "listen_addresses": "''",
                "unix_socket_directories": f"'{self.socket_dir}'",
                "port": str(self.port),
                # A test server: no durability work, small memory.
                "fsync": "off",
                "synchronous_commit": "off",
                "full_page_writes": "off",
                "shared_buffers": "32MB",
                "max_connections": "40",
                **self.settings,
            }
            opts = " ".join(f"-c {k}={v}" for k, v in options.items())
            log = os.path.join(self.socket_dir, "server.log")
            r = self._run([os.path.join(self.bin, "pg_ctl"), "-D", self.data_dir, "-l", log,
                           "-o", opts, "-w", "-t", str(int(self.startup_timeout_s)), "start"])
            self._started = True
            if r.returncode != 0:
                raise RuntimeError(f"pg_ctl start failed:\n{r.stdout}{r.stderr}\n{self._log_tail()}")
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def _log_tail(self) -> str:
        try:
            with open(os.path.join(self.socket_dir, "server.log")) as f:
                return f.read()[-4000:]
        except OSError:
            return ""

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.startup_timeout_s
        isready = os.path.join(self.bin, "pg_isready")
        while True:
            r = subprocess.run([isready, "-h", self.socket_dir, "-p", str(self.port), "-U", self.user,
                                "-d", self.database, "-q"], capture_output=True)
            if r.returncode == 0:
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"PostgreSQL did not become ready:\n{self._log_tail()}")
            time.sleep(0.05)

    def stop(self) -> None:
        if self.dir is None:
            return
        if self._started:
            self._run([os.path.join(self.bin, "pg_ctl"), "-D", self.data_dir, "-m", "immediate",
                       "-w", "stop"])
            self._started = False
        shutil.rmtree(self.dir, ignore_errors=True)
        self.dir = None

    def __enter__(self) -> "Postgres":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- clients ----------------------------------------------------------------------------
    def psql(self, sql: str, *, check: bool = True, args: Sequence[str] = ()) -> str:
        """Runs ``sql`` through ``psql -At`` (ON_ERROR_STOP); returns its output."""
        r = subprocess.run([os.path.join(self.bin, "psql"), "-X", "-At", "-v", "ON_ERROR_STOP=1",
                            "-h", self.socket_dir, "-p", str(self.port), "-U", self.user,
                            "-d", self.database, *args],
                           input=sql, capture_output=True, text=True)
        if check and r.returncode != 0:
            raise RuntimeError(f"psql failed ({r.returncode}):\n{r.stderr}")
        return r.stdout if check else r.stdout + r.stderr


def main(argv: list[str]) -> int:
    if "--" not in argv:
        print(__doc__, file=sys.stderr)
        return 2
    command = argv[argv.index("--") + 1:]
    with Postgres() as pg:
        env = {**os.environ, **pg.env(), "PG_BIN": pg.bin}
        env["PATH"] = pg.bin + os.pathsep + env.get("PATH", "")
        return subprocess.run(command, env=env).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
