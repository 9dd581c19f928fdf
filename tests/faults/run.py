#!/usr/bin/env python3
"""Leases under the faults that production has (issue 38): a nemesis, a workload and a checker.

Each store set-up (Redis with RDB snapshots, with AOF everysec, with no persistence; Redis with a
replica under Sentinel; a Redis Cluster with a replica per primary; PostgreSQL with an
asynchronous streaming standby; MariaDB with an asynchronous replica) is started by
tests/servers/serve.py and gets hosts of its own; the set-ups run at once. A host is a network
namespace with a veth pair to this one (its traffic to 127.0.0.1 is sent through it to the
stores, so every address the stores announce works from it, and cutting it is a real
partition), its own SNOWFLAKE_SHM_DIR, and its own clock through libfaketime
(FAKETIME_TIMESTAMP_FILE, read at every call). Holders in Python, Node, PHP and C (holder.py,
holder.mjs, holder.php, holder.c through the release libsnowflake.so: the same option text)
issue IDs on every host while the nemesis applies each fault in turn and waits for the state it
leads to:

  partition    a host cut from the stores past the TTL while newcomers on the others take its value
  pause        a holder stopped (SIGSTOP) for twice the TTL while a newcomer takes its value
  store-pause  the store stopped past the TTL
  crash        kill -9 of the store and a start from what it persisted (the snapshot, the AOF, nothing)
  data-loss    FLUSHALL / DELETE FROM the table while holders issue, and a newcomer claims at once
  clock-step   one host's clock stepped +5 s then -5 s, a newcomer opened on it each time
  skew         two hosts 0.9 s either side of the store's clock (within max_clock_skew_ms), then a
               data loss and a claim from the host behind; then the other way round
  failover     kill -9 of the primary right after a claim, and the replica promoted (Sentinel's
               failover, pg_ctl promote, MariaDB's replica made primary; the Cluster's forced
               failover of the slot's primary)
  churn        3 holders to 20 and back to 3

The checker reads every ID of every holder: per set-up and fault, `<set-up> <fault>: 0 repeats`;
every refusal is the library's typed error (a `ERR_SNOWFLAKE_*` code; anything else ends a holder
with a traceback and fails the run), listed by fault; per fault, how long each host could not
issue (availability) and how far ahead of the clock IDs were (the cost of safety), both measured
by polling the holders' files (figures, not asserts).

    run.py [--seed S] [--rounds N] [--shuffle] [--setups a,b] [--faults a,b] [--parallel N] [--langs a,b]

--rounds N runs the faults N times, in an order drawn from the seed after the first round
(--shuffle: the first too; the soak of scripts/faults.sh). A failover ends each round: after
PostgreSQL's and MariaDB's the promoted server serves alone. Builds nothing but the C holder: it
needs the package in .venv, the Node addon and the release library (bindings-python/run-tests.sh,
bindings-node, tests/php/run.sh), as scripts/check.sh's earlier steps leave them. Ends with
`N passed, M failed`. Needs root (ip netns, nft).
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable, Optional

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "servers"))
from servers import Servers, redis_call  # noqa: E402

HERE = ROOT / "tests" / "faults"
PY = str(ROOT / ".venv" / "bin" / "python")
FAKETIME = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"
TTL_MS = 3000
OPTIONS = f"lease_ttl_ms={TTL_MS};max_wait_ms=1000;max_drift_ms=1000"
EPOCH_MS = 1288834974657
LOW_BITS = 2 + 12  # worker:2, sequence:12 (holder.py's LAYOUT)
VALUES = 4
LANGS = ["py", "node", "php", "c"]
LIB = ROOT / "target" / "release" / "libsnowflake.so"
C_HOLDER: Optional[Path] = None  # compiled by main()
# A state that must come takes minutes at most: a bound on a hang, not a measure.
DEADLINE_S = 180

lock = threading.Lock()
passed = failed = 0


def check(what: str, ok: bool, detail: str = "") -> bool:
    global passed, failed
    with lock:
        if ok:
            passed += 1
            print(f"ok   {what}", flush=True)
        else:
            failed += 1
            print(f"FAIL {what}\n     {detail}", flush=True)
    return ok


def say(text: str) -> None:
    with lock:
        print(text, flush=True)


def sh(*argv: str, input: Optional[str] = None, check_rc: bool = True) -> subprocess.CompletedProcess:
    r = subprocess.run(argv, input=input, capture_output=True, text=True)
    if check_rc and r.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: {r.stderr.strip()}")
    return r


def wait_for(what: str, cond: Callable[[], bool], deadline_s: float = DEADLINE_S) -> None:
    end = time.monotonic() + deadline_s
    while not cond():
        if time.monotonic() > end:
            raise TimeoutError(f"no {what} within {deadline_s} s")
        time.sleep(0.05)


def id_ms(i: int) -> int:
    return (i >> LOW_BITS) + EPOCH_MS


# --- hosts ----------------------------------------------------------------------------------

class Host:
    """A network namespace with a veth pair to this one, a SNOWFLAKE_SHM_DIR and a clock."""

    def __init__(self, tag: str, index: int, subnet: str, work: Path) -> None:
        self.name = f"host{index}"
        # tag: this run's pid and the set-up's index; an interface's name has 15 bytes at most.
        self.ns = f"sf{tag}-{index}"
        self.outer, self.inner = f"sf{tag}o{index}", f"sf{tag}i{index}"
        self.subnet = subnet  # a.b.c: .1 is our end, .2 the host's
        self.dir = work / self.name
        self.shm = self.dir / "shm"
        self.shm.mkdir(parents=True)
        self.shm.chmod(0o1777)
        self.clock = self.dir / "clock"
        self.set_clock(0)
        self.cut = False

    def up(self) -> None:
        o, i, n, s = self.outer, self.inner, self.ns, self.subnet
        sh("ip", "netns", "add", n)
        sh("ip", "link", "add", o, "type", "veth", "peer", "name", i)
        sh("ip", "link", "set", i, "netns", n)
        sh("ip", "addr", "add", f"{s}.1/30", "dev", o)
        sh("ip", "link", "set", o, "up")
        # Our end delivers the host's packets to the stores' 127.0.0.1 (DNAT), as coming from
        # 127.0.0.1 (SNAT: a server that trusts only its loopback trusts them).
        sh("sysctl", "-qw", f"net.ipv4.conf.{o}.route_localnet=1")
        sh("nft", "-f", "-", input=f"""table ip {o} {{
  chain pre {{ type nat hook prerouting priority -100; iifname "{o}" ip daddr {s}.1 dnat to 127.0.0.1; }}
  chain inp {{ type nat hook input priority 100; iifname "{o}" snat to 127.0.0.1; }}
}}""")
        x = ["ip", "netns", "exec", n]
        sh(*x, "ip", "link", "set", "lo", "up")
        # Packets the host sends to its 127.0.0.1 leave through the veth (DNAT below).
        sh(*x, "sysctl", "-qw", "net.ipv4.conf.all.route_localnet=1")
        sh(*x, "ip", "addr", "add", f"{s}.2/30", "dev", i)
        sh(*x, "ip", "link", "set", i, "up")
        sh(*x, "ip", "route", "add", "default", "via", f"{s}.1")
        # The host's own 127.0.0.1 has nothing: its TCP to it goes to the stores' side.
        sh(*x, "nft", "-f", "-", input=f"""table ip nat {{
  chain out {{ type nat hook output priority -100; ip daddr 127.0.0.1 meta l4proto tcp dnat to {s}.1; }}
  chain post {{ type nat hook postrouting priority 100; oifname "{i}" masquerade; }}
}}""")

    def down(self) -> None:
        sh("ip", "netns", "del", self.ns, check_rc=False)
        sh("ip", "link", "del", self.outer, check_rc=False)
        sh("nft", "delete", "table", "ip", self.outer, check_rc=False)

    def partition(self) -> None:
        """Every packet between the host and the stores dropped (no reset: a black hole)."""
        sh("ip", "netns", "exec", self.ns, "nft", "-f", "-", input="""table inet cut {
  chain o { type filter hook output priority 0; policy drop; oifname "lo" accept; }
  chain i { type filter hook input priority 0; policy drop; iifname "lo" accept; }
}""")
        self.cut = True

    def heal(self) -> None:
        sh("ip", "netns", "exec", self.ns, "nft", "delete", "table", "inet", "cut")
        self.cut = False

    def set_clock(self, offset_s: float) -> None:
        tmp = self.clock.with_suffix(".new")
        tmp.write_text(f"{offset_s:+.3f}\n")
        tmp.replace(self.clock)
        self.offset_s = offset_s

    def env(self) -> dict[str, str]:
        return {"SNOWFLAKE_SHM_DIR": str(self.shm), "LD_PRELOAD": FAKETIME,
                "FAKETIME_TIMESTAMP_FILE": str(self.clock), "FAKETIME_NO_CACHE": "1",
                "FAKETIME_DONT_FAKE_MONOTONIC": "1", "NO_FAKE_STAT": "1"}


def sweep_stale() -> None:
    """Namespaces and tables left by a run that was SIGKILLed (its pid is gone)."""
    r = sh("ip", "netns", "list", check_rc=False)
    for line in r.stdout.splitlines():
        m = re.match(r"sf(\d+)s\d-\d$", line.split()[0] if line.split() else "")
        if m and not Path(f"/proc/{m.group(1)}").exists():
            sh("ip", "netns", "del", m.group(0), check_rc=False)
    r = sh("nft", "list", "tables", check_rc=False)
    for line in r.stdout.splitlines():
        m = re.match(r"table ip (sf(\d+)s\do\d)$", line.strip())
        if m and not Path(f"/proc/{m.group(2)}").exists():
            sh("nft", "delete", "table", "ip", m.group(1), check_rc=False)
            sh("ip", "link", "del", m.group(1), check_rc=False)


# --- holders --------------------------------------------------------------------------------

class Holder:
    def __init__(self, setup: "Setup", host: Host, lang: str, name: str) -> None:
        self.setup, self.host, self.lang, self.name = setup, host, lang, name
        self.ids_path = setup.dir / f"{name}.ids"
        self.ids_path.touch()
        self.lines: list[tuple[str, str]] = []  # (phase, line)
        self.read_at = 0
        self.count = 0
        self.marks: list[tuple[int, str]] = [(0, setup.phase)]
        cmd = {"py": [PY, str(HERE / "holder.py")], "node": ["node", str(HERE / "holder.mjs")],
               "php": ["php", str(HERE / "holder.php")], "c": [str(C_HOLDER)]}[lang]
        env = dict(os.environ, SNOWFLAKE_LIB=str(LIB), **host.env())
        # SIGKILL when the thread that started it ends (setpriv's PR_SET_PDEATHSIG: a run killed
        # in any way leaves no holder issuing into a removed directory). Not a preexec_fn: a
        # child forked while another thread held the import lock hung in it, and the Popen
        # that waited for its exec with it (the soak's round 1 stopped for 17 minutes).
        self.proc = subprocess.Popen(["ip", "netns", "exec", host.ns, "setpriv", "--pdeathsig", "KILL", *cmd,
                                      f"@{setup.url_file}", OPTIONS, str(setup.dir), name],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append((self.setup.phase, line.rstrip("\n")))

    def opened(self) -> int:
        return sum(1 for _, l in self.lines if l.startswith("OPEN "))

    def opened_now(self) -> bool:
        """Whether it claimed (opened, or healed a lapsed lease) in the fault under way."""
        phase = self.setup.phase
        return any(p == phase and l.startswith("OPEN ") for p, l in self.lines)

    def refused(self, words: str = "") -> bool:
        """Whether it was refused (naming `words`) in the fault under way."""
        phase = self.setup.phase
        return any(p == phase and l.startswith("REFUSED ") and words in l for p, l in self.lines)

    def refused_for(self, cause: str) -> bool:
        """Whether it was refused in the fault under way for `cause` (a key of CAUSES)."""
        phase = self.setup.phase
        return any(p == phase and l.startswith("REFUSED ") and re.search(CAUSES[cause], l) for p, l in self.lines)

    def stop(self) -> None:
        (self.setup.dir / f"{self.name}.stop").touch()

    def finish(self) -> None:
        self.stop()
        try:
            self.proc.wait(timeout=DEADLINE_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


# --- stores ---------------------------------------------------------------------------------

SETUPS = {
    "redis-rdb": ("redis", ["--config", "save 1 1"]),
    "redis-aof": ("redis", ["--config", "appendonly yes", "--config", "appendfsync everysec"]),
    "redis-none": ("redis", []),
    "sentinel": ("sentinel", ["--replicas", "1", "--sentinels", "3"]),
    "postgres": ("postgres", ["--standby", "--tcp"]),
    "mariadb": ("mariadb", ["--replica", "--password", "f4ults-pw"]),
    "cluster": ("redis-cluster", ["--replicas", "1"]),
}
FAULTS = ["partition", "pause", "store-pause", "crash", "data-loss", "clock-step", "skew", "failover", "churn"]


class Setup:
    """One store set-up, its hosts, holders and measures."""

    def __init__(self, name: str, work: Path, tag: str, index: int, subnet_base: str) -> None:
        self.name = name
        self.kind, self.args = SETUPS[name]
        self.dir = work / name
        self.dir.mkdir(mode=0o755)
        self.url_file = self.dir / "url"
        self.phase = "start"
        self.phases: list[str] = ["start"]
        # One /30 per host, in a /24 of its own (distinct across the set-ups of a run).
        self.hosts = [Host(f"{tag}s{index}", h, f"{subnet_base}.{index * 8 + h}", self.dir) for h in range(3)]
        self.holders: list[Holder] = []
        self.base: list[Holder] = []  # one per host, in the host's order
        self.servers: Optional[Servers] = None
        self.failed_over = False
        # availability: phase -> host -> longest time without a new ID (s); ahead: phase -> ms
        self.gaps: dict[str, dict[str, float]] = {}
        self.ahead: dict[str, int] = {}
        self.last_grow: dict[str, float] = {}
        self.stopping = False
        self.newcomers = 0

    # The store's words.
    def url(self) -> str:
        i = self.servers.info
        if self.kind == "redis":
            return i["redis"]["url"]
        if self.kind == "sentinel":
            return f"redis+sentinel://{','.join(i['sentinel_addrs'])}/{i['master_name']}/0"
        if self.kind == "redis-cluster":
            return i["cluster"]["url"]
        if self.kind == "mariadb":
            return i["mariadb"]["replica"]["url"] if self.failed_over else i["mariadb"]["url"]
        pg = i["postgres"]
        port = pg["standby"]["port"] if self.failed_over else pg["port"]
        return f"postgresql://{pg['user']}@127.0.0.1:{port}/{pg['database']}"

    def publish_url(self) -> None:
        tmp = self.url_file.with_suffix(".new")
        tmp.write_text(self.url() + "\n")
        tmp.replace(self.url_file)

    def master(self) -> str:
        """The server that holds the leases (the cluster's: the primary of the layout's slot)."""
        if self.kind == "redis-cluster":
            return f"owner:{{{layout_fingerprint():016x}}}"
        return {"sentinel": "master", "mariadb": "mariadb", "postgres": "postgres"}.get(self.kind, "redis")

    def state(self) -> str:
        """The store's own view, for a failure's report: the leases and, in a SQL database, the
        sessions and transactions (a stuck claim shows there); empty when it cannot be read."""
        i = self.servers.info if self.servers else None
        try:
            if self.kind == "mariadb":
                m = i["mariadb"]["replica"] if self.failed_over else i["mariadb"]
                return sh(*m["client"], "--table", "-e",
                          "SELECT name, holder, expires_at - CAST(FLOOR(UNIX_TIMESTAMP(NOW(6)) * 1000) AS SIGNED) AS ttl_left,"
                          " mark FROM libsnowflake_leases ORDER BY name;"
                          " SELECT id, command, time, state, LEFT(info, 90) AS info FROM information_schema.processlist"
                          " WHERE user = 'snowflake' ORDER BY time DESC LIMIT 20;"
                          " SELECT trx_mysql_thread_id, trx_state, trx_started, trx_wait_started, trx_rows_locked,"
                          " LEFT(trx_query, 60) AS q FROM information_schema.innodb_trx ORDER BY trx_started LIMIT 20;",
                          check_rc=False).stdout.strip()
            if self.kind == "postgres":
                pg = i["postgres"]
                port = pg["standby"]["port"] if self.failed_over else pg["port"]
                return sh(f"{pg['bin_dir']}/psql", "-X", "-h", pg["socket_dir"], "-p", str(port), "-U", pg["user"],
                          "-d", pg["database"], "-c",
                          "SELECT name, holder, expires_at - (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS ttl_left,"
                          " mark FROM libsnowflake_leases ORDER BY name;"
                          " SELECT pid, state, now() - xact_start AS in_xact, wait_event, left(query, 80) AS query"
                          " FROM pg_stat_activity WHERE backend_type = 'client backend' ORDER BY xact_start LIMIT 20",
                          check_rc=False).stdout.strip()
        except Exception as e:  # noqa: BLE001 - a report's extra, never its cause
            return f"(the store's state could not be read: {e})"
        return ""

    def wipe(self) -> None:
        i = self.servers.info
        if self.kind in ("redis", "sentinel"):
            redis_call(i["redis"] if self.kind == "redis" else i["master"], "FLUSHALL")
        elif self.kind == "redis-cluster":
            self.servers.command("flushall")
        elif self.kind == "mariadb":
            m = i["mariadb"]["replica"] if self.failed_over else i["mariadb"]
            sh(*m["client"], "-e", "DELETE FROM libsnowflake_leases")
        else:
            pg = i["postgres"]
            port = pg["standby"]["port"] if self.failed_over else pg["port"]
            sh(f"{pg['bin_dir']}/psql", "-X", "-q", "-h", pg["socket_dir"], "-p", str(port), "-U", pg["user"],
               "-d", pg["database"], "-c", "DELETE FROM libsnowflake_leases")

    # Holders and states.
    def holder(self, host: Host, lang: Optional[str] = None) -> Holder:
        self.newcomers += 1
        h = Holder(self, host, lang or LANGS[self.newcomers % len(LANGS)], f"{host.name}-{self.newcomers}")
        self.holders.append(h)
        return h

    def live(self) -> list[Holder]:
        return [h for h in self.holders if h.proc.poll() is None and not (self.dir / f"{h.name}.stop").exists()]

    def issuing(self, holders: list[Holder], more: int = 200) -> None:
        """Waits until each of `holders` has issued `more` IDs after now."""
        start = {h.name: h.count for h in holders}
        wait_for(f"{self.name}: IDs from {', '.join(h.name for h in holders)}",
                 lambda: all(h.count >= start[h.name] + more or h.proc.poll() is not None for h in holders))
        dead = [h.name for h in holders if h.proc.poll() is not None]
        if dead:
            raise RuntimeError(f"{self.name}: holders ended: {dead}: {self.tail(dead)}")

    def tail(self, names: list[str]) -> str:
        return " | ".join(l for h in self.holders if h.name in names for _, l in h.lines[-4:])

    def begin(self, phase: str) -> None:
        self.phase = phase
        self.phases.append(phase)
        now = time.monotonic()
        self.gaps[phase] = {}
        for host in self.hosts:
            self.last_grow[host.name] = now
        for h in self.holders:
            h.marks.append((h.read_at, phase))

    def end_phase(self) -> None:
        now = time.monotonic()
        g = self.gaps.setdefault(self.phase, {})
        for host in self.hosts:
            g[host.name] = max(g.get(host.name, 0.0), now - self.last_grow.get(host.name, now))

    def poll(self) -> None:
        """Reads what each holder appended: counts, availability gaps, how far ahead."""
        while not self.stopping:
            now = time.monotonic()
            wall_ms = time.time() * 1000
            for h in list(self.holders):
                size = h.ids_path.stat().st_size
                if size <= h.read_at:
                    continue
                with open(h.ids_path, "rb") as f:
                    f.seek(h.read_at)
                    chunk = f.read(size - h.read_at)
                cut = chunk.rfind(b"\n") + 1
                if cut == 0:
                    continue
                chunk = chunk[:cut]
                h.read_at += cut
                h.count += chunk.count(b"\n")
                first = int(chunk[:chunk.find(b"\n")])
                ahead = int(id_ms(first) - wall_ms)
                self.ahead[self.phase] = max(self.ahead.get(self.phase, ahead), ahead)
                host = h.host.name
                g = self.gaps.setdefault(self.phase, {})
                g[host] = max(g.get(host, 0.0), now - self.last_grow.get(host, now))
                self.last_grow[host] = now
            time.sleep(0.05)


# --- the nemesis ----------------------------------------------------------------------------

def last_id(h: Holder, since: int = 0) -> Optional[int]:
    """`h`'s last ID, if one ends past byte `since` of its file (a line boundary)."""
    with open(h.ids_path, "rb") as f:
        end = f.seek(0, os.SEEK_END)
        start = max(since, end - 64)
        f.seek(start)
        tail = f.read()
    # A line cut by the start is not one (a start at `since` is a line's).
    lines = tail[:tail.rfind(b"\n") + 1].split()[1 if start > since else 0:]
    return int(lines[-1]) if lines else None


def value_of(i: int) -> int:
    return (i >> 12) & 3  # worker:2 above sequence:12 (LOW_BITS)


def holding(h: Holder) -> int:
    """The value `h` holds: its last ID's (a fault begins once every base holder has issued, so
    that ID is from the value it holds now, and it is read at once, where a claim's `OPEN` line
    is printed only after the batch it began); before any ID, its last line that names one: `OPEN N`, or a claim
    of N refused until the margin has passed (its lease holds N, though it has issued nothing
    from it yet)."""
    last = last_id(h)
    if last is not None:
        return value_of(last)
    value = -1
    for _, line in h.lines:
        m = re.match(r"OPEN (\d+)$", line) or re.search(r"`worker`=(\d+) was claimed again", line)
        if m:
            value = int(m.group(1))
    return value


def newcomers_until_taken(s: Setup, victim: Holder, hosts: list[Host]) -> list[Holder]:
    """Newcomers on `hosts`, and the wait until another holder issues from the victim's value
    in this fault (the premise of a repeat when the victim comes back): a newcomer, or a base
    holder that lost its own value to a newcomer (a renewal that timed out on a loaded store)
    and claimed again, finding the victim's free first. A soak round met that: both newcomers
    held the base holders' values, and a wait for a newcomer on the victim's ran out."""
    value = holding(victim)
    comers = [s.holder(h) for h in hosts]
    phase = s.phase
    # Where each holder's file stood when the fault began (0 for a newcomer).
    began = {h.name: next((at for at, p in reversed(h.marks) if p == phase), 0) for h in s.holders}

    def taken() -> bool:
        if value < 0:  # the victim held no value (refused when the fault began): any newcomer's open
            return any(l.startswith("OPEN ") for c in comers for _, l in c.lines)
        for h in s.holders:
            if h is victim:
                continue
            last = last_id(h, began.get(h.name, 0))
            if last is not None and value_of(last) == value:
                return True
        return False
    wait_for(f"{s.name}: another holder issuing from value {value}", taken)
    return comers


def fault(s: Setup, name: str) -> None:
    h0, h1, h2 = s.hosts
    b0, b1, b2 = s.base
    ttl = TTL_MS / 1000
    if s.kind == "sentinel":
        # The master the sentinels agree on now: they may have failed over on their own (a
        # crash or a pause near down-after-milliseconds on a loaded machine), and a wipe or a
        # kill aimed at the old one would hit a replica (READONLY).
        s.servers.command("await-master")
    if name == "partition":
        h0.partition()
        comers = newcomers_until_taken(s, b0, [h1, h2])
        s.issuing(comers, 100)
        # The cut lasts until the cut host's holder has said so (a call of its that is under way
        # when the cut heals ends with another cause, such as its value taken: a soak round met
        # that once, the cut healed 4.4 s in while a call waited on three sentinels).
        wait_for(f"{s.name}: the cut holder refused as cut off", lambda: b0.refused_for("unreachable"))
        h0.heal()
        for c in comers:
            c.stop()
        s.issuing([b0, b1, b2])
    elif name == "pause":
        stopped_at = time.monotonic()
        b1.proc.send_signal(signal.SIGSTOP)
        comers = newcomers_until_taken(s, b1, [h0, h2])
        s.issuing(comers, 100)
        # The fault: stopped for twice the TTL at least.
        time.sleep(max(0.0, stopped_at + 2 * ttl - time.monotonic()))
        b1.proc.send_signal(signal.SIGCONT)
        # Its lease lapsed while it was stopped: it says so by a refusal, or by a claim inside
        # the generator (`OPEN`, printed at each new claim) when a value was free at once. A
        # CI run met the second: the resumed holder claimed value 1 and never refused.
        wait_for(f"{s.name}: the paused holder refused or claimed again", lambda: b1.refused() or b1.opened_now())
        for c in comers:
            c.stop()
        s.issuing([b0, b1, b2])
    elif name == "store-pause":
        s.servers.command("freeze", s.master())
        time.sleep(ttl * 1.5)  # the fault: the store stopped past the TTL
        s.servers.command("thaw", s.master())
        s.issuing([b0, b1, b2])
    elif name == "crash":
        if s.kind == "redis-cluster":
            s.servers.command("restart", s.master(), "keep")
            s.servers.command("await-ok")
        else:
            s.servers.command("kill", s.master())
            s.servers.command("start", s.master(), *(["keep"] if s.kind in ("redis", "sentinel") else []))
        comer = s.holder(h1)
        wait_for(f"{s.name}: a newcomer's open", lambda: comer.opened() or comer.refused())
        s.issuing([b0, b1, b2])
        comer.stop()
    elif name == "data-loss":
        s.wipe()
        comer = s.holder(h2)
        wait_for(f"{s.name}: a newcomer's open", lambda: comer.opened() or comer.refused())
        s.issuing([b0, b1, b2])
        comer.stop()
    elif name == "clock-step":
        for step in (5.0, -5.0):
            h2.set_clock(step)
            comer = s.holder(h2)
            # Its answer: refused for its clock (a refusal for a slow store is retried), or an
            # open that the checker fails (EXPECT).
            wait_for(f"{s.name}: a newcomer on a host {step:+.0f} s",
                     lambda: comer.opened() or comer.refused("this host's clock reads"))
            comer.stop()
            h2.set_clock(0)
        s.issuing([b0, b1, b2])
    elif name == "skew":
        for ahead, behind in ((h0, h1), (h1, h0)):
            ahead.set_clock(0.9)
            behind.set_clock(-0.9)
            # New processes on both (a running one keeps its own clock's anchor).
            olds = [b for b in s.base if b.host in (ahead, behind)]
            for b in olds:
                b.stop()
            s.base = [s.holder(h) if h in (ahead, behind) else b for h, b in zip(s.hosts, s.base)]
            s.issuing(s.base)
            s.wipe()
            comer = s.holder(behind)
            wait_for(f"{s.name}: a newcomer behind", lambda: comer.opened() or comer.refused())
            s.issuing(s.base)
            comer.stop()
        for h in (h0, h1):
            h.set_clock(0)
        # New processes at the right clock again: the faults after this one start level.
        for b in s.base[:2]:
            b.stop()
        s.base = [s.holder(h) for h in s.hosts[:2]] + s.base[2:]
        s.issuing(s.base)
    elif name == "failover":
        if s.kind == "redis":
            return
        comer = s.holder(h1)
        wait_for(f"{s.name}: a newcomer's claim", lambda: comer.opened() > 0)
        if s.kind == "sentinel":
            old = s.servers.info["master"]["name"]
            s.servers.command("kill", "master")
            s.servers.command("await-master", "new")
            # The old master back, empty, as the new one's replica: the next round's failover
            # has a replica to promote.
            s.servers.command("start", old)
        elif s.kind == "redis-cluster":
            s.servers.command("failover", f"{{{layout_fingerprint():016x}}}")
        elif s.kind == "mariadb":
            s.servers.command("kill")
            s.servers.command("promote")
            s.failed_over = True
            s.publish_url()
        else:
            s.servers.command("kill")
            s.servers.command("promote")
            s.failed_over = True
            s.publish_url()
        comer.stop()
        s.issuing(s.base)
    elif name == "churn":
        comers = [s.holder(s.hosts[i % 3]) for i in range(17)]
        wait_for(f"{s.name}: 20 holders opened or refused for want of a value",
                 lambda: all(c.opened() or c.refused("are leased") for c in comers))
        for c in comers:
            c.stop()
        s.issuing(s.base)
    else:
        raise ValueError(name)


def applicable(s: Setup, name: str) -> bool:
    if name == "failover":
        return s.kind != "redis" and (not s.failed_over or s.kind == "redis-cluster")
    if s.failed_over and name in ("store-pause", "crash"):
        return False  # the promoted standby is not the process serve.py's commands name
    return True


def layout_fingerprint() -> int:
    """The holders' layout's fingerprint (its hash tag holds every lease key in one slot)."""
    global FINGERPRINT
    if FINGERPRINT is None:
        out = sh(PY, "-c", "import libsnowflake as sf; print(sf.Layout('time:41,worker:2,sequence:12;"
                 "epoch=1288834974657').fingerprint)")
        FINGERPRINT = int(out.stdout)
    return FINGERPRINT


FINGERPRINT: Optional[int] = None


# --- the checker ----------------------------------------------------------------------------

# What a refusal may name: each is a fault the nemesis makes (a refusal naming none of them
# fails the run).
CAUSES = {
    "unreachable": r"did not answer in time|cannot reach|Connection refused|was closed|unexpected end|"
                   r"loading the dataset|starting up|not yet accepting connections|shutting down|recovery|"
                   r"terminating connection|no sentinel of .* named a reachable|MASTERDOWN|READONLY|read-only|"
                   r"ClusterDown|cluster is down|TRYAGAIN",
    "taken": r"values of `worker` are leased",
    "untrusted": r"without a high-water mark it can trust",
    "clock": r"this host's clock reads|the high-water mark stored for .* ahead of this host's clock",
    "lost": r"lost|no longer holds|was taken|expired|lease lapsed",
    "failover": r"a failover or a move|does not serve the lease's slot|which this lease was using: a failover",
}
# The refusal each fault must bring about somewhere (its cause, named).
EXPECT = {"partition": "unreachable", "store-pause": "unreachable", "clock-step": "clock", "churn": "taken"}

def run_setup(s: Setup, faults: list[str], rounds: int, rng: random.Random, shuffle: bool) -> None:
    t0 = time.monotonic()
    try:
        for h in s.hosts:
            h.up()
        s.servers = Servers(s.kind, *s.args, dir=s.dir)
        s.publish_url()
        threading.Thread(target=s.poll, daemon=True).start()
        s.base = [s.holder(h, LANGS[i % len(LANGS)]) for i, h in enumerate(s.hosts)]
        s.issuing(s.base)
        order = list(faults)
        for r in range(rounds):
            if r or shuffle:
                rng.shuffle(order)
            if "failover" in order:  # last in a round: after it the standby serves alone
                order.remove("failover")
                order.append("failover")
            for f in order:
                if not applicable(s, f):
                    continue
                s.begin(f)
                ft = time.monotonic()
                fault(s, f)
                s.end_phase()
                say(f"     {s.name} {f}: done in {time.monotonic() - ft:.1f} s")
        s.begin("end")
    except Exception as e:  # noqa: BLE001 - reported as a failure of the set-up
        check(f"{s.name}: the faults ran to their end", False, f"{type(e).__name__}: {e}\n     " + "\n     ".join(
            f"{h.name} ({h.lang}, {h.count} IDs, opened {[l[5:] for _, l in h.lines if l.startswith('OPEN ')]}): " + " | ".join(l[:160] for _, l in h.lines[-3:]) for h in s.holders))
        state = s.state()
        if state:
            say("     the store's state:\n     " + "\n     ".join(state.splitlines()))
    finally:
        for h in s.holders:
            h.stop()
        (s.dir / "stop").touch()
        for h in s.holders:
            h.finish()
        s.stopping = True
        if s.servers is not None:
            s.servers.stop()
        for h in s.hosts:
            h.down()
    verdict(s, time.monotonic() - t0)


def verdict(s: Setup, seconds: float) -> None:
    # Every ID, with the fault it was read in.
    where: dict[int, str] = {}
    repeats: dict[str, int] = {}
    total = 0
    example = ""
    for h in s.holders:
        data = h.ids_path.read_bytes()
        marks = h.marks + [(len(data), "end")]
        for (start, phase), (stop, _) in zip(marks, marks[1:]):
            for line in data[start:stop].split():
                i = int(line)
                total += 1
                if i in where:
                    p = phase if phase != "start" else where[i]
                    repeats[p] = repeats.get(p, 0) + 1
                    example = example or f"ID {i} ({id_ms(i)} ms) from {h.name} in {phase}, also in {where[i]}"
                else:
                    where[i] = phase
    seen = [p for p in dict.fromkeys(s.phases) if p not in ("start", "end")]
    for p in seen:
        n = repeats.get(p, 0)
        check(f"{s.name} {p}: {n} repeats", n == 0, example)
    other = sum(n for p, n in repeats.items() if p not in seen)
    check(f"{s.name}: {total} IDs from {len(s.holders)} holders, {other} repeats outside the faults", other == 0,
          example)
    # Refusals: typed, by fault.
    untyped = [f"{h.name}: {l}" for h in s.holders for _, l in h.lines
               if not re.match(r"(OPEN \d+|REFUSED ERR_SNOWFLAKE_[A-Z_]+ \S.*|DONE \d+ \d+)$", l)]
    check(f"{s.name}: every refusal is a typed error", not untyped, " | ".join(untyped[:6]))
    anon = [f"{h.name} ({h.lang}) in {p}: {l}" for h in s.holders for p, l in h.lines
            if l.startswith("REFUSED ") and not any(re.search(c, l) for c in CAUSES.values())]
    check(f"{s.name}: every refusal names its cause", not anon, " | ".join(anon[:4]))
    for p, cause in EXPECT.items():
        if p in s.phases:
            named = any(ph == p and l.startswith("REFUSED ") and re.search(CAUSES[cause], l)
                        for h in s.holders for ph, l in h.lines)
            check(f"{s.name} {p}: a refusal names it ({cause})", named)
    for p in seen:
        kinds: dict[str, int] = {}
        for h in s.holders:
            for ph, l in h.lines:
                if ph == p and l.startswith("REFUSED "):
                    words = re.sub(r"\d+", "N", l.split(" ", 2)[2])[:110]
                    key = f"{l.split()[1]} {words}"
                    kinds[key] = kinds.get(key, 0) + 1
        for k, n in sorted(kinds.items(), key=lambda kv: -kv[1])[:4]:
            say(f"     {s.name} {p}: refused {n}x: {k}")
    for p in seen:
        g = s.gaps.get(p, {})
        avail = ", ".join(f"{h} {g.get(h, 0):.1f} s" for h in sorted(g))
        say(f"     {s.name} {p}: longest without an ID: {avail}; IDs up to {s.ahead.get(p, 0)} ms ahead of the clock")
    say(f"     ({s.name}: {seconds:.0f} s)")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--rounds", type=int, default=1)
    p.add_argument("--shuffle", action="store_true", help="the first round's order drawn from the seed too")
    p.add_argument("--setups", default=",".join(SETUPS))
    p.add_argument("--faults", default=",".join(FAULTS))
    p.add_argument("--parallel", type=int, default=len(SETUPS))
    p.add_argument("--langs", default=",".join(LANGS), help="the holders' languages, in turn")
    o = p.parse_args()
    LANGS[:] = o.langs.split(",")
    seed = o.seed if o.seed is not None else random.SystemRandom().randrange(1 << 32)
    print(f"faults: seed {seed}", flush=True)
    if os.geteuid() != 0 or not shutil.which("nft") or not os.path.exists(FAKETIME) or not os.path.exists(PY):
        print("FAIL the fault suite needs root, nft (nftables), libfaketime and .venv's package "
              "(scripts/install-deps.sh, bindings-python/run-tests.sh)")
        print("0 passed, 1 failed")
        return 1
    sweep_stale()
    work = Path(tempfile.mkdtemp(prefix="snowflake-faults-"))
    work.chmod(0o755)
    if "c" in LANGS or "php" in LANGS:
        if not LIB.exists():
            print(f"FAIL {LIB} is missing (cargo build --release -p snowflake-ffi)\n0 passed, 1 failed")
            return 1
    if "c" in LANGS:
        global C_HOLDER
        C_HOLDER = work / "holder"
        # The library by its soname (libsnowflake.so.0.1), as an installed one is found.
        soname = re.search(r"SONAME\s+(\S+)", sh("objdump", "-p", str(LIB)).stdout).group(1)
        (work / soname).symlink_to(LIB)
        sh("cc", "-O1", "-Wall", "-Werror", "-I", str(ROOT / "include"), str(HERE / "holder.c"), "-o", str(C_HOLDER),
           "-L", str(LIB.parent), "-lsnowflake", f"-Wl,-rpath,{work}")
    tag = str(os.getpid())
    subnet = f"10.{200 + os.getpid() % 50}"
    names = o.setups.split(",")
    faults = o.faults.split(",")
    slots = threading.Semaphore(o.parallel)
    setups = [Setup(n, work, tag, i, subnet) for i, n in enumerate(names)]

    def one(s: Setup, i: int) -> None:
        with slots:
            run_setup(s, faults, o.rounds, random.Random(seed * 131 + i), o.shuffle)
    threads = [threading.Thread(target=one, args=(s, i)) for i, s in enumerate(setups)]
    t0 = time.monotonic()
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        for s in setups:
            for h in s.hosts:
                h.down()
        shutil.rmtree(work, ignore_errors=True)
    print(f"faults: seed {seed}, {time.monotonic() - t0:.0f} s")
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    sys.exit(main())
