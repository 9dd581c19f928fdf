"""Leases across languages in the fleet's engines (issue 30): PostgreSQL, MariaDB
(`lease=mysql://…`) and a Redis Cluster of 3 primaries with a replica each, started by
tests/servers. For each engine, holders in Python, Node and PHP processes (worker.py,
worker.mjs, worker.php) with the same option text:

1. each gets a distinct value, with its clock's skew from the store's in stats(). Two holders
   never issue under one value in the same millisecond (checked over every ID at the end);
   the values they open with are distinct unless a lease lapsed meanwhile (a store slow
   under load), which the check tells from the values their IDs carry;
2. a Python holder killed with SIGKILL; its value frees within the TTL and a Node newcomer
   takes it; the store loses its data (DELETE, FLUSHALL) and its server restarts, while they
   issue; the server stalls (SIGSTOP) past the TTL and comes back; on the cluster, a forced
   failover of the primary that serves the layout's slot. Across all of it, no ID is issued
   twice, in any language;
3. a host lease: a Python and a Node process with one `shared=` name share one value;
4. a Python and a Node process started under libfaketime 10 s ahead are refused with a lease
   error that names both clocks, the skew and max_clock_skew_ms.

Each engine is a test, its steps soft checks (tests/servers/checks.py): every one runs, and
the test fails at its end naming each that failed.

    .venv/bin/python -m pytest tests/fleet -q -p no:cacheprovider [-k postgres]

Builds nothing: run after bindings-python/run-tests.sh (the package in .venv), the Node addon
(bindings-node/run-tests.sh) and the release C library (tests/php/run.sh), as scripts/check.sh
does.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "servers"))
from servers import Servers  # noqa: E402

PY = str(ROOT / ".venv" / "bin" / "python")
HERE = ROOT / "tests" / "fleet"
FAKETIME = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"
OPTIONS = "lease_ttl_ms=3000;max_wait_ms=3000"
TTL_S = 3
LAYOUT_FINGERPRINT_KEY = None  # filled from the first worker's layout (see slot_key)
MINUTES = 240


def command(lang: str) -> list[str]:
    return {"py": [PY, str(HERE / "worker.py")], "node": ["node", str(HERE / "worker.mjs")],
            "php": ["php", str(HERE / "worker.php")]}[lang]


class Holder:
    def __init__(self, lang: str, url: str, options: str, dir: Path, name: str, env: dict | None = None) -> None:
        self.lang, self.dir, self.name = lang, dir, name
        self._read = self._lines = 0  # how far count() has read its file, and the lines in it
        e = dict(os.environ, **(env or {}))
        e.setdefault("SNOWFLAKE_LIB", str(ROOT / "target" / "release" / "libsnowflake.so"))
        # Opened again while the store did not answer a claim in time (a loaded machine, five
        # holders claiming at once): what the test asserts is what an open gives.
        deadline = time.monotonic() + MINUTES
        while True:
            self.proc = subprocess.Popen(command(lang) + [url, options, str(dir), name], stdout=subprocess.PIPE,
                                         stderr=subprocess.STDOUT, text=True, env=e)
            self.first = self.proc.stdout.readline().strip()
            if "did not answer in time" not in self.first or time.monotonic() > deadline:
                break
            print(f"     {lang} {name}: opening again: {self.first}", flush=True)
            self.proc.wait()
            time.sleep(0.2)

    def value(self) -> int:
        assert self.first.startswith("OPEN "), f"{self.lang} {self.name}: {self.first}"
        return int(self.first.split()[1])

    def skew(self) -> str:
        return self.first.split()[2]

    def ids(self) -> list[int]:
        p = self.dir / f"{self.name}.ids"
        if not p.exists():
            return []
        return [int(l) for l in p.read_text().splitlines() if l.strip().isdigit()]

    def current(self) -> int | None:
        """The value the holder's latest ID carries: its lease's value now, unless that lapsed
        since (a slow store) and moved to another."""
        p = self.dir / f"{self.name}.ids"
        if not p.exists():
            return None
        with p.open("rb") as f:
            f.seek(max(0, p.stat().st_size - 4096))
            lines = [l for l in f.read().split(b"\n")[1:] if l.strip().isdigit()]
        return value_of(int(lines[-1])) if lines else None

    def count(self) -> int:
        """How many IDs the holder has written: the whole lines of its file, read from where the
        last call stopped. (Reading the whole file at each wait made every step slower than the
        one before: a step slowed by load let the holders write millions of IDs, which the next
        waits then read again and again, while the holders wrote more.)"""
        p = self.dir / f"{self.name}.ids"
        if not p.exists():
            return 0
        with p.open("rb") as f:
            f.seek(self._read)
            new = f.read()
        whole = new.rfind(b"\n") + 1
        self._read += whole
        self._lines += new.count(b"\n", 0, whole)
        return self._lines

    def wait_ids(self, n: int, what: str) -> bool:
        """Waits until the holder has written `n` IDs in all."""
        deadline = time.monotonic() + MINUTES
        while self.count() < n:
            if time.monotonic() > deadline or self.proc.poll() is not None:
                print(f"     {self.lang} {self.name}: no {what} ({self.count()} IDs; exit {self.proc.poll()})")
                return False
            time.sleep(0.05)
        return True

    def finish(self) -> str:
        out, _ = self.proc.communicate(timeout=MINUTES)
        return out.strip()

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait()


# The layout's fields, low bits first: sequence:12, worker:3, then the time.
def value_of(id: int) -> int:
    return (id >> 12) & 7


def millisecond_of(id: int) -> int:
    return id >> 15


def shared_values(files: list[Path]) -> tuple[bool, str]:
    """No two holders issued under one value in the same millisecond: what distinct values
    mean once leases may lapse and move (a store too slow to renew one in time)."""
    seen: dict[tuple[int, int], str] = {}
    for f in files:
        for i in {(millisecond_of(int(l)), value_of(int(l))) for l in f.read_text().splitlines()
                  if l.strip().isdigit()}:
            if seen.setdefault(i, f.stem) != f.stem:
                return False, f"{seen[i]} and {f.stem} both issued under value {i[1]} at millisecond {i[0]}"
    return True, f"{len(seen)} (millisecond, value) pairs"


def overlaps(holders: list[Holder]) -> str:
    """Which holders issued under one value in overlapping spans of time, from the IDs they
    have written: "" when none did."""
    spans: dict[int, list[tuple[int, int, str]]] = {}
    for h in holders:
        by_value: dict[int, list[int]] = {}
        for i in h.ids():
            by_value.setdefault(value_of(i), []).append(millisecond_of(i))
        for v, ms in by_value.items():
            spans.setdefault(v, []).append((min(ms), max(ms), h.name))
    for v, s in spans.items():
        s.sort()
        for (_, end, a), (start, _, b) in zip(s, s[1:]):
            if start <= end:
                return f"{a} and {b} both issued under value {v} at once"
    return ""


def unique(ids: list[int]) -> tuple[bool, str]:
    seen: set[int] = set()
    for i in ids:
        if i in seen:
            return False, f"ID {i} was issued twice"
        seen.add(i)
    return True, f"{len(ids)} IDs"


def wipe(kind: str, s: Servers) -> None:
    if kind == "redis-cluster":
        s.command("flushall")
    elif kind == "postgres":
        pg = s.info["postgres"]
        subprocess.run([f"{pg['bin_dir']}/psql", "-X", "-q", "-h", pg["socket_dir"], "-p", str(pg["port"]), "-U",
                        "snowflake", "-d", "postgres", "-c", "DELETE FROM libsnowflake_leases"], check=True)
    else:
        subprocess.run(s.info["mariadb"]["client"] + ["-e", "DELETE FROM libsnowflake_leases"], check=True)


# The layout's hash tag, the key whose slot holds every lease key of the layout (the
# fingerprint is the layout's; core's `Layout::fingerprint`).
def slot_key() -> str:
    out = subprocess.run([PY, "-c", "import libsnowflake as sf; print('{%016x}' % sf.Layout("
                          "'time:41,worker:3,sequence:12;epoch=1288834974657').fingerprint)"],
                         capture_output=True, text=True, check=True)
    return out.stdout.strip()


@pytest.fixture(scope="module")
def work() -> Iterator[Path]:
    for need in (PY, FAKETIME):
        if not os.path.exists(need):
            pytest.fail(f"{need} is missing (scripts/install-deps.sh, bindings-python/run-tests.sh)")
    work = Path(tempfile.mkdtemp(prefix="snowflake-fleet-"))
    work.chmod(0o755)
    yield work
    shutil.rmtree(work, ignore_errors=True)


@pytest.mark.parametrize("kind", ["postgres", "mariadb", "redis-cluster"])
def test_engine(kind: str, work: Path, checks) -> None:  # noqa: ANN001 (checks: tests/servers/checks.py)
    def check(what: str, ok: bool, detail: str = "") -> None:
        checks(ok, what, detail)

    args = {"postgres": [], "mariadb": ["--password", "fl33t-pw"], "redis-cluster": ["--replicas", "1"]}[kind]
    with Servers(kind, *args, dir=work) as s:
        url = {"postgres": lambda: s.info["postgres"]["dsn"], "mariadb": lambda: s.info["mariadb"]["url"],
               "redis-cluster": lambda: s.info["cluster"]["url"]}[kind]()
        dir = Path(tempfile.mkdtemp(dir=work, prefix=f"{kind}-"))
        target = f"owner:{slot_key()}" if kind == "redis-cluster" else kind
        # 1. Python, Node and PHP holders: distinct values.
        holders = [Holder(lang, url, OPTIONS, dir, f"{lang}{i}") for i, lang in
                   enumerate(["py", "py", "node", "node", "php"])]
        firsts = [h.first for h in holders]
        check(f"{kind}: 5 holders in Python, Node and PHP open", all(f.startswith("OPEN ") for f in firsts),
              str(firsts))
        if not all(f.startswith("OPEN ") for f in firsts):
            return
        skews = [h.skew() for h in holders]
        check(f"{kind}: every front end's stats() report clock_skew_ms",
              all(x not in ("None", "null") and abs(int(x)) < 1000 for x in skews), str(skews))
        ok = all(h.wait_ids(2000, "IDs") for h in holders)
        # A holder whose lease lapsed while the others opened (the store slow under load)
        # claimed again, and its value went to another: holders share a value only one after
        # the other, never at once.
        at_once = overlaps(holders)
        check(f"{kind}: distinct values across languages", not at_once, f"opened with {firsts}; {at_once}")
        # 2. Faults while they issue.
        victim = holders.pop(0)
        victim_value = victim.current()
        victim.kill()
        # Its value stays held until the TTL (3 s) lapses unrenewed; values 5 to 7 are free all
        # along, so a newcomer before then takes 5. After it, the lowest free value is the
        # victim's, unless a lease of the others lapsed meanwhile and moved: the newcomer
        # takes the lowest value none of them issues under.
        time.sleep(TTL_S + 1.5)
        newcomer = Holder("node", url, OPTIONS, dir, "node-newcomer")
        others = {h.current() for h in holders if h.wait_ids(h.count() + 1, "IDs beside the newcomer")}
        lowest = min(set(range(8)) - others)
        check(f"{kind}: after SIGKILL and the TTL, a Node newcomer takes the Python holder's value",
              newcomer.first.startswith("OPEN ") and newcomer.value() == lowest
              and (lowest == victim_value or victim_value in others),
              f"{newcomer.first}, the killed held {victim_value}, the others issue under {sorted(others)}")
        holders.append(newcomer)
        ok = all(h.wait_ids(h.count() + 1000, "IDs after the kill") for h in holders) and ok
        wipe(kind, s)
        ok = all(h.wait_ids(h.count() + 1000, "IDs after the data loss") for h in holders) and ok
        s.command("restart", target) if kind == "redis-cluster" else s.command("restart")
        if kind == "redis-cluster":
            s.command("await-ok")
        ok = all(h.wait_ids(h.count() + 1000, "IDs after the restart") for h in holders) and ok
        s.command("freeze", target)
        time.sleep(TTL_S + 1)  # past the TTL
        s.command("thaw", target)
        ok = all(h.wait_ids(h.count() + 1000, "IDs after the stall") for h in holders) and ok
        if kind == "redis-cluster":
            s.command("failover", slot_key())
            ok = all(h.wait_ids(h.count() + 1000, "IDs after the failover") for h in holders) and ok
        check(f"{kind}: holders issue again after SIGKILL, data loss, restart, stall"
              + (", failover" if kind == "redis-cluster" else ""), ok)
        (dir / "stop").touch()
        dones = [h.finish() for h in holders]
        check(f"{kind}: every holder ends cleanly", all("DONE" in d for d in dones), str(dones))
        all_ids = [i for f in dir.glob("*.ids") for i in
                   (int(l) for l in f.read_text().splitlines() if l.strip().isdigit())]
        good, detail = unique(all_ids)
        check(f"{kind}: no ID issued twice across Python, Node and PHP ({detail})", good, detail)
        good, detail = shared_values(sorted(dir.glob("*.ids")))
        check(f"{kind}: no two holders issued under one value in one millisecond ({detail})", good, detail)
        # 3. A host lease across languages.
        host_dir = Path(tempfile.mkdtemp(dir=work, prefix="host-"))
        (host_dir / "shm").mkdir(mode=0o700)
        env = {"SNOWFLAKE_SHM_DIR": str(host_dir / "shm")}
        shared = f"{OPTIONS};shared=fleet"
        host = [Holder(lang, url, shared, host_dir, f"host-{lang}", env) for lang in ("py", "node")]
        check(f"{kind}: a host lease: Python and Node share one value",
              all(h.first.startswith("OPEN ") for h in host) and len({h.value() for h in host}) == 1,
              str([h.first for h in host]))
        ok = all(h.wait_ids(2000, "host IDs") for h in host)
        (host_dir / "stop").touch()
        for h in host:
            h.finish()
        good, detail = unique([i for h in host for i in h.ids()])
        check(f"{kind}: the host lease repeats nothing ({detail})", good and ok, detail)
        # 4. A clock 10 s ahead.
        ahead = {"LD_PRELOAD": FAKETIME, "FAKETIME": "+10s", "FAKETIME_DONT_FAKE_MONOTONIC": "1"}
        for lang in ("py", "node"):
            h = Holder(lang, url, OPTIONS, dir, f"ahead-{lang}", ahead)
            line = h.first
            h.finish()
            check(f"{kind}: {lang} 10 s ahead is refused, naming both clocks, the skew and the option",
                  line.startswith("OPENERR ERR_SNOWFLAKE_LEASE") and "this host's clock reads" in line
                  and "ms ahead of" in line and "max_clock_skew_ms=1000" in line and "fl33t-pw" not in line,
                  line)

