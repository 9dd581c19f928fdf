#!/usr/bin/env python3
"""Real servers for the tests of every language: one program, standard library only.

    python3 tests/servers/serve.py KIND [OPTIONS]

starts KIND (redis, sentinel, postgres, fpm, or certs alone) in a directory of its own, waits
until it answers its protocol, prints ONE JSON line describing it, then supervises: it reads
commands on stdin, one a line, and answers each with one JSON line. When stdin closes (the
test ended, failed, crashed or was SIGKILLed) or on `stop`, it stops every server and removes
their files. If this program itself is killed, the servers get SIGKILL from the kernel
(PR_SET_PDEATHSIG). tests/servers/README.md is the manual; `--help` lists the options.

Ready means answering the protocol: PING -> PONG (after AUTH, over TLS, on every address the
server listens on); for a Sentinel set, every sentinel knowing the master, its replicas and
the other sentinels; `pg_isready`; an FPM status request answered by a worker through
cgi-fcgi. Unix sockets live in the server's own directory. TCP ports are drawn at random below
the kernel's ephemeral range (where nothing binds by accident), and when a server fails to
bind one (its log says "Address already in use") it is started again on another: no
"bind port 0, close, hope".
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import random
import re
import shlex
import shutil
import signal
import socket
import ssl
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Optional

PORT_ATTEMPTS = 40
# Ports a developer's own services commonly hold: never drawn.
RESERVED_PORTS = {3306, 5432, 6379, 6380, 8080, 9000, 11211, 26379, 27017}
# sun_path holds 107 bytes and a NUL; the longest socket name is 20 bytes (pg/.s.PGSQL.NNNNN).
# Deeper directories get their sockets in a short one under /tmp.
MAX_SOCKET_DIR = 107 - 20


class Failure(Exception):
    """A server that cannot be started or driven; `log` is the tail of its log."""

    def __init__(self, message: str, log: str = "") -> None:
        super().__init__(message)
        self.log = log


class PortInUse(Exception):
    pass


def tail(path: Optional[Path], lines: int = 40, offset: int = 0) -> str:
    if path is None or not path.exists():
        return ""
    with open(path, "rb") as f:
        f.seek(offset)
        text = f.read().decode(errors="replace")
    return "\n".join(text.splitlines()[-lines:])


# --- processes ------------------------------------------------------------------------------

_libc = ctypes.CDLL(None, use_errno=True)
PR_SET_PDEATHSIG = 1


class Watchdog:
    """A second process, in a session of its own, told every process group and directory the
    supervisor makes. If the supervisor dies without saying `done` (SIGKILL, or a kill of the
    test's whole process group), it kills those groups (FPM workers outlive their master) and
    removes those directories."""

    def __init__(self) -> None:
        self.proc: Optional[subprocess.Popen] = None

    def tell(self, line: str) -> None:
        if self.proc is None:
            self.proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--watchdog"],
                                         stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True,
                                         text=True)
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
        except OSError:
            pass

    def done(self) -> None:
        if self.proc is not None:
            self.tell("done")
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.close()
            except OSError:
                pass
            self.proc.wait()


WATCHDOG = Watchdog()


def watchdog() -> int:
    for s in (signal.SIGINT, signal.SIGHUP, signal.SIGPIPE):
        signal.signal(s, signal.SIG_IGN)
    groups: set[int] = set()
    dirs: list[str] = []
    for line in sys.stdin:
        word, _, arg = line.rstrip("\n").partition(" ")
        if word == "done":
            return 0
        if word == "pgid":
            groups.add(int(arg))
        elif word == "forget":
            groups.discard(int(arg))
        elif word == "dir":
            dirs.append(arg)
    # The supervisor died without cleaning up.
    for g in groups:
        try:
            os.killpg(g, signal.SIGKILL)
        except OSError:
            pass
    deadline = time.monotonic() + 30
    while groups and time.monotonic() < deadline:
        for g in list(groups):
            try:
                os.killpg(g, 0)
            except OSError:
                groups.discard(g)
        time.sleep(0.1)
    for d in dirs:
        shutil.rmtree(d, ignore_errors=True)
    return 0


def spawn(argv: list[str], log: Path, cwd: Path, user: Optional[str] = None,
          env: Optional[dict[str, str]] = None) -> subprocess.Popen:
    """Starts `argv` in a session of its own (so that its whole process group can be
    signalled), output appended to `log`, killed by the kernel if this supervisor dies."""
    parent = os.getpid()

    def in_child() -> None:
        _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the supervisor died before prctl took effect
            os._exit(1)

    extra: dict[str, Any] = {}
    if user is not None:
        import pwd
        pw = pwd.getpwnam(user)
        extra = dict(user=pw.pw_uid, group=pw.pw_gid, extra_groups=[])
    out = open(log, "ab")
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                cwd=cwd, env=env, start_new_session=True, preexec_fn=in_child,
                                close_fds=True, **extra)
        WATCHDOG.tell(f"pgid {proc.pid}")
        return proc
    except FileNotFoundError as e:
        raise Failure(f"{argv[0]} is not installed (bash scripts/install-deps.sh installs it): {e}")
    finally:
        out.close()


def signal_group(proc: Optional[subprocess.Popen], sig: int) -> None:
    if proc is None:
        return
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def state_of(pid: int) -> Optional[str]:
    """A process's state letter (R, S, T, Z...), None when there is no such process."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def children_of(pid: int) -> list[int]:
    out = []
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                if int((p / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    out.append(int(p.name))
            except (OSError, IndexError, ValueError):
                pass
    return out


def end(proc: Optional[subprocess.Popen], sig: int = signal.SIGTERM, grace_s: float = 20) -> None:
    """Stops `proc` with `sig` (SIGKILL after `grace_s`), then whatever is left of its group,
    and returns once its children (FPM workers, PostgreSQL backends, which are in groups of
    their own) are gone too: a server started again at once must not meet them."""
    if proc is None:
        return
    kids = children_of(proc.pid) if proc.poll() is None else []
    if proc.poll() is None:
        signal_group(proc, sig)
        signal_group(proc, signal.SIGCONT)  # a frozen server must be able to act on it
        try:
            proc.wait(grace_s)
        except subprocess.TimeoutExpired:
            signal_group(proc, signal.SIGKILL)
            proc.wait()
    signal_group(proc, signal.SIGKILL)
    WATCHDOG.tell(f"forget {proc.pid}")
    deadline = time.monotonic() + grace_s
    for kid in kids:
        while state_of(kid) not in (None, "Z", "X"):
            if time.monotonic() > deadline:
                try:
                    os.kill(kid, signal.SIGKILL)
                except OSError:
                    pass
                deadline = time.monotonic() + grace_s
            time.sleep(0.02)


def freeze(proc: Optional[subprocess.Popen], deadline: float) -> None:
    """SIGSTOP to the process group; returns once its leader is stopped."""
    if proc is None or proc.poll() is not None:
        raise Failure("not running")
    signal_group(proc, signal.SIGSTOP)

    def stopped() -> bool:
        return state_of(proc.pid) in ("T", "t")
    wait_for("SIGSTOP taking effect", stopped, deadline, lambda: None)


def new_dir(prefix: str, parent: Optional[Path], mode: int = 0o755) -> Path:
    d = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    d.chmod(mode)
    WATCHDOG.tell(f"dir {d}")
    return d


def run(argv: list[str], timeout: float = 120, **kw: Any) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **kw)
    except FileNotFoundError as e:
        raise Failure(f"{argv[0]} is not installed (bash scripts/install-deps.sh installs it): {e}")
    except subprocess.TimeoutExpired:
        raise Failure(f"`{' '.join(argv)}` did not finish within {timeout} s")


def which(*names: str) -> str:
    for name in names:
        for d in (None, "/usr/sbin", "/usr/local/sbin"):
            found = shutil.which(name, path=d) if d else shutil.which(name)
            if found:
                return found
    raise Failure(f"none of {', '.join(names)} is installed (bash scripts/install-deps.sh installs them)")


# --- ports ----------------------------------------------------------------------------------

def _port_range() -> tuple[int, int]:
    """Ports outside the kernel's ephemeral range: only explicit binds take them."""
    try:
        lo, hi = map(int, Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
    except (OSError, ValueError):
        lo, hi = 32768, 60999
    if lo - 1 - 15000 >= 2000:
        return 15000, lo - 1
    return hi + 1, 65535


def candidate_port(hosts: list[str]) -> int:
    """A port nothing listens on right now (a hint: the server's own bind decides)."""
    lo, hi = _port_range()
    for _ in range(1000):
        port = random.randint(lo, hi)
        if port in RESERVED_PORTS:
            continue
        try:
            for host in hosts:
                family = socket.AF_INET6 if ":" in host else socket.AF_INET
                with socket.socket(family, socket.SOCK_STREAM) as s:
                    s.bind((host, port))
            return port
        except OSError:
            continue
    raise Failure(f"no free port found in {lo}-{hi}")


def ipv6_available() -> bool:
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


def wait_for(what: str, check: Callable[[], bool], deadline: float, alive: Callable[[], None]) -> None:
    """Polls `check` until true; `alive` raises when the server died meanwhile."""
    delay = 0.02
    while True:
        alive()
        if check():
            return
        if time.monotonic() > deadline:
            raise Failure(f"{what}: not ready in time")
        time.sleep(delay)
        delay = min(delay * 1.5, 0.25)


# --- TLS certificates -----------------------------------------------------------------------

CA_CONFIG = """\
[ca]
default_ca = ca_default
[ca_default]
dir = {dir}
database = $dir/index.txt
new_certs_dir = $dir/issued
serial = $dir/serial
default_md = sha256
policy = policy_any
unique_subject = no
copy_extensions = none
[policy_any]
commonName = supplied
[v3_ca]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[v3_server]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = DNS:localhost, IP:127.0.0.1, IP:::1
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
[v3_client]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = clientAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
"""


def make_certs(dir: Path) -> dict[str, str]:
    """A CA, a server certificate for localhost, 127.0.0.1 and ::1, a client certificate (for
    mutual TLS), and a second CA that signed neither (for tests of a wrong CA). EC P-256;
    valid from 2000 to 2099, so that a test that steps its clock back still trusts them."""
    dir.mkdir(mode=0o755)
    (dir / "issued").mkdir()
    (dir / "index.txt").write_text("")
    (dir / "serial").write_text("1000\n")
    (dir / "ca.cnf").write_text(CA_CONFIG.format(dir=dir))
    dates = ["-startdate", "20000101000000Z", "-enddate", "20991231235959Z"]

    def openssl(*args: str) -> None:
        r = run(["openssl", *args], cwd=dir)
        if r.returncode != 0:
            raise Failure(f"openssl {' '.join(args[:2])} failed", r.stdout + r.stderr)

    def key(name: str) -> None:
        openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", f"{name}.key")

    def csr(name: str, cn: str) -> None:
        key(name)
        openssl("req", "-new", "-key", f"{name}.key", "-subj", f"/CN={cn}", "-out", f"{name}.csr")

    for ca, cn in (("ca", "libsnowflake test CA"), ("other-ca", "libsnowflake other test CA")):
        csr(ca, cn)
        openssl("ca", "-batch", "-config", "ca.cnf", "-selfsign", "-keyfile", f"{ca}.key", "-in", f"{ca}.csr",
                "-out", f"{ca}.crt", "-extensions", "v3_ca", "-notext", *dates)
    for name, cn, ext in (("server", "localhost", "v3_server"), ("client", "libsnowflake-test-client", "v3_client")):
        csr(name, cn)
        openssl("ca", "-batch", "-config", "ca.cnf", "-cert", "ca.crt", "-keyfile", "ca.key", "-in", f"{name}.csr",
                "-out", f"{name}.crt", "-extensions", ext, "-notext", *dates)
    # Throwaway keys: readable by the servers and by tests that run as another user.
    for p in dir.iterdir():
        if p.is_file():
            p.chmod(0o644)
    return {
        "ca_cert": str(dir / "ca.crt"), "ca_key": str(dir / "ca.key"),
        "server_cert": str(dir / "server.crt"), "server_key": str(dir / "server.key"),
        "client_cert": str(dir / "client.crt"), "client_key": str(dir / "client.key"),
        "other_ca_cert": str(dir / "other-ca.crt"),
    }


# --- a small RESP client (for readiness checks and the Sentinel set's own commands) ---------

class RespError(Exception):
    pass


class Resp:
    def __init__(self, address: tuple, tls: Optional[dict[str, str]] = None, client_cert: bool = False,
                 timeout: float = 10) -> None:
        if address[0] == "unix":
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            target: Any = address[1]
        else:
            host, port = address
            sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
            target = (host, port)
        sock.settimeout(timeout)
        try:
            sock.connect(target)
            if tls is not None:
                ctx = ssl.create_default_context(cafile=tls["ca_cert"])
                if client_cert:
                    ctx.load_cert_chain(tls["client_cert"], tls["client_key"])
                sock = ctx.wrap_socket(sock, server_hostname=address[0])
        except BaseException:
            sock.close()
            raise
        self.sock = sock
        self.file = sock.makefile("rb")

    def close(self) -> None:
        try:
            self.file.close()
            self.sock.close()
        except OSError:
            pass

    def __enter__(self) -> "Resp":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def call(self, *args: Any) -> Any:
        out = [b"*%d\r\n" % len(args)]
        for a in args:
            b = str(a).encode()
            out.append(b"$%d\r\n%s\r\n" % (len(b), b))
        self.sock.sendall(b"".join(out))
        return self._read()

    def _read(self) -> Any:
        line = self.file.readline()
        if not line.endswith(b"\r\n"):
            raise ConnectionError("connection closed")
        kind, rest = line[:1], line[1:-2].decode(errors="replace")
        if kind == b"+":
            return rest
        if kind == b"-":
            raise RespError(rest)
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            if n < 0:
                return None
            data = self.file.read(n + 2)
            return data[:-2].decode(errors="replace")
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [self._read() for _ in range(n)]
        raise ConnectionError(f"unexpected reply {line!r}")


def pairs(reply: list) -> dict:
    return dict(zip(reply[::2], reply[1::2]))


def info_fields(text: str) -> dict[str, str]:
    return dict(l.split(":", 1) for l in text.splitlines() if ":" in l and not l.startswith("#"))


# --- Redis ----------------------------------------------------------------------------------

def conf_quote(value: str) -> str:
    """A redis.conf argument that may hold spaces or quotes."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


class RedisNode:
    """One redis-server (or sentinel): a unix socket in its directory and, unless `tcp` is
    off, a TCP port (TLS-only when `tls`) on 127.0.0.1 (and ::1 with `ipv6`)."""

    def __init__(self, name: str, dir: Path, sockdir: Path, opts: argparse.Namespace,
                 tls: Optional[dict[str, str]], sentinel: bool = False) -> None:
        self.name = name
        self.dir = dir
        self.opts = opts
        self.tls = tls
        self.sentinel = sentinel
        self.dir.mkdir(mode=0o755)
        self.tcp = sentinel or not opts.no_tcp
        self.unix_socket = None if sentinel else sockdir / f"{name}.sock"
        self.port: Optional[int] = None
        self.port_attempts = 0
        self.proc: Optional[subprocess.Popen] = None
        self.frozen = False
        self.wanted = False  # started and not stopped on purpose: its exit is a failure
        self.started_once = False
        self.log = dir / "redis.log"
        self.conf = dir / "redis.conf"
        self.extra: list[str] = []  # replicaof, sentinel monitor, ...
        self.password = opts.password
        self.users = dict(u.split(":", 1) for u in (opts.user or []))

    @property
    def hosts(self) -> list[str]:
        return ["127.0.0.1", "::1"] if self.opts.ipv6 else ["127.0.0.1"]

    def config(self) -> str:
        lines = [
            "daemonize no", f"dir {self.dir}", f"logfile {self.log}", "loglevel notice",
            'save ""', "appendonly no", "enable-debug-command local",
        ]
        if self.tcp:
            lines.append(f"bind {' '.join(self.hosts)}")
        if self.tls and self.tcp:
            lines += ["port 0", f"tls-port {self.port}"]
        else:
            lines.append(f"port {self.port if self.tcp else 0}")
        if self.unix_socket:
            lines += [f"unixsocket {self.unix_socket}", "unixsocketperm 777"]
        if self.tls:
            lines += [
                f"tls-cert-file {self.tls['server_cert']}", f"tls-key-file {self.tls['server_key']}",
                f"tls-ca-cert-file {self.tls['ca_cert']}",
                f"tls-auth-clients {'yes' if self.opts.mtls else 'no'}", "tls-replication yes",
                # Replicas and sentinels connect as clients: with mutual TLS they need a certificate.
                f"tls-client-cert-file {self.tls['client_cert']}", f"tls-client-key-file {self.tls['client_key']}",
            ]
        if self.sentinel:
            if self.opts.sentinel_password:
                lines.append(f"requirepass {conf_quote(self.opts.sentinel_password)}")
        else:
            if self.password:
                lines.append(f"requirepass {conf_quote(self.password)}")
            for user, pw in self.users.items():
                lines.append(f"user {conf_quote(user)} on {conf_quote('>' + pw)} ~* &* +@all")
            if self.password:
                lines.append(f"masterauth {conf_quote(self.password)}")
            lines += self.opts.config or []
        return "\n".join(lines + self.extra) + "\n"

    def command_line(self) -> list[str]:
        if self.sentinel:
            exe = shutil.which("redis-sentinel")
            return [exe, str(self.conf)] if exe else [which("redis-server"), str(self.conf), "--sentinel"]
        return [which("redis-server"), str(self.conf)]

    def start(self, deadline: float, keep: bool = False) -> None:
        """Starts the server; on the port it had if it had one (a restart on the same
        address), else on a new one, drawn again while the server fails to bind."""
        if not keep:
            for f in ("dump.rdb", "appendonly.aof"):
                p = self.dir / f
                if p.is_dir():
                    shutil.rmtree(p)
                elif p.exists():
                    p.unlink()
        same_address = self.port is not None and self.proc is not None
        for attempt in range(PORT_ATTEMPTS):
            if self.tcp and self.port is None:
                self.port = candidate_port(self.hosts)
            self.port_attempts += 1
            # A sentinel keeps what it learnt (the current master, the others' ids) in its
            # configuration file: a restarted one reads it back.
            if not (self.sentinel and self.started_once):
                self.conf.write_text(self.config())
            offset = self.log.stat().st_size if self.log.exists() else 0
            self.proc = spawn(self.command_line(), self.dir / "stdout.log", self.dir)
            self.started_once = True
            self.frozen = False
            self.wanted = True
            try:
                self.wait_ready(deadline, offset)
                return
            except PortInUse:
                end(self.proc, signal.SIGKILL)
                if same_address:
                    # Someone took the port while the server was down: wait for it briefly.
                    if time.monotonic() > deadline or attempt >= 10:
                        raise Failure(f"{self.name}: port {self.port} was taken while the server was down",
                                      tail(self.log, offset=offset))
                    time.sleep(0.5)
                else:
                    self.port = None
        raise Failure(f"{self.name}: no free port after {PORT_ATTEMPTS} attempts", tail(self.log))

    def alive_check(self, offset: int) -> Callable[[], None]:
        def alive() -> None:
            if self.proc is not None and self.proc.poll() is not None:
                log = tail(self.log, offset=offset)
                if "Address already in use" in log:
                    raise PortInUse()
                raise Failure(f"{self.name} exited with status {self.proc.returncode} while starting",
                              log + "\n" + tail(self.dir / "stdout.log"))
        return alive

    def addresses(self) -> list[tuple]:
        out: list[tuple] = []
        if self.unix_socket:
            out.append(("unix", str(self.unix_socket)))
        if self.tcp:
            out += [(h, self.port) for h in self.hosts]
        return out

    def connect(self, address: Optional[tuple] = None, timeout: float = 10) -> Resp:
        """An authenticated connection (over TLS to a TCP address of a TLS server)."""
        address = address or self.addresses()[0]
        tls = self.tls if (self.tls and address[0] != "unix") else None
        c = Resp(address, tls=tls, client_cert=bool(self.opts.mtls), timeout=timeout)
        try:
            if self.sentinel:
                if self.opts.sentinel_password:
                    c.call("AUTH", self.opts.sentinel_password)
            elif self.password:
                c.call("AUTH", self.password)
            elif self.users:
                user, pw = next(iter(self.users.items()))
                c.call("AUTH", user, pw)
        except BaseException:
            c.close()
            raise
        return c

    def answers(self, address: tuple) -> bool:
        try:
            with self.connect(address, timeout=5) as c:
                return c.call("PING") == "PONG"
        except (OSError, RespError, ConnectionError, ssl.SSLError):
            return False

    def wait_ready(self, deadline: float, offset: int = 0) -> None:
        alive = self.alive_check(offset)
        for address in self.addresses():
            wait_for(f"{self.name} at {address}", lambda: self.answers(address), deadline, alive)

    def call(self, *args: Any) -> Any:
        with self.connect() as c:
            return c.call(*args)

    def describe(self) -> dict[str, Any]:
        scheme = "rediss" if self.tls else "redis"
        d: dict[str, Any] = {
            "name": self.name, "pid": self.proc.pid if self.proc and self.proc.poll() is None else None,
            "running": bool(self.proc and self.proc.poll() is None), "frozen": self.frozen,
            "host": "127.0.0.1" if self.tcp else None, "port": self.port if self.tcp else None,
            "tls": bool(self.tls), "ipv6": bool(self.opts.ipv6) and self.tcp,
            "unix_socket": str(self.unix_socket) if self.unix_socket else None,
            "dir": str(self.dir), "log": str(self.log), "config": str(self.conf),
            "port_attempts": self.port_attempts,
        }
        if self.sentinel:
            d["password"] = self.opts.sentinel_password
            d["address"] = f"127.0.0.1:{self.port}"
            return d
        d["password"] = self.password
        d["users"] = self.users
        if self.tcp:
            d["url"] = f"{scheme}://127.0.0.1:{self.port}/0"
            d["url_ipv6"] = f"{scheme}://[::1]:{self.port}/0" if self.opts.ipv6 else None
            d["auth_url"] = f"{scheme}://:{self.password}@127.0.0.1:{self.port}/0" if self.password else None
        return d


class RedisSet:
    """`redis`: one server. `sentinel`: a master, replicas and sentinels watching them."""

    def __init__(self, opts: argparse.Namespace, dir: Path, sockdir: Path) -> None:
        self.opts = opts
        self.dir = dir
        self.sockdir = sockdir
        self.kind = opts.kind
        self.tls = make_certs(dir / "tls") if (opts.tls or opts.mtls) else None
        self.password_file: Optional[Path] = None
        if opts.password:
            self.password_file = dir / "password"
            self.password_file.write_text(opts.password)
            self.password_file.chmod(0o644)
        if self.kind == "redis":
            self.nodes = [RedisNode("redis", dir / "redis", sockdir, opts, self.tls)]
            self.sentinels: list[RedisNode] = []
        else:
            self.nodes = [RedisNode(f"node{i}", dir / f"node{i}", sockdir, opts, self.tls)
                          for i in range(1 + opts.replicas)]
            self.sentinels = [RedisNode(f"sentinel{i}", dir / f"sentinel{i}", sockdir, opts, self.tls, sentinel=True)
                              for i in range(opts.sentinels)]
        self.master = self.nodes[0]
        self.master.port = opts.port  # tried first; another one if it is taken

    # -- start-up --
    def start(self, deadline: float) -> None:
        self.master.start(deadline)
        if self.kind == "redis":
            return
        for node in self.nodes[1:]:
            node.extra = [f"replicaof 127.0.0.1 {self.master.port}"]
            node.start(deadline)
        for node in self.nodes[1:]:
            self.wait_replica(node, self.master, deadline)
        for s in self.sentinels:
            s.extra = self.sentinel_lines(self.master.port)
            s.start(deadline)
        self.wait_topology(deadline)

    def sentinel_lines(self, master_port: int) -> list[str]:
        name, o = self.opts.master_name, self.opts
        lines = [
            f"sentinel monitor {name} 127.0.0.1 {master_port} {o.quorum}",
            f"sentinel down-after-milliseconds {name} {o.down_after_ms}",
            f"sentinel failover-timeout {name} {o.failover_timeout_ms}",
            f"sentinel parallel-syncs {name} 1",
        ]
        if o.password:
            lines.append(f"sentinel auth-pass {name} {conf_quote(o.password)}")
        return lines

    def wait_replica(self, node: RedisNode, master: RedisNode, deadline: float) -> None:
        def linked() -> bool:
            try:
                f = info_fields(node.call("INFO", "replication"))
                return f.get("role") == "slave" and f.get("master_port") == str(master.port) \
                    and f.get("master_link_status") == "up"
            except (OSError, RespError, ConnectionError, ssl.SSLError):
                return False
        wait_for(f"{node.name} replicating {master.name}", linked, deadline, node.alive_check(0))

    def sentinel_view(self, s: RedisNode) -> Optional[dict]:
        try:
            with s.connect(timeout=5) as c:
                m = pairs(c.call("SENTINEL", "MASTER", self.opts.master_name))
                replicas = [pairs(r) for r in c.call("SENTINEL", "REPLICAS", self.opts.master_name)]
                others = c.call("SENTINEL", "SENTINELS", self.opts.master_name)
                return {"master": m, "replicas": replicas, "sentinels": others}
        except (OSError, RespError, ConnectionError, ssl.SSLError):
            return None

    def agreed(self) -> bool:
        """Every sentinel names the master, sees every replica linked and every other
        sentinel: the state a failover needs."""
        want_replicas = {str(n.port) for n in self.nodes if n is not self.master}
        for s in self.sentinels:
            v = self.sentinel_view(s)
            if v is None:
                return False
            m = v["master"]
            if m.get("port") != str(self.master.port) or m.get("flags") != "master":
                return False
            ok = {r.get("port") for r in v["replicas"]
                  if r.get("flags") == "slave" and r.get("master-link-status") == "ok"}
            if ok != want_replicas:
                return False
            if len(v["sentinels"]) != len(self.sentinels) - 1:
                return False
        return True

    def wait_topology(self, deadline: float) -> None:
        def alive() -> None:
            for n in self.sentinels + self.nodes:
                if n.wanted and n.proc is not None and n.proc.poll() is not None:
                    raise Failure(f"{n.name} exited with status {n.proc.returncode}", tail(n.log))
        wait_for("the sentinels agreeing on the master, its replicas and each other", self.agreed, deadline, alive)

    # -- commands --
    def target(self, name: Optional[str]) -> RedisNode:
        if name in (None, "redis", "master"):
            return self.master
        if name == "replica":
            for n in self.nodes:
                if n is not self.master:
                    return n
        for n in self.nodes + self.sentinels:
            if n.name == name:
                return n
        raise Failure(f"no server named {name!r} (names: redis/master, replica, "
                      + ", ".join(n.name for n in self.nodes + self.sentinels) + ")")

    def failover(self, deadline: float) -> None:
        if self.kind != "sentinel":
            raise Failure("failover needs the sentinel kind")
        old = self.master
        self.wait_topology(deadline)
        s = self.sentinels[0]
        while True:
            try:
                s.call("SENTINEL", "FAILOVER", self.opts.master_name)
                break
            except RespError as e:  # NOGOODSLAVE while a replica's info is stale, INPROG
                if time.monotonic() > deadline:
                    raise Failure(f"SENTINEL FAILOVER: {e}")
                time.sleep(0.2)
        self.await_master(deadline, exclude=old)
        # The sentinels turn the old master into a replica of the new one only after 8 s of
        # seeing it claim to be a master; this does it at once (what they would do), and waits
        # for its link. The next failover first waits for every sentinel to see it linked.
        old.call("REPLICAOF", "127.0.0.1", self.master.port)
        self.wait_replica(old, self.master, deadline)

    def await_master(self, deadline: float, exclude: Optional[RedisNode] = None) -> None:
        """Waits until every sentinel names one master (other than `exclude`) that says it is
        a master, and records it."""
        by_port = {str(n.port): n for n in self.nodes}

        def settled() -> bool:
            ports = set()
            for s in self.sentinels:
                try:
                    addr = s.call("SENTINEL", "GET-MASTER-ADDR-BY-NAME", self.opts.master_name)
                except (OSError, RespError, ConnectionError, ssl.SSLError):
                    return False
                ports.add(addr[1] if addr else None)
            if len(ports) != 1:
                return False
            node = by_port.get(ports.pop())
            if node is None or node is exclude:
                return False
            try:
                role = node.call("ROLE")
            except (OSError, RespError, ConnectionError, ssl.SSLError):
                return False
            if role[0] != "master":
                return False
            self.master = node
            return True
        wait_for("a new master agreed by every sentinel", settled, deadline, lambda: None)

    def command(self, words: list[str], deadline: float) -> None:
        cmd, args = words[0], words[1:]
        if cmd == "failover":
            self.failover(deadline)
            return
        if cmd == "await-master":
            self.await_master(deadline, exclude=self.master if args[:1] == ["new"] else None)
            return
        node = self.target(args[0] if args and args[0] != "keep" else None)
        keep = "keep" in args
        if cmd == "kill":
            node.wanted = False
            end(node.proc, signal.SIGKILL)
        elif cmd == "term":
            node.wanted = False
            end(node.proc, signal.SIGTERM)
        elif cmd == "start":
            if node.proc is not None and node.proc.poll() is None:
                raise Failure(f"{node.name} is running")
            self.restart_as_is(node, deadline, keep)
        elif cmd == "restart":
            if keep and node.proc is not None and node.proc.poll() is None and not node.sentinel:
                node.call("SAVE")
            node.wanted = False
            end(node.proc, signal.SIGTERM)
            self.restart_as_is(node, deadline, keep)
        elif cmd == "freeze":
            freeze(node.proc, deadline)
            node.frozen = True
        elif cmd == "thaw":
            signal_group(node.proc, signal.SIGCONT)
            node.frozen = False
        else:
            raise Failure(f"unknown command {cmd!r}")

    def restart_as_is(self, node: RedisNode, deadline: float, keep: bool) -> None:
        """Starts `node` again in its current role: a replica of today's master."""
        if self.kind == "sentinel" and not node.sentinel:
            node.extra = [] if node is self.master else [f"replicaof 127.0.0.1 {self.master.port}"]
        node.start(deadline, keep=keep)

    def stop(self) -> None:
        for n in self.sentinels + self.nodes:
            n.wanted = False
            end(n.proc)

    def describe(self) -> dict[str, Any]:
        d: dict[str, Any] = {"tls": self.tls,
                             "password_file": str(self.password_file) if self.password_file else None}
        if self.kind == "redis":
            d["redis"] = self.master.describe()
            return d
        d.update({
            "master_name": self.opts.master_name,
            "master": self.master.describe(),
            "replicas": [n.describe() for n in self.nodes if n is not self.master],
            "nodes": [n.describe() for n in self.nodes],
            "sentinels": [s.describe() for s in self.sentinels],
            "sentinel_addrs": [f"127.0.0.1:{s.port}" for s in self.sentinels],
            "down_after_ms": self.opts.down_after_ms,
        })
        return d


class RedisCluster:
    """`redis-cluster`: `--primaries N` redis-servers in cluster mode (3 by default), each with
    `--replicas R` replicas, joined by `redis-cli --cluster create`. Ready when every node
    says `cluster_state:ok` with all 16384 slots served, and every replica is linked."""

    def __init__(self, opts: argparse.Namespace, dir: Path, sockdir: Path) -> None:
        self.opts = opts
        self.dir = dir
        self.tls = None
        self.password_file: Optional[Path] = None
        if opts.password:
            self.password_file = dir / "password"
            self.password_file.write_text(opts.password)
            self.password_file.chmod(0o644)
        count = opts.primaries * (1 + opts.replicas)
        self.nodes = [RedisNode(f"node{i}", dir / f"node{i}", sockdir, opts, None) for i in range(count)]
        self.bus: dict[str, int] = {}

    def cluster_lines(self, node: RedisNode) -> list[str]:
        if node.name not in self.bus:
            self.bus[node.name] = candidate_port(node.hosts)
        return ["cluster-enabled yes", f"cluster-config-file {node.dir / 'nodes.conf'}",
                f"cluster-node-timeout {self.opts.node_timeout_ms}", f"cluster-port {self.bus[node.name]}",
                "cluster-announce-ip 127.0.0.1"]

    def start(self, deadline: float) -> None:
        for n in self.nodes:
            n.extra = self.cluster_lines(n)
            n.start(deadline)
        argv = [which("redis-cli"), "--cluster", "create", *[f"127.0.0.1:{n.port}" for n in self.nodes],
                "--cluster-replicas", str(self.opts.replicas), "--cluster-yes"]
        if self.opts.password:
            argv[1:1] = ["-a", self.opts.password, "--no-auth-warning"]
        r = run(argv, timeout=max(10, deadline - time.monotonic()))
        if r.returncode != 0:
            raise Failure("redis-cli --cluster create failed", (r.stdout + r.stderr)[-3000:])
        self.wait_ok(deadline)

    def view(self, node: RedisNode) -> Optional[dict]:
        try:
            with node.connect(timeout=5) as c:
                info = info_fields(c.call("CLUSTER", "INFO"))
                role = c.call("ROLE")
                return {"info": info, "role": role}
        except (OSError, RespError, ConnectionError, ssl.SSLError):
            return None

    def ok(self) -> bool:
        """Every running node sees the cluster ok, all slots served, and each replica linked."""
        for n in self.nodes:
            if not n.wanted:
                continue
            v = self.view(n)
            if v is None:
                return False
            i = v["info"]
            if i.get("cluster_state") != "ok" or i.get("cluster_slots_ok") != "16384":
                return False
            if v["role"][0] == "slave" and v["role"][3] != "connected":
                return False
        return True

    def wait_ok(self, deadline: float) -> None:
        def alive() -> None:
            for n in self.nodes:
                if n.wanted and n.proc is not None and n.proc.poll() is not None:
                    raise Failure(f"{n.name} exited with status {n.proc.returncode}", tail(n.log))
        wait_for("the cluster's nodes agreeing on every slot", self.ok, deadline, alive)

    def slot_of(self, key: str) -> int:
        for n in self.nodes:
            if n.wanted:
                try:
                    return int(n.call("CLUSTER", "KEYSLOT", key))
                except (OSError, RespError, ConnectionError):
                    continue
        raise Failure("no node answers CLUSTER KEYSLOT")

    def owner(self, key: str) -> RedisNode:
        """The primary that serves `key`'s slot now."""
        slot = self.slot_of(key)
        for n in self.nodes:
            if not n.wanted:
                continue
            try:
                for start, end, primary, *_ in n.call("CLUSTER", "SLOTS"):
                    if int(start) <= slot <= int(end):
                        for m in self.nodes:
                            if m.port == int(primary[1]):
                                return m
            except (OSError, RespError, ConnectionError):
                continue
        raise Failure(f"no node serves the slot of {key!r}")

    def target(self, name: Optional[str]) -> RedisNode:
        if name is None:
            return self.nodes[0]
        if name.startswith("owner:"):
            return self.owner(name[len("owner:"):])
        for n in self.nodes:
            if n.name == name:
                return n
        raise Failure(f"no server named {name!r} (names: owner:KEY, " + ", ".join(n.name for n in self.nodes) + ")")

    def failover(self, key: str, deadline: float) -> None:
        """`CLUSTER FAILOVER FORCE` on a replica of the primary serving `key`: answered once it
        is the primary and the cluster is ok again."""
        old = self.owner(key)
        replicas = [n for n in self.nodes if n.wanted and n is not old
                    and (self.view(n) or {}).get("role", [None])[0] == "slave"
                    and int(self.view(n)["role"][2]) == old.port]
        if not replicas:
            raise Failure(f"{old.name} has no replica to fail over to (give --replicas 1)")
        new = replicas[0]
        new.call("CLUSTER", "FAILOVER", "FORCE")

        def promoted() -> bool:
            v, was = self.view(new), self.view(old)
            return v is not None and v["role"][0] == "master" and was is not None \
                and was["role"][0] == "slave" and self.ok()
        wait_for(f"{new.name} serving {old.name}'s slots", promoted, deadline, lambda: None)

    def command(self, words: list[str], deadline: float) -> None:
        cmd, args = words[0], words[1:]
        if cmd == "failover":
            self.failover(args[0] if args else "x", deadline)
            return
        if cmd == "flushall":
            for n in self.nodes:
                if n.wanted and (self.view(n) or {}).get("role", [None])[0] == "master":
                    n.call("FLUSHALL")
            return
        if cmd == "await-ok":
            self.wait_ok(deadline)
            return
        node = self.target(args[0] if args and args[0] != "keep" else None)
        keep = "keep" in args
        if cmd == "kill":
            node.wanted = False
            end(node.proc, signal.SIGKILL)
        elif cmd == "term":
            node.wanted = False
            end(node.proc, signal.SIGTERM)
        elif cmd in ("start", "restart"):
            if cmd == "start" and node.proc is not None and node.proc.poll() is None:
                raise Failure(f"{node.name} is running")
            if cmd == "restart":
                if keep:
                    node.call("SAVE")
                node.wanted = False
                end(node.proc, signal.SIGTERM)
            node.start(deadline, keep=keep)
            self.wait_ok(deadline)
        elif cmd == "freeze":
            freeze(node.proc, deadline)
            node.frozen = True
        elif cmd == "thaw":
            signal_group(node.proc, signal.SIGCONT)
            node.frozen = False
        else:
            raise Failure(f"unknown command {cmd!r}")

    def stop(self) -> None:
        for n in self.nodes:
            n.wanted = False
            end(n.proc)

    def describe(self) -> dict[str, Any]:
        nodes = []
        for n in self.nodes:
            d = n.describe()
            v = self.view(n) if n.wanted and not n.frozen else None
            d["role"] = {"master": "primary", "slave": "replica"}.get(v["role"][0]) if v else None
            nodes.append(d)
        seeds = ",".join(f"127.0.0.1:{n.port}" for n in self.nodes)
        auth = f":{self.opts.password}@" if self.opts.password else ""
        return {"cluster": {
            "url": f"redis+cluster://{seeds}", "auth_url": f"redis+cluster://{auth}{seeds}" if auth else None,
            "seeds": [f"127.0.0.1:{n.port}" for n in self.nodes], "nodes": nodes,
            "primaries": [d["name"] for d in nodes if d["role"] == "primary"],
            "password": self.opts.password,
            "password_file": str(self.password_file) if self.password_file else None,
            "node_timeout_ms": self.opts.node_timeout_ms,
        }}


# --- MariaDB --------------------------------------------------------------------------------

class MariaDB:
    """A MariaDB server made by mariadb-install-db in its directory, on a unix socket in its
    own directory and a TCP port on 127.0.0.1, with a database and a user of the test's (the
    client speaks the MySQL protocol: `lease=mysql://…`). Ready when the `mariadb` client gets
    an answer to a query through the socket and through TCP as that user."""

    def __init__(self, opts: argparse.Namespace, dir: Path, sockdir: Path, name: str = "mariadb",
                 server_args: Optional[list[str]] = None) -> None:
        self.opts = opts
        # A replica's (`--replica`): its own name, no database or user of its own (they come
        # from its primary), and its server's own options (server-id, log-bin, read-only).
        self.name = name
        self.server_args = server_args or []
        self.home = dir / name
        self.home.mkdir(mode=0o755)
        self.data = self.home / "data"
        self.socket = sockdir / ("mysqld.sock" if name == "mariadb" else f"{name}.sock")
        self.log = self.home / "mariadb.log"
        self.port: Optional[int] = opts.port if name == "mariadb" else None
        self.port_attempts = 0
        self.proc: Optional[subprocess.Popen] = None
        self.frozen = False
        self.root = os.geteuid() == 0

    def base(self) -> list[str]:
        # Its own temporary directory: two servers set up at once in one /tmp collide.
        return ["--no-defaults", f"--datadir={self.data}", f"--tmpdir={self.home}"] + \
            (["--user=root"] if self.root else [])

    def client(self, sql: str, user: str = "root", tcp: bool = False, timeout: float = 30) -> subprocess.CompletedProcess:
        argv = [which("mariadb"), "--no-defaults", "--batch", "--skip-column-names", f"--user={user}",
                f"--connect-timeout={int(max(1, timeout))}"]
        if tcp:
            argv += ["--protocol=tcp", "--host=127.0.0.1", f"--port={self.port}"]
        else:
            argv += ["--protocol=socket", f"--socket={self.socket}"]
        if user != "root" and self.opts.password:
            argv.append(f"--password={self.opts.password}")
        return run(argv + ["-e", sql], timeout=timeout + 10)

    def install(self) -> None:
        r = run([which("mariadb-install-db", "mysql_install_db"), *self.base(), "--auth-root-authentication-method=socket",
                 "--skip-test-db", "--skip-name-resolve"], timeout=300, cwd=self.home)
        if r.returncode != 0:
            raise Failure("mariadb-install-db failed", (r.stdout + r.stderr)[-3000:])

    def start(self, deadline: float) -> None:
        fresh = not self.data.exists()
        if fresh:
            self.install()
        same_address = self.proc is not None
        for attempt in range(PORT_ATTEMPTS):
            if self.port is None:
                self.port = candidate_port(["127.0.0.1"])
            self.port_attempts += 1
            argv = [which("mariadbd"), *self.base(), f"--socket={self.socket}", f"--port={self.port}",
                    "--bind-address=127.0.0.1", f"--pid-file={self.home / 'mariadbd.pid'}", f"--log-error={self.log}",
                    "--skip-name-resolve", "--innodb-buffer-pool-size=16M",
                    "--max-connections=200", "--performance-schema=OFF"]
            argv += self.server_args or ["--skip-log-bin"]
            argv += [f"--{c}" for c in self.opts.mysql_config or []]
            offset = self.log.stat().st_size if self.log.exists() else 0
            self.proc = spawn(argv, self.home / "stdout.log", self.home)
            self.frozen = False

            def alive() -> None:
                if self.proc is not None and self.proc.poll() is not None:
                    log = tail(self.log, offset=offset)
                    if "Address already in use" in log or "Do you already have another" in log:
                        raise PortInUse()
                    raise Failure(f"mariadbd exited with status {self.proc.returncode} while starting", log)
            try:
                wait_for("mariadbd (a query on its socket)", lambda: self.client("SELECT 1", timeout=5).returncode == 0,
                         deadline, alive)
                break
            except PortInUse:
                end(self.proc, signal.SIGKILL)
                if same_address:
                    if time.monotonic() > deadline or attempt >= 10:
                        raise Failure(f"mariadbd: port {self.port} was taken while the server was down")
                    time.sleep(0.5)
                else:
                    self.port = None
        else:
            raise Failure(f"mariadbd: no free port after {PORT_ATTEMPTS} attempts", tail(self.log))
        if self.name != "mariadb":
            return  # a replica: its primary's database and user come with replication
        if fresh:
            o = self.opts
            pw = (o.password or "").replace("\\", "\\\\").replace("'", "\\'")
            r = self.client(f"CREATE DATABASE IF NOT EXISTS `{o.database}`; "
                            f"CREATE USER IF NOT EXISTS '{o.db_user}'@'%' IDENTIFIED BY '{pw}'; "
                            f"CREATE USER IF NOT EXISTS '{o.db_user}'@'localhost' IDENTIFIED BY '{pw}'; "
                            f"GRANT ALL ON `{o.database}`.* TO '{o.db_user}'@'%'; "
                            f"GRANT ALL ON `{o.database}`.* TO '{o.db_user}'@'localhost'; FLUSH PRIVILEGES")
            if r.returncode != 0:
                raise Failure("creating the test's database and user failed", r.stdout + r.stderr)
        wait_for("mariadbd (a query as the test's user over TCP)",
                 lambda: self.client("SELECT 1", user=self.opts.db_user, tcp=True, timeout=5).returncode == 0,
                 deadline, lambda: None)

    def command(self, words: list[str], deadline: float) -> None:
        cmd = words[0]
        if len(words) > 1 and words[1] != self.name:
            raise Failure(f"no server named {words[1]!r} ({self.name})")
        if cmd == "kill":
            end(self.proc, signal.SIGKILL)
        elif cmd == "term":
            end(self.proc, signal.SIGTERM, grace_s=60)
        elif cmd == "start":
            if self.proc is not None and self.proc.poll() is None:
                raise Failure("mariadbd is running")
            self.start(deadline)
        elif cmd == "restart":
            end(self.proc, signal.SIGTERM, grace_s=60)
            self.start(deadline)
        elif cmd == "freeze":
            freeze(self.proc, deadline)
            self.frozen = True
        elif cmd == "thaw":
            signal_group(self.proc, signal.SIGCONT)
            self.frozen = False
        else:
            raise Failure(f"unknown command {cmd!r}")

    def stop(self) -> None:
        end(self.proc, signal.SIGTERM, grace_s=60)

    def describe(self) -> dict[str, Any]:
        o = self.opts
        auth = f"{o.db_user}:{o.password}" if o.password else o.db_user
        running = bool(self.proc and self.proc.poll() is None)
        return {"mariadb": {
            "pid": self.proc.pid if running else None, "running": running, "frozen": self.frozen,
            "port": self.port, "socket": str(self.socket), "host": "127.0.0.1",
            "user": o.db_user, "password": o.password, "database": o.database,
            "url": f"mysql://{auth}@127.0.0.1:{self.port}/{o.database}",
            "socket_url": f"mysql://{auth}@localhost/{o.database}?socket={self.socket}",
            "client": [which("mariadb"), "--no-defaults", "--protocol=socket", f"--socket={self.socket}", "--user=root",
                       o.database],
            "data_dir": str(self.data), "log": str(self.log), "port_attempts": self.port_attempts,
        }}


class MariaDBReplicated:
    """`mariadb --replica`: a primary (server-id 1, binary log) and an asynchronous replica
    (server-id 2, read-only) replicating from it by GTID from the first transaction, so that the
    test's database and user reach it too. Ready when the replica answers the test's user over
    TCP (replication has brought the user). `--mysql-config binlog-format=STATEMENT` (or ROW)
    applies to both. Commands name `mariadb` (the primary, the default) or `replica`;
    `promote` makes the replica a primary (replication stopped and forgotten, writable): kill
    the primary first for the failover of an asynchronous replica."""

    REPL_PW = "r3pl-pw"

    def __init__(self, opts: argparse.Namespace, dir: Path, sockdir: Path) -> None:
        common = ["--log-bin=mariadb-bin", "--log-slave-updates=1"]
        self.primary = MariaDB(opts, dir, sockdir, "mariadb", common + ["--server-id=1"])
        self.replica = MariaDB(opts, dir, sockdir, "replica", common + ["--server-id=2", "--read-only=1"])
        self.opts = opts
        self.promoted = False

    def start(self, deadline: float) -> None:
        self.primary.start(deadline)
        r = self.primary.client(f"CREATE USER IF NOT EXISTS 'repl'@'%' IDENTIFIED BY '{self.REPL_PW}'; "
                                "GRANT REPLICATION SLAVE ON *.* TO 'repl'@'%'")
        if r.returncode != 0:
            raise Failure("creating the replication user failed", r.stdout + r.stderr)
        self.replica.start(deadline)
        r = self.replica.client(f"CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={self.primary.port}, "
                                f"MASTER_USER='repl', MASTER_PASSWORD='{self.REPL_PW}', "
                                "MASTER_USE_GTID=slave_pos, MASTER_CONNECT_RETRY=1; START SLAVE")
        if r.returncode != 0:
            raise Failure("starting replication failed", r.stdout + r.stderr)
        wait_for("the replica (the test's user over TCP, come by replication)",
                 lambda: self.replica.client("SELECT 1", user=self.opts.db_user, tcp=True, timeout=5).returncode == 0,
                 deadline, lambda: None)

    def command(self, words: list[str], deadline: float) -> None:
        if words[0] == "promote":
            r = self.replica.client("STOP SLAVE; RESET SLAVE ALL; SET GLOBAL read_only = 0")
            if r.returncode != 0:
                raise Failure("promoting the replica failed", r.stdout + r.stderr)
            self.promoted = True
            return
        node = self.replica if words[1:2] == ["replica"] else self.primary
        node.command([words[0], node.name, *words[2:]], deadline)

    def stop(self) -> None:
        self.replica.stop()
        self.primary.stop()

    def describe(self) -> dict[str, Any]:
        d = self.primary.describe()
        d["mariadb"]["replica"] = dict(self.replica.describe()["mariadb"], promoted=self.promoted)
        return d


# --- PostgreSQL -----------------------------------------------------------------------------

def postgres_bin() -> Path:
    found = []
    for d in Path("/usr/lib/postgresql").glob("*/bin"):
        if (d / "initdb").exists():
            try:
                found.append((int(d.parent.name), d))
            except ValueError:
                pass
    if found:
        return max(found)[1]
    pg_config = shutil.which("pg_config")
    if pg_config:
        d = Path(subprocess.run([pg_config, "--bindir"], capture_output=True, text=True).stdout.strip())
        if (d / "initdb").exists():
            return d
    initdb = shutil.which("initdb")
    if initdb:
        return Path(initdb).parent
    raise Failure("PostgreSQL is not installed (apt postgresql; bash scripts/install-deps.sh installs it)")


def traversable_by(path: Path, uid: int, gid: int) -> bool:
    for p in [path, *path.parents]:
        st = p.stat()
        if st.st_uid == uid:
            ok = st.st_mode & stat.S_IXUSR
        elif st.st_gid == gid:
            ok = st.st_mode & stat.S_IXGRP
        else:
            ok = st.st_mode & stat.S_IXOTH
        if not ok:
            return False
    return True


class Postgres:
    """A PostgreSQL cluster made by initdb in the server's directory, run as the `postgres`
    user when we are root (PostgreSQL refuses to run as root), listening on a unix socket in
    its own directory (and on 127.0.0.1 with --tcp)."""

    def __init__(self, opts: argparse.Namespace, dir: Path, sockdir: Path, extra_dirs: list[Path]) -> None:
        self.opts = opts
        self.bin = postgres_bin()
        self.user_os: Optional[str] = None
        base = dir
        if os.geteuid() == 0:
            import pwd
            try:
                pw = pwd.getpwnam(opts.os_user)
            except KeyError:
                raise Failure(f"no user {opts.os_user!r} to run PostgreSQL as (apt postgresql creates "
                              "`postgres`; bash scripts/install-deps.sh installs it)")
            self.user_os = opts.os_user
            # PostgreSQL's user must reach its files: our directory is opened to it, and when a
            # directory above it is closed (a test's 0700 temp dir) the data go to /tmp instead.
            dir.chmod(0o711)
            if not traversable_by(dir, pw.pw_uid, pw.pw_gid):
                base = new_dir("sf-pg-", Path("/tmp"), 0o711)
                extra_dirs.append(base)
                sockdir = base
            uid, gid = pw.pw_uid, pw.pw_gid
        else:
            uid, gid = os.geteuid(), os.getegid()
        self.home = base / "postgres"
        self.home.mkdir(mode=0o755)
        self.sockdir = sockdir / "pg"
        self.sockdir.mkdir(mode=0o755)
        for p in (self.home, self.sockdir):
            os.chown(p, uid, gid)
        self.data = self.home / "data"
        self.log = self.home / "postgres.log"
        self.port: Optional[int] = opts.port
        self.port_attempts = 0
        self.proc: Optional[subprocess.Popen] = None
        self.frozen = False
        # --standby: an asynchronous streaming standby, made by pg_basebackup from the primary.
        self.standby_data = self.home / "standby"
        self.standby_log = self.home / "standby.log"
        self.standby_port: Optional[int] = None
        self.standby_proc: Optional[subprocess.Popen] = None
        self.promoted = False

    def as_user(self, argv: list[str], **kw: Any) -> subprocess.CompletedProcess:
        if self.user_os:
            import pwd
            pw = pwd.getpwnam(self.user_os)
            kw.update(user=pw.pw_uid, group=pw.pw_gid, extra_groups=[])
        return run(argv, cwd=self.home, env=self.env(), **kw)

    def env(self) -> dict[str, str]:
        return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C", "LANG": "C", "TZ": "UTC"}

    def initdb(self) -> None:
        argv = [str(self.bin / "initdb"), "-D", str(self.data), "-U", self.opts.db_user, "-E", "UTF8",
                "--locale=C", "--no-sync", "--no-instructions"]
        if self.opts.password:
            pwfile = self.home / "pwfile"
            pwfile.write_text(self.opts.password + "\n")
            pwfile.chmod(0o644)
            argv += ["--auth=scram-sha-256", f"--pwfile={pwfile}"]
        else:
            argv += ["--auth=trust"]
        r = self.as_user(argv, timeout=300)
        if r.returncode != 0:
            raise Failure("initdb failed", (r.stdout + r.stderr)[-3000:])

    def start(self, deadline: float) -> None:
        if not self.data.exists():
            self.initdb()
        same_address = self.proc is not None
        for attempt in range(PORT_ATTEMPTS):
            if self.port is None:
                self.port = candidate_port(["127.0.0.1"] if self.opts.tcp else [])
            self.port_attempts += 1
            argv = [str(self.bin / "postgres"), "-D", str(self.data), "-p", str(self.port), "-k", str(self.sockdir),
                    "-c", f"listen_addresses={'127.0.0.1' if self.opts.tcp else ''}",
                    "-c", "unix_socket_permissions=0777", "-c", "fsync=off", "-c", "synchronous_commit=off",
                    "-c", "full_page_writes=off", "-c", "shared_buffers=32MB", "-c", "max_connections=60",
                    "-c", "logging_collector=off"]
            for c in self.opts.pg_config or []:
                argv += ["-c", c]
            offset = self.log.stat().st_size if self.log.exists() else 0
            self.proc = spawn(argv, self.log, self.home, user=self.user_os, env=self.env())
            self.frozen = False

            def alive() -> None:
                if self.proc is not None and self.proc.poll() is not None:
                    log = tail(self.log, offset=offset)
                    if "Address already in use" in log:
                        raise PortInUse()
                    raise Failure(f"postgres exited with status {self.proc.returncode} while starting", log)
            try:
                wait_for("postgres (pg_isready)", self.ready, deadline, alive)
                return
            except PortInUse:
                end(self.proc, signal.SIGKILL)
                if same_address:
                    if time.monotonic() > deadline or attempt >= 10:
                        raise Failure(f"postgres: port {self.port} was taken while the server was down")
                    time.sleep(0.5)
                else:
                    self.port = None
        raise Failure(f"postgres: no free port after {PORT_ATTEMPTS} attempts", tail(self.log))

    def start_standby(self, deadline: float) -> None:
        """An asynchronous standby of the primary (hot, streaming), on a port of its own."""
        if not self.standby_data.exists():
            r = self.as_user([str(self.bin / "pg_basebackup"), "-D", str(self.standby_data), "-R", "-X", "stream",
                              "-h", str(self.sockdir), "-p", str(self.port), "-U", self.opts.db_user], timeout=300)
            if r.returncode != 0:
                raise Failure("pg_basebackup failed", (r.stdout + r.stderr)[-3000:])
        for attempt in range(PORT_ATTEMPTS):
            if self.standby_port is None:
                self.standby_port = candidate_port(["127.0.0.1"] if self.opts.tcp else [])
            argv = [str(self.bin / "postgres"), "-D", str(self.standby_data), "-p", str(self.standby_port),
                    "-k", str(self.sockdir), "-c", f"listen_addresses={'127.0.0.1' if self.opts.tcp else ''}",
                    "-c", "unix_socket_permissions=0777", "-c", "fsync=off", "-c", "shared_buffers=32MB",
                    "-c", "max_connections=60", "-c", "logging_collector=off", "-c", "hot_standby=on"]
            # The primary's settings too (shared_preload_libraries: a promoted standby must
            # serve what the primary did).
            for c in self.opts.pg_config or []:
                argv += ["-c", c]
            offset = self.standby_log.stat().st_size if self.standby_log.exists() else 0
            self.standby_proc = spawn(argv, self.standby_log, self.home, user=self.user_os, env=self.env())

            def alive() -> None:
                if self.standby_proc is not None and self.standby_proc.poll() is not None:
                    log = tail(self.standby_log, offset=offset)
                    if "Address already in use" in log:
                        raise PortInUse()
                    raise Failure(f"the standby exited with status {self.standby_proc.returncode}", log)

            def streaming() -> bool:
                r = self.as_user([str(self.bin / "psql"), "-X", "-A", "-t", "-h", str(self.sockdir), "-p", str(self.port),
                                  "-U", self.opts.db_user, "-d", self.opts.database, "-c",
                                  "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'"], timeout=60)
                return r.returncode == 0 and r.stdout.strip() not in ("", "0")
            try:
                wait_for("the standby streaming", streaming, deadline, alive)
                return
            except PortInUse:
                end(self.standby_proc, signal.SIGKILL)
                self.standby_port = None
        raise Failure(f"standby: no free port after {PORT_ATTEMPTS} attempts", tail(self.standby_log))

    def ready(self) -> bool:
        hosts = [str(self.sockdir)] + (["127.0.0.1"] if self.opts.tcp else [])
        for h in hosts:
            r = run([str(self.bin / "pg_isready"), "-q", "-h", h, "-p", str(self.port), "-U", self.opts.db_user,
                     "-d", self.opts.database, "-t", "10"], timeout=60, env=self.env())
            if r.returncode != 0:
                return False
        return True

    def thaw_kids(self) -> None:
        for kid in getattr(self, "frozen_kids", []):
            try:
                os.kill(kid, signal.SIGCONT)
            except OSError:
                pass
        self.frozen_kids = []

    def command(self, words: list[str], deadline: float) -> None:
        cmd = words[0]
        if cmd == "promote":
            # The standby becomes a primary (a new timeline); the old primary is left as it is
            # (kill it first to make the failover of an asynchronous standby).
            if self.standby_proc is None:
                raise Failure("no standby: start postgres with --standby")
            r = self.as_user([str(self.bin / "pg_ctl"), "promote", "-w", "-t", "120", "-D", str(self.standby_data)],
                             timeout=180)
            if r.returncode != 0:
                raise Failure("pg_ctl promote failed", (r.stdout + r.stderr)[-3000:])
            self.promoted = True
            return
        if len(words) > 1 and words[1] == "standby" and cmd == "kill":
            end(self.standby_proc, signal.SIGKILL)
            return
        if len(words) > 1 and words[1] != "postgres":
            raise Failure(f"no server named {words[1]!r} (postgres, standby)")
        if cmd in ("kill", "term", "restart"):
            self.thaw_kids()
        if cmd == "kill":
            end(self.proc, signal.SIGKILL)
            # Its lock files name a pid that may be another process's by the next start.
            # (Its own: a standby's socket shares the directory.)
            for lock in [self.data / "postmaster.pid", *self.sockdir.glob(f".s.PGSQL.{self.port}*")]:
                lock.unlink(missing_ok=True)
        elif cmd == "term":
            end(self.proc, signal.SIGINT, grace_s=60)
        elif cmd == "start":
            if self.proc is not None and self.proc.poll() is None:
                raise Failure("postgres is running")
            self.start(deadline)
        elif cmd == "restart":
            end(self.proc, signal.SIGINT, grace_s=60)
            self.start(deadline)
        elif cmd == "freeze":
            # The backends (one per connection) are in sessions of their own: a stalled server
            # stops them too, or its open connections would go on answering.
            self.frozen_kids = children_of(self.proc.pid) if self.proc else []
            for kid in self.frozen_kids:
                try:
                    os.kill(kid, signal.SIGSTOP)
                except OSError:
                    pass
            freeze(self.proc, deadline)
            self.frozen = True
        elif cmd == "thaw":
            signal_group(self.proc, signal.SIGCONT)
            self.thaw_kids()
            self.frozen = False
        else:
            raise Failure(f"unknown command {cmd!r}")

    def stop(self) -> None:
        self.thaw_kids()
        # A fast shutdown (SIGINT) disconnects clients; SIGKILL would leave shared memory.
        end(self.proc, signal.SIGINT, grace_s=60)
        end(self.standby_proc, signal.SIGINT, grace_s=60)

    def describe(self) -> dict[str, Any]:
        o = self.opts
        auth = f"{o.db_user}:{o.password}" if o.password else o.db_user
        d = {
            "pid": self.proc.pid if self.proc and self.proc.poll() is None else None,
            "running": bool(self.proc and self.proc.poll() is None), "frozen": self.frozen,
            "port": self.port, "socket_dir": str(self.sockdir), "host": "127.0.0.1" if o.tcp else None,
            "user": o.db_user, "password": o.password, "database": o.database,
            "dsn": f"postgresql://{auth}@/{o.database}?host={self.sockdir}&port={self.port}",
            "tcp_dsn": f"postgresql://{auth}@127.0.0.1:{self.port}/{o.database}" if o.tcp else None,
            "data_dir": str(self.data), "log": str(self.log), "bin_dir": str(self.bin),
            "os_user": self.user_os, "port_attempts": self.port_attempts,
        }
        if self.standby_proc is not None:
            running = self.standby_proc.poll() is None
            d["standby"] = {
                "pid": self.standby_proc.pid if running else None, "running": running, "port": self.standby_port,
                "promoted": self.promoted, "data_dir": str(self.standby_data), "log": str(self.standby_log),
                "dsn": f"postgresql://{auth}@/{o.database}?host={self.sockdir}&port={self.standby_port}",
            }
        return {"postgres": d}


# --- PHP-FPM --------------------------------------------------------------------------------

def fcgi_get(socket_path: Path, script: str, query: str = "", timeout: float = 30) -> Optional[str]:
    """The body of one FastCGI GET through cgi-fcgi, or None without an answer."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "SCRIPT_NAME": script, "SCRIPT_FILENAME": script,
           "REQUEST_METHOD": "GET", "QUERY_STRING": query, "SERVER_PROTOCOL": "HTTP/1.1"}
    r = run([which("cgi-fcgi"), "-bind", "-connect", str(socket_path)], timeout=timeout, env=env)
    parts = r.stdout.split("\n\n", 1)  # universal newlines: the \r\n\r\n after the headers
    return parts[1] if r.returncode == 0 and len(parts) == 2 else None


class Fpm:
    """php-fpm with a static pool listening on a unix socket in its own directory; workers
    run as `nobody` when we are root (FPM refuses root workers)."""

    def __init__(self, opts: argparse.Namespace, dir: Path, sockdir: Path) -> None:
        self.opts = opts
        self.dir = dir / "fpm"
        self.dir.mkdir(mode=0o755)
        self.socket = sockdir / "fpm.sock"
        self.log = self.dir / "fpm.log"
        self.out = self.dir / "fpm.out"
        self.conf = self.dir / "fpm.conf"
        self.ini = Path(opts.ini) if opts.ini else self.dir / "php.ini"
        self.proc: Optional[subprocess.Popen] = None
        self.frozen = False
        self.worker_pids: list[int] = []
        if os.geteuid() == 0:
            self.user = opts.fpm_user or "nobody"
        else:
            self.user = None
        if opts.ini_line and opts.ini:
            raise Failure("give --ini or --ini-line, not both")
        if not opts.ini:
            self.ini.write_text("".join(l + "\n" for l in opts.ini_line or []))

    def config(self) -> str:
        o = self.opts
        lines = ["[global]", f"error_log = {self.log}", f"pid = {self.dir / 'fpm.pid'}", "daemonize = no",
                 "[www]"]
        if self.user:
            import grp
            import pwd
            group = grp.getgrgid(pwd.getpwnam(self.user).pw_gid).gr_name
            lines += [f"user = {self.user}", f"group = {group}"]
        lines += [f"listen = {self.socket}", "listen.mode = 0666", "listen.backlog = 511", "pm = static",
                  f"pm.max_children = {o.workers}", "pm.status_path = /fpm-status", "ping.path = /fpm-ping",
                  "catch_workers_output = yes", f"clear_env = {'yes' if o.clear_env else 'no'}"]
        env = list(o.env or [])
        if not any(kv.startswith("SNOWFLAKE_SHM_DIR=") for kv in env):
            # The workers' host states of libsnowflake (they run as nobody) in this server's
            # directory, never in /dev/shm where other tests' processes would meet them.
            shm = self.dir / "shm"
            shm.mkdir(exist_ok=True)
            shm.chmod(0o1777)
            env.append(f"SNOWFLAKE_SHM_DIR={shm}")
        for kv in env:
            k, v = kv.split("=", 1)
            lines.append(f'env[{k}] = "{v}"')  # unquoted, FPM turns yes/no/on/off into 1 and ""
        lines += o.pool_line or []
        return "\n".join(lines) + "\n"

    def start(self, deadline: float) -> None:
        fpm = which("php-fpm8.2", "php-fpm")
        which("cgi-fcgi")
        self.conf.write_text(self.config())
        if self.socket.exists():
            self.socket.unlink()
        offset = self.out.stat().st_size if self.out.exists() else 0
        self.proc = spawn([fpm, "-c", str(self.ini), "-y", str(self.conf), "-F", "-O"], self.out, self.dir)
        self.frozen = False

        def alive() -> None:
            if self.proc is not None and self.proc.poll() is not None:
                raise Failure(f"php-fpm exited with status {self.proc.returncode} while starting",
                              tail(self.out, offset=offset) + "\n" + tail(self.log))
        wait_for("php-fpm (status page)", self.ready, deadline, alive)

    def status(self) -> Optional[dict]:
        if not self.socket.exists():
            return None
        body = fcgi_get(self.socket, "/fpm-status", "json&full")
        try:
            return json.loads(body) if body else None
        except ValueError:
            return None

    def ready(self) -> bool:
        s = self.status()
        if s is None or s.get("total processes") != self.opts.workers:
            return False
        self.worker_pids = sorted(p["pid"] for p in s.get("processes", []))
        return len(self.worker_pids) == self.opts.workers

    def command(self, words: list[str], deadline: float) -> None:
        cmd = words[0]
        if len(words) > 1 and words[1] != "fpm":
            raise Failure(f"no server named {words[1]!r} (fpm)")
        if cmd == "kill":
            end(self.proc, signal.SIGKILL)
        elif cmd == "term":
            end(self.proc, signal.SIGTERM)
        elif cmd == "start":
            if self.proc is not None and self.proc.poll() is None:
                raise Failure("php-fpm is running")
            self.start(deadline)
        elif cmd == "restart":
            end(self.proc, signal.SIGTERM)
            self.start(deadline)
        elif cmd == "freeze":
            freeze(self.proc, deadline)
            self.frozen = True
        elif cmd == "thaw":
            signal_group(self.proc, signal.SIGCONT)
            self.frozen = False
        else:
            raise Failure(f"unknown command {cmd!r}")

    def stop(self) -> None:
        end(self.proc, signal.SIGTERM)

    def describe(self) -> dict[str, Any]:
        running = bool(self.proc and self.proc.poll() is None)
        return {"fpm": {
            "pid": self.proc.pid if running else None, "running": running, "frozen": self.frozen,
            "socket": str(self.socket), "workers": self.opts.workers,
            "worker_pids": self.worker_pids if running else [], "user": self.user,
            "status_path": "/fpm-status", "ping_path": "/fpm-ping", "log": str(self.log),
            "output": str(self.out), "ini": str(self.ini), "config": str(self.conf), "dir": str(self.dir),
        }}


class Certs:
    def __init__(self, opts: argparse.Namespace, dir: Path) -> None:
        self.tls = make_certs(dir / "tls")

    def start(self, deadline: float) -> None:
        pass

    def command(self, words: list[str], deadline: float) -> None:
        raise Failure(f"unknown command {words[0]!r}")

    def stop(self) -> None:
        pass

    def describe(self) -> dict[str, Any]:
        return {"tls": self.tls}


# --- the supervisor -------------------------------------------------------------------------

def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="serve.py", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("kind", choices=["redis", "sentinel", "redis-cluster", "postgres", "mariadb", "fpm", "certs"])
    p.add_argument("--dir", help="make the servers' directory in DIR (the test's own temporary "
                                 "directory); default $TMPDIR")
    p.add_argument("--timeout", type=float, default=180, help="seconds a start may take (default 180)")
    p.add_argument("--port", type=int, help="the TCP port to try first (another if it is taken)")
    g = p.add_argument_group("redis and sentinel")
    g.add_argument("--password", help="requirepass (and masterauth, sentinel auth-pass)")
    g.add_argument("--user", action="append", metavar="NAME:PASSWORD", help="an ACL user with every right")
    g.add_argument("--tls", action="store_true", help="TCP over TLS only (certificates made with openssl)")
    g.add_argument("--mtls", action="store_true", help="TLS, and clients must show a certificate")
    g.add_argument("--ipv6", action="store_true", help="listen on ::1 too")
    g.add_argument("--no-tcp", action="store_true", help="unix socket only")
    g.add_argument("--config", action="append", metavar="LINE", help="an extra redis.conf line")
    g.add_argument("--replicas", type=int, default=1)
    g.add_argument("--sentinels", type=int, default=3)
    g.add_argument("--quorum", type=int, default=2)
    g.add_argument("--master-name", default="mymaster")
    g.add_argument("--down-after-ms", type=int, default=5000,
                   help="sentinel down-after-milliseconds (default 5000: no false failover under load)")
    g.add_argument("--failover-timeout-ms", type=int, default=20000)
    g.add_argument("--sentinel-password", help="requirepass of the sentinels")
    g = p.add_argument_group("redis-cluster")
    g.add_argument("--primaries", type=int, default=3, help="primaries (default 3)")
    g.add_argument("--node-timeout-ms", type=int, default=5000,
                   help="cluster-node-timeout (default 5000: no false failover under load)")
    g = p.add_argument_group("postgres and mariadb")
    g.add_argument("--tcp", action="store_true", help="postgres: listen on 127.0.0.1 too")
    g.add_argument("--db-user", default="snowflake", help="postgres: the superuser initdb makes; mariadb: a user "
                                                          "with every right on --database (default snowflake)")
    g.add_argument("--database", default=None, help="default: postgres (postgres), snowflake (mariadb)")
    g.add_argument("--mysql-config", action="append", metavar="NAME=VALUE", help="a mariadbd --NAME=VALUE option")
    g.add_argument("--os-user", default="postgres", help="who runs PostgreSQL when we are root")
    g.add_argument("--pg-config", action="append", metavar="NAME=VALUE", help="a postgres -c setting (the standby's too)")
    g.add_argument("--replica", action="store_true", help="mariadb: an asynchronous replica too (commands: "
                   "promote, kill replica, freeze replica)")
    g.add_argument("--standby", action="store_true",
                   help="postgres: an asynchronous streaming standby too (commands: promote, kill standby)")
    g = p.add_argument_group("fpm")
    g.add_argument("--workers", type=int, default=2, help="static pool size (default 2)")
    g.add_argument("--ini", help="the php.ini to use")
    g.add_argument("--ini-line", action="append", metavar="LINE", help="a php.ini line (instead of --ini)")
    g.add_argument("--env", action="append", metavar="NAME=VALUE", help="env[NAME] of the pool")
    g.add_argument("--clear-env", action="store_true", help="clear_env = yes (default no)")
    g.add_argument("--pool-line", action="append", metavar="LINE", help="an extra pool configuration line")
    g.add_argument("--fpm-user", help="the workers' user when we are root (default nobody)")
    return p.parse_args(argv)


def emit(obj: dict[str, Any]) -> None:
    try:
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()
    except (BrokenPipeError, OSError):
        pass


def main(argv: list[str]) -> int:
    # Descriptors a client leaked to us (another supervisor's pipe, say) would keep its EOF
    # from ever arriving: hold none.
    os.closerange(3, os.sysconf("SC_OPEN_MAX") if os.sysconf("SC_OPEN_MAX") > 0 else 4096)
    if argv == ["--watchdog"]:
        return watchdog()
    opts = parse_args(argv)
    if opts.database is None:
        opts.database = "snowflake" if opts.kind == "mariadb" else "postgres"
    if opts.kind == "redis-cluster" and "--replicas" not in argv:
        opts.replicas = 0
    dir = new_dir(f"{opts.kind}-", Path(opts.dir) if opts.dir else None)
    extra_dirs: list[Path] = []
    sockdir = dir
    if len(str(dir)) > MAX_SOCKET_DIR:
        sockdir = new_dir("sf-", Path("/tmp"))
        extra_dirs.append(sockdir)

    def on_signal(signum: int, _frame: Any) -> None:
        raise SystemExit(128 + signum)
    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(s, on_signal)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)

    topology: Any = None
    status = 0
    error: Optional[Failure] = None
    try:
        deadline = time.monotonic() + opts.timeout
        if opts.kind in ("redis", "sentinel"):
            topology = RedisSet(opts, dir, sockdir)
        elif opts.kind == "redis-cluster":
            topology = RedisCluster(opts, dir, sockdir)
        elif opts.kind == "mariadb":
            topology = MariaDBReplicated(opts, dir, sockdir) if opts.replica else MariaDB(opts, dir, sockdir)
        elif opts.kind == "postgres":
            topology = Postgres(opts, dir, sockdir, extra_dirs)
        elif opts.kind == "fpm":
            topology = Fpm(opts, dir, sockdir)
        else:
            topology = Certs(opts, dir)
        topology.start(deadline)
        if opts.kind == "postgres" and opts.standby:
            topology.start_standby(deadline)

        def describe() -> dict[str, Any]:
            return {"ok": True, "kind": opts.kind, "dir": str(dir), "supervisor_pid": os.getpid(),
                    **topology.describe()}
        emit(describe())
        for line in sys.stdin:
            words = shlex.split(line)
            if not words:
                continue
            if words[0] == "stop":
                break
            try:
                if words[0] != "info":
                    topology.command(words, time.monotonic() + opts.timeout)
                emit(describe())
            except Failure as e:
                emit({"ok": False, "error": str(e), "log": e.log})
    except Failure as e:
        error = e  # answered once everything is cleaned up
        status = 1
    except SystemExit as e:
        status = int(e.code or 0)
    finally:
        # Nothing must interrupt the clean-up: a second signal waits for it.
        for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(s, signal.SIG_IGN)
        if topology is not None:
            topology.stop()
        for d in [dir, *extra_dirs]:
            shutil.rmtree(d, ignore_errors=True)
        WATCHDOG.done()
    if error is not None:
        emit({"ok": False, "error": str(error), "log": error.log})
    elif status == 0:
        emit({"ok": True, "stopped": True})
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
