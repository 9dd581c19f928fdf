"""Cross-language tests of the shared generator (issue 6, DESIGN §5): one state in shared
memory, used at once by processes of every binding, and by a real PHP-FPM.

1. 2 Python, 2 Node, 2 PHP and 2 C processes open one shared name (twitter, datacenter=3,
   worker=7), wait at a barrier, and each draw 200,000 IDs: no duplicate in the 1.6M, each
   process's IDs strictly increasing, every ID of the right node and of the run's time, and the
   8 drew at the same time (tests/cross/check_ids.py). A creator SIGKILLed at any instant of
   setting a state up leaves a file the next opener uses (tests/cross/draw.c killopen). The
   state is the host's record of the identity (libsnowflake-<16 hex digits>-<uid>.shm, readable
   by every user, written by its owner), the name is a label on it.
2. That name with another layout or node is simply another state: it opens, in each of the four
   languages, and issues its own node's IDs. Another max_drift_ms while a process uses the state
   is a SHARED_MISMATCH error that names it. Then the state still issues, above everything.
3. php8.2-fpm, 8 static workers preloading the package with the php.ini lines of docs/php.md,
   16 concurrent FastCGI clients (cgi-fcgi): 1,000 requests of 100 IDs each from
   ['shared' => name]; no duplicate, and IDs from all 8 worker PIDs. Then the fleet (issue 13):
   8 Python, 4 Node and 2 C processes started independently, and the 8 FPM workers behind 16
   concurrent FastCGI clients, all with PLAIN generators (no coordination option at all) of one
   identity, drawing at once: no repeated ID in the union, every ID of the right node, IDs from
   all 8 workers. When we are root the FPM workers run as nobody, and so do the fleet's other
   processes: a state is shared by the processes of one user.
4. A shared nextId() from PHP, in ns a call, in an FPM worker and in the CLI
   (tests/cross/bench_shared.php): printed as figures (issue 6's target is 500 ns), never judged
   here: speed is a benchmark's business, and a loaded machine is no failure.

Each scenario is a test whose many checks are soft ones (tests/servers/checks.py). PHP-FPM is
started by the server helpers every language's tests use (tests/servers): ready when its workers
answer, stopped and removed even if this process dies.

What it runs: the release C library (built here unless SNOWFLAKE_LIB names one), the Node addon
(bindings-node/scripts/build.js, which puts $SNOWFLAKE_ADDON in place when it is set, as
scripts/check.sh does), and the Python package of .venv (installed from bindings-python when it
does not import). Needs scripts/install-deps.sh's packages (php8.2-cli, php8.2-fpm, libfcgi-bin).

    .venv/bin/python -m pytest tests/cross -q -p no:cacheprovider
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "servers"))
from servers import Servers  # noqa: E402

PER_PROCESS = int(os.environ.get("CROSS_PER_PROCESS", "200000"))
FLEET_PER_PROCESS = int(os.environ.get("CROSS_FLEET_PER_PROCESS", "50000"))
FLEET_REQUESTS = 400
FPM_WORKERS = 8
FPM_CLIENTS = 16
FPM_REQUESTS = 1000
FPM_IDS_PER_REQUEST = 100
PHP_TARGET_NS = 500
EPOCH = 1288834974657
PY = str(ROOT / ".venv" / "bin" / "python")
IS_ROOT = os.geteuid() == 0


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def node_of(i: int) -> tuple[int, int]:
    """twitter's datacenter and worker, decoded here independently of the library."""
    return (i >> 17) & 31, (i >> 12) & 31


def unix_ms(i: int) -> int:
    return (i >> 22) + EPOCH


class Work:
    """The run's directory (readable by the FPM workers, user nobody when we are root), the
    built programs, and the processes started, all killed at the end."""

    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="snowflake-cross."))
        self.dir.chmod(0o755)
        self.children: list[subprocess.Popen] = []
        self.lib = Path(os.environ.get("SNOWFLAKE_LIB") or ROOT / "target" / "release" / "libsnowflake.so")
        self.draw_c = self.dir / "draw"

    def spawn(self, argv: list[str], log: Path, **kw) -> subprocess.Popen:  # noqa: ANN003
        with open(log, "wb") as out:
            p = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                 cwd=ROOT, **kw)
        self.children.append(p)
        return p

    def draw_cmd(self, lang: str) -> list[str]:
        return {
            "py": [PY, "tests/cross/draw.py"],
            "node": ["node", "tests/cross/draw.mjs"],
            "php": ["php", "tests/cross/draw.php"],
            "c": [str(self.draw_c)],
        }[lang]

    def close(self) -> None:
        for p in self.children:
            if p.poll() is None:
                p.kill()
            p.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def run(argv: list[str], **kw) -> subprocess.CompletedProcess:  # noqa: ANN003
    return subprocess.run(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          stdin=subprocess.DEVNULL, **kw)


@pytest.fixture(scope="module")
def work() -> Iterator[Work]:
    """Builds what the suite runs (each a no-op when scripts/check.sh's build step built it)."""
    w = Work()
    try:
        if "SNOWFLAKE_LIB" not in os.environ:
            r = run(["cargo", "build", "--release", "-p", "snowflake-ffi"])
            assert r.returncode == 0, f"cargo build --release -p snowflake-ffi:\n{r.stdout[-4000:]}"
        os.environ["SNOWFLAKE_LIB"] = str(w.lib)
        r = run(["node", "bindings-node/scripts/build.js"])
        assert r.returncode == 0, f"the Node addon (node bindings-node/scripts/build.js):\n{r.stdout[-4000:]}"
        if run([PY, "-c", "import libsnowflake"]).returncode != 0:
            r = run([str(ROOT / ".venv" / "bin" / "pip"), "install", "-q", "./bindings-python"])
            assert r.returncode == 0, f"the Python package in .venv:\n{r.stdout[-4000:]}"
        # The library's soname, which cargo does not make: a link by that name (libsnowflake.so.0.1
        # for 0.1.x) in a directory of the program's rpath.
        soname = re.search(r"Library soname: \[(.*?)\]", run(["readelf", "-d", str(w.lib)]).stdout)
        (w.dir / "lib").mkdir()
        (w.dir / "lib" / (soname.group(1) if soname else "libsnowflake.so")).symlink_to(w.lib)
        r = run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O2", "-Iinclude",
                 "tests/cross/draw.c", "-o", str(w.draw_c), f"-L{w.lib.parent}", "-lsnowflake",
                 f"-Wl,-rpath,{w.dir / 'lib'}"])
        assert r.returncode == 0, f"draw.c against include/ and {w.lib.parent} (-Werror -pedantic):\n{r.stdout}"
        yield w
    finally:
        w.close()


def wait_barrier(sync: Path, count: int, procs: list[subprocess.Popen]) -> int:
    """Waits (up to two minutes) until `count` drawing processes touched ready.* in `sync`, or
    until fewer than `count` of them are still alive; returns how many are ready."""
    deadline = time.monotonic() + 120
    while True:
        ready = len(list(sync.glob("ready.*")))
        if ready >= count or time.monotonic() > deadline:
            return ready
        if sum(p.poll() is None for p in procs) < count:
            return len(list(sync.glob("ready.*")))
        time.sleep(0.1)


def wait_all(procs: dict[str, subprocess.Popen], logs: Path) -> list[str]:
    """Waits for every process; returns a line and its log's end for each that failed."""
    bad = []
    for tag, p in procs.items():
        if p.wait() != 0:
            log = (logs / f"{tag}.log").read_text(errors="replace").splitlines()[-20:]
            bad.append(f"{tag} exited {p.returncode}:\n" + "\n".join(log))
    return bad


def check_ids(checks, count: int, t0: int, t1: int, files: list[Path], prefix: str = "") -> None:  # noqa: ANN001
    """tests/cross/check_ids.py's lines as soft checks (its figures printed)."""
    r = run([sys.executable, "tests/cross/check_ids.py", str(count), str(t0), str(t1), *map(str, files)])
    seen = False
    for line in r.stdout.splitlines():
        if line.startswith("ok   "):
            checks(True, prefix + line[5:])
            seen = True
        elif line.startswith("FAIL "):
            checks(False, prefix + line[5:])
            seen = True
        else:
            print(f"     {line}")
    checks(r.returncode == 0 or not seen, f"{prefix}check_ids.py exited {r.returncode}", r.stdout)


def one_state(d: Path, owner: str) -> tuple[bool, str]:
    """The directory holds one record, named by the identity and its owner's uid, 0644 (every
    user reads it to meet it; only its owner writes it), the owner's."""
    import pwd

    files = sorted(d.glob("libsnowflake-*.shm"))
    listing = "\n".join(f"{oct(f.stat().st_mode & 0o777)} {pwd.getpwuid(f.stat().st_uid).pw_name} {f.name}"
                        for f in sorted(d.iterdir()))
    uid = pwd.getpwnam(owner).pw_uid
    ok = (len(files) == 1 and re.fullmatch(rf"libsnowflake-[0-9a-f]{{16}}-{uid}\.shm", files[0].name) is not None
          and files[0].stat().st_mode & 0o777 == 0o644 and files[0].stat().st_uid == uid)
    return ok, listing


def me() -> str:
    import pwd

    return pwd.getpwuid(os.geteuid()).pw_name


def test_one_name_across_four_languages(work: Work, checks) -> None:  # noqa: ANN001
    """Sections 1 and 2: eight processes of four languages on one shared name; a creator killed
    while setting a state up; the name with another layout, node or policy."""
    shm = work.dir / "shm"
    shm.mkdir(mode=0o700)
    env = dict(os.environ, SNOWFLAKE_SHM_DIR=str(shm))
    name = f"cross-{os.getpid()}"
    sync, ids = work.dir / "sync", work.dir / "ids"
    sync.mkdir()
    ids.mkdir()

    # --- 1. eight processes, one shared name, at a barrier ---
    t0 = now_ms()
    procs = {}
    for lang in ("py", "node", "php", "c"):
        for n in (1, 2):
            tag = f"{lang}-{n}"
            procs[tag] = work.spawn(work.draw_cmd(lang) + ["draw", name, str(PER_PROCESS), str(ids / f"{tag}.ids"),
                                                            str(sync)], ids / f"{tag}.log", env=env)
    ready = wait_barrier(sync, 8, list(procs.values()))
    checks(ready >= 8, f"8 processes (2 Python, 2 Node, 2 PHP, 2 C) opened shared={name} and reached the barrier",
           f"only {ready} of 8 reached it")
    go = now_ms()
    (sync / "go").touch()
    bad = wait_all(procs, ids)
    done = now_ms()
    checks(not bad, f"the 8 processes drew {PER_PROCESS} IDs each and exited 0 ({done - go} ms from go to the last exit)",
           "\n".join(bad))
    check_ids(checks, PER_PROCESS, t0, now_ms(), sorted(ids.glob("*.ids")))
    print(f"     wall clock: {8 * PER_PROCESS} IDs in {done - go} ms from go to the last exit (writing the files included)")
    ok, listing = one_state(shm, me())
    checks(ok, f"one record in {shm}, named by the identity and the user (libsnowflake-<16 hex digits>-<uid>.shm), mode 644",
           listing)

    # A process killed at any instant leaves the state consistent (issue 6): 500 fresh names,
    # each set up by a child SIGKILLed 0-400 us after its fork (before, while or after it creates
    # and sets up the file); the next opener must work and issue above the child's IDs. The run
    # must have caught children inside the set-up for the test to mean anything.
    shm_kill = work.dir / "shm-kill"
    shm_kill.mkdir(mode=0o700)
    r = run([str(work.draw_c), "killopen", f"kill-{os.getpid()}", "500"],
            env=dict(os.environ, SNOWFLAKE_SHM_DIR=str(shm_kill)))
    caught = re.search(r"while setting it up [1-9][0-9]*,", r.stdout)
    if checks(r.returncode == 0 and caught,
              "C: 500 shared states whose creator was SIGKILLed at a random instant open and issue above it",
              f"exit {r.returncode}{'' if caught else ', and no kill fell inside the set-up'}:\n{r.stdout}"):
        print("\n".join(f"     {line}" for line in r.stdout.splitlines()))

    # --- 2. another layout, node or policy under the same name ---
    # The name is a label on an identity's state: with another layout or node it is another
    # state, which opens and issues that node's IDs. A term that all the processes of a state
    # must share (max_drift_ms) may differ only when no process uses the state: a holder keeps
    # it in use.
    ids2, sync2 = work.dir / "ids2", work.dir / "sync2"
    ids2.mkdir()
    sync2.mkdir()
    holder = work.spawn(work.draw_cmd("c") + ["draw", name, "10000", str(ids2 / "holder.ids"), str(sync2)],
                        work.dir / "holder.log", env=env)
    checks(wait_barrier(sync2, 1, [holder]) == 1, f"a C process holds shared={name} open",
           (work.dir / "holder.log").read_text(errors="replace"))
    mismatch = re.compile(r"^policy ERR_SNOWFLAKE_SHARED_MISMATCH .*max_drift_ms: process [0-9]+ of user .* uses "
                          r".*/libsnowflake-[0-9a-f]{16}-[0-9]+\.shm.*max_drift_ms=0, not 5", re.M)
    for lang in ("py", "node", "php", "c"):
        r = run(work.draw_cmd(lang) + ["mismatch", name], env=env)
        layout = re.search(r"^layout OPENED ([0-9]+)$", r.stdout, re.M)
        node = re.search(r"^node OPENED ([0-9]+)$", r.stdout, re.M)
        # discord (time:42, worker:5, process:5, sequence:12), worker=3, process=7; twitter,
        # datacenter=3, worker=8
        checks(r.returncode == 0 and layout and node_of(int(layout.group(1))) == (3, 7)
               and node and node_of(int(node.group(1))) == (3, 8) and mismatch.search(r.stdout),
               f"{lang}: shared={name} with another layout / node opens another state; another max_drift_ms "
               "while in use is ERR_SNOWFLAKE_SHARED_MISMATCH naming it", r.stdout)
    (sync2 / "go").touch()
    checks(holder.wait() == 0, "the holder drew 10k IDs after the refused open",
           (work.dir / "holder.log").read_text(errors="replace"))

    # The refused opens changed nothing: one more process of each language, opening the name
    # again in turn, issues above everything the eight issued.
    out = []
    for lang in ("py", "node", "php", "c"):
        r = run(work.draw_cmd(lang) + ["draw", name, "10000", str(ids2 / f"{lang}.ids"), str(sync)], env=env)
        out.append(f"{lang}: exit {r.returncode}\n{r.stdout}")
    before = max(int(line) for f in ids.glob("*.ids") for line in f.read_text().split())
    after = [[int(line) for line in f.read_text().split()] for f in sorted(ids2.glob("*.ids"))]
    flat = [i for got in after for i in got]
    checks(len(after) == 5 and all(len(got) == 10000 for got in after)
           and all(got == sorted(set(got)) for got in after) and flat and min(flat) > before
           and len(set(flat)) == len(flat),
           "after the refused opens, the holder and one more process of each language draw 10k IDs each above all 1.6M",
           f"{[len(got) for got in after]} IDs; lowest {min(flat, default=None)}, the eight's highest {before}; "
           f"{len(flat) - len(set(flat))} repeats\n" + "\n".join(out))


class Fpm:
    """php-fpm8.2 (tests/servers), its php.ini from docs/php.md, and FastCGI clients (cgi-fcgi)."""

    def __init__(self, work: Work) -> None:
        self.work = work
        self.dir = work.dir / "fpm"
        self.dir.mkdir(mode=0o755)
        self.shm = self.dir / "shm"
        self.user = "nobody" if IS_ROOT else me()
        self.servers: Servers | None = None

    def setup(self) -> tuple[bool, str]:
        """php.ini: the ```ini block of docs/php.md, with this checkout's paths (as tests/php's
        preload test does), plus the header ffi.preload loads."""
        r = run(["php", "ffi-c/php/bin/snowflake-preload-header"])
        if r.returncode != 0:
            return False, r.stdout
        header = self.dir / "snowflake.h"
        header.write_text(r.stdout)
        header.chmod(0o644)
        m = re.search(r"^```ini\n(.*?)^```$", (ROOT / "docs" / "php.md").read_text(), re.S | re.M)
        if not m:
            return False, "docs/php.md has no ```ini block"
        ini = (m.group(1).replace("/etc/php/8.2/snowflake.h", str(header))
               .replace("/var/www/vendor/libsnowflake/snowflake/preload.php", str(ROOT / "ffi-c/php/preload.php"))
               .replace("opcache.preload_user = www-data", f"opcache.preload_user = {self.user if IS_ROOT else 'www-data'}"))
        self.ini = self.dir / "php.ini"
        self.ini.write_text(ini)
        lines = ini.splitlines()
        if f"ffi.preload = {header}" not in lines or f"opcache.preload = {ROOT}/ffi-c/php/preload.php" not in lines:
            return False, ini
        # The workers' shared states: a directory of their own (as root they run as nobody, and a
        # shared state must belong to the user opening it).
        self.shm.mkdir(mode=0o700)
        if IS_ROOT:
            shutil.chown(self.shm, "nobody", "nogroup")
        return True, ""

    def start(self) -> tuple[bool, str]:
        if not shutil.which("cgi-fcgi"):
            return False, "cgi-fcgi is not installed (apt libfcgi-bin; scripts/install-deps.sh)"
        self.servers = Servers("fpm", "--ini", str(self.ini), "--workers", str(FPM_WORKERS), "--clear-env",
                               "--env", f"SNOWFLAKE_SHM_DIR={self.shm}", dir=self.dir)
        info = self.servers.info["fpm"]
        self.pid, self.socket = int(info["pid"]), info["socket"]
        self.logs = [Path(info["log"]), Path(info["output"])]
        return True, ""

    def clients(self, requests: int, name: str, out: Path) -> list[subprocess.Popen]:
        """FPM_CLIENTS clients at once, each sending its share of `requests` one after the other,
        alternating one nextId() a call and a batch."""
        procs = []
        for k in range(FPM_CLIENTS):
            r = requests // FPM_CLIENTS + (1 if k < requests % FPM_CLIENTS else 0)
            script = (f'for ((i = 0; i < {r}; i++)); do how=one; [ $((({k} + i) % 2)) = 1 ] && how=batch; '
                      f'QUERY_STRING="name={name}&n={FPM_IDS_PER_REQUEST}&how=$how" '
                      f'cgi-fcgi -bind -connect "$SOCK" || echo "CLIENT-ERROR cgi-fcgi exited $?"; done')
            env = dict(os.environ, SOCK=self.socket, SCRIPT_FILENAME=str(ROOT / "tests/cross/fpm_ids.php"),
                       REQUEST_METHOD="GET", SERVER_PROTOCOL="HTTP/1.1")
            procs.append(self.work.spawn(["bash", "-c", script], out / f"client-{k}.out", env=env))
        return procs

    def bench(self, name: str) -> list[str]:
        env = dict(os.environ, SCRIPT_FILENAME=str(ROOT / "tests/cross/fpm_ids.php"), REQUEST_METHOD="GET",
                   SERVER_PROTOCOL="HTTP/1.1", QUERY_STRING=f"name={name}&n=600000&how=bench")
        r = run(["cgi-fcgi", "-bind", "-connect", self.socket], env=env)
        line = next((ln for ln in r.stdout.splitlines() if ln.startswith("BENCH ")), "")
        return line.split()

    def stop(self) -> None:
        if self.servers is not None:
            self.servers.stop()
            self.servers = None


def answers_of(out: Path) -> tuple[list[list[str]], list[str]]:
    lines = "\n".join(f.read_text(errors="replace") for f in sorted(out.glob("client-*.out"))).splitlines()
    answers = [line.split() for line in lines if line.startswith("IDS ")]
    other = [line for line in lines if line.strip()
             and not line.startswith(("IDS ", "X-Powered-By:", "Content-type:", "Content-Type:"))]
    return answers, other


def gone(pid: int) -> bool:
    """Exited (a zombie is gone too)."""
    r = subprocess.run(["ps", "-o", "stat=", "-p", str(pid)], stdout=subprocess.PIPE, text=True)
    return not r.stdout.strip() or r.stdout.strip().startswith("Z")


def test_php_fpm_and_the_fleet(work: Work, checks) -> None:  # noqa: ANN001
    """Section 3: PHP-FPM's workers on one shared name; then the fleet of plain generators."""
    fpm = Fpm(work)
    try:
        ok, detail = fpm.setup()
        if not checks(ok, f"PHP-FPM set-up: php.ini from docs/php.md (ffi.preload + opcache.preload), "
                          f"{FPM_WORKERS} static workers", detail):
            return
        ok, detail = fpm.start()
        if not checks(ok, f"php-fpm8.2 started with {FPM_WORKERS} workers, answering its status page", detail):
            return
        fpm_checks(work, fpm, checks)
        fleet_checks(work, fpm, checks)
        bad = [line for log in fpm.logs if log.exists() for line in log.read_text(errors="replace").splitlines()
               if re.search(r"WARNING|ERROR|Fatal|exited on signal", line)]
        checks(not bad, "FPM: no warning, error or worker crash in its log", "\n".join(bad))

        # shared nextId() inside a worker (preloaded, opcache on, no JIT): the setting issue 6's
        # 500 ns target is about. A figure; the check is that the bench ran in a preloaded worker.
        words = fpm.bench(f"fpm-{os.getpid()}-bench")
        ran = len(words) >= 5 and words[2] == "preload"
        checks(ran, "FPM: the shared nextId() bench ran in a preloaded worker", " ".join(words))
        if ran:
            print(f"     figure: FPM worker, shared nextId(): {words[3]} ns a call (median of 300 rounds of 2,000 "
                  f"calls; best {words[4]}); issue 6's target <= {PHP_TARGET_NS}")

        # SIGTERM to the master: it and every worker gone (a minute: a loaded machine).
        kids = [int(p) for p in run(["ps", "-o", "pid=", "--ppid", str(fpm.pid)]).stdout.split()]
        os.kill(fpm.pid, signal.SIGTERM)
        deadline = time.monotonic() + 60
        while not all(gone(p) for p in [fpm.pid, *kids]) and time.monotonic() < deadline:
            time.sleep(0.1)
        left = [p for p in [fpm.pid, *kids] if not gone(p)]
        checks(not left, f"FPM: SIGTERM stops the master and its {FPM_WORKERS} workers", f"still running after 60 s: {left}")
    finally:
        fpm.stop()


def fpm_checks(work: Work, fpm: Fpm, checks) -> None:  # noqa: ANN001
    """8 workers, 16 concurrent FastCGI clients, 1,000 requests of 100 IDs on one shared name."""
    t0 = now_ms()
    clients = fpm.clients(FPM_REQUESTS, f"fpm-{os.getpid()}", fpm.dir)
    for p in clients:
        p.wait()
    ms = max(1, now_ms() - t0)
    answers, other = answers_of(fpm.dir)
    checks(not other, "FPM: no error response", f"{len(other)}, e.g. {other[:1]!r}")
    checks(len(answers) == FPM_REQUESTS, f"FPM: {len(answers)} answers to {FPM_REQUESTS} requests")
    modes = {a[2] for a in answers}
    checks(modes == {"preload"}, f"FPM: every worker used the preloaded FFI scope (Library::mode() {sorted(modes)})")
    ids: list[int] = []
    pids: dict[str, list[list[int]]] = {}
    bad_order = bad_count = 0
    for a in answers:
        got = [int(x) for x in a[3:]]
        bad_count += len(got) != FPM_IDS_PER_REQUEST
        bad_order += any(y <= x for x, y in zip(got, got[1:]))
        pids.setdefault(a[1], []).append(got)
        ids.extend(got)
    checks(bad_count == 0, f"FPM: every answer holds {FPM_IDS_PER_REQUEST} IDs")
    checks(bad_order == 0, f"FPM: each answer's IDs strictly increasing ({bad_order} are not)")
    checks(len(ids) == FPM_REQUESTS * FPM_IDS_PER_REQUEST, f"FPM: {len(ids)} IDs in all")
    checks(len(set(ids)) == len(ids), f"FPM: no duplicate among {len(ids)} IDs ({len(ids) - len(set(ids))} repeats)")
    wrong = [i for i in ids if node_of(i) != (3, 7) or not t0 <= unix_ms(i) <= t0 + ms + 1000]
    checks(not wrong, "FPM: every ID decodes to datacenter=3, worker=7 and the run's time", f"not {wrong[:3]}")
    checks(len(pids) >= FPM_WORKERS, f"FPM: IDs from {len(pids)} distinct worker PIDs (at least {FPM_WORKERS})")
    # Interleaving: answers of different workers whose ID ranges overlap (issued at once).
    spans = sorted((g[0], g[-1], p) for p, gs in pids.items() for g in gs if g)
    overlaps = sum(1 for (_, a1, ap), (b0, _, bp) in zip(spans, spans[1:]) if b0 < a1 and ap != bp)
    print(f"     figures: {len(ids)} IDs in {ms} ms over FastCGI: {1000 * len(ids) / ms:.0f} IDs/s, "
          f"{1000 * FPM_REQUESTS / ms:.0f} requests/s; answers per worker {sorted(len(g) for g in pids.values())}; "
          f"{overlaps} answers overlap in ID range with one of another worker")
    ok, listing = one_state(fpm.shm, fpm.user)
    checks(ok, f"FPM: one record in {fpm.shm}, named by the identity, the workers' own, mode 644", listing)


def fleet_checks(work: Work, fpm: Fpm, checks) -> None:  # noqa: ANN001
    """The fleet: plain generators (no coordination option), every kind of process at once. 8
    Python, 4 Node and 2 C processes, each started on its own (not forked), and the 8 FPM
    workers behind 16 FastCGI clients, one identity (twitter, datacenter=3, worker=7). They share
    the FPM workers' directory and user (nobody, when we are root): a state is shared by the
    processes of one user."""
    fleet = work.dir / "fleet"
    sync, ids, out = fleet / "sync", fleet / "ids", fleet / "fpm"
    for d in (fleet, sync, ids, out):
        d.mkdir(mode=0o755)
    as_user: list[str] = []
    py = [PY]
    if IS_ROOT:
        shutil.chown(sync, "nobody", "nogroup")
        shutil.chown(ids, "nobody", "nogroup")
        as_user = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"]
        # The .venv's interpreter may live where nobody cannot go (pyenv's, in root's home): then
        # the system's python3 with the .venv's packages on its path (the wheel is abi3).
        if subprocess.run(as_user + ["env", PY, "-c", "import libsnowflake"], cwd="/", stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode != 0:
            purelib = run([PY, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip()
            py = ["env", f"PYTHONPATH={purelib}", "/usr/bin/python3"]
    t0 = now_ms()
    procs = {}
    for lang, count in (("py", 8), ("node", 4), ("c", 2)):
        for n in range(1, count + 1):
            tag = f"{lang}-{n}"
            cmd = py + ["tests/cross/draw.py"] if lang == "py" else work.draw_cmd(lang)
            procs[tag] = work.spawn(as_user + ["env", f"SNOWFLAKE_SHM_DIR={fpm.shm}", f"HOME={fleet}", *cmd, "draw", "-",
                                               str(FLEET_PER_PROCESS), str(ids / f"{tag}.ids"), str(sync)],
                                    fleet / f"{tag}.log")
    ready = wait_barrier(sync, 14, list(procs.values()))
    checks(ready >= 14, "the fleet: 8 Python, 4 Node and 2 C processes opened plain generators (no option) and "
                        "reached the barrier", f"only {ready} of 14")
    # Go: the 14 draw, and the FPM clients send their requests.
    (sync / "go").touch()
    go = now_ms()
    clients = fpm.clients(FLEET_REQUESTS, "-", out)
    bad = wait_all(procs, fleet)
    for p in clients:
        p.wait()
    t1 = now_ms()
    checks(not bad, f"the fleet: the 14 processes drew {FLEET_PER_PROCESS} IDs each and exited 0", "\n".join(bad))
    check_ids(checks, FLEET_PER_PROCESS, t0, t1, sorted(ids.glob("*.ids")), prefix="the fleet: ")
    answers, other = answers_of(out)
    checks(not other, "the fleet's FPM: no error response", f"{len(other)}, e.g. {other[:1]!r}")
    checks(len(answers) == FLEET_REQUESTS and all(len(a) == 3 + FPM_IDS_PER_REQUEST for a in answers),
           f"the fleet's FPM: {len(answers)} answers of {FPM_IDS_PER_REQUEST} IDs to {FLEET_REQUESTS} requests")
    from_fpm = [int(x) for a in answers for x in a[3:]]
    pids = {a[1] for a in answers}
    checks(len(pids) >= FPM_WORKERS, f"the fleet's FPM: IDs from {len(pids)} distinct worker PIDs (at least {FPM_WORKERS})")
    wrong = [i for i in from_fpm if node_of(i) != (3, 7) or not t0 <= unix_ms(i) <= t1]
    checks(not wrong, "the fleet's FPM: every ID decodes to datacenter=3, worker=7 and the run's time", f"not {wrong[:3]}")
    drawn = [int(line) for f in ids.glob("*.ids") for line in f.read_text().split()]
    union = drawn + from_fpm
    dups = [i for i, n in Counter(union).items() if n > 1]
    checks(not dups, f"the fleet: no repeated ID among {len(union)} (14 processes, {len(drawn)}; 8 FPM workers, "
                     f"{len(from_fpm)})", f"{len(union) - len(set(union))} repeats, e.g. {dups[:3]}")
    if from_fpm and drawn:
        overlap = min(max(drawn), max(from_fpm)) > max(min(drawn), min(from_fpm))
        print(f"     figures: the 14 processes drew from {unix_ms(min(drawn)) - t0} to {unix_ms(max(drawn)) - t0} ms, "
              f"the FPM workers from {unix_ms(min(from_fpm)) - t0} to {unix_ms(max(from_fpm)) - t0} ms after the start "
              f"({'overlapping' if overlap else 'one after the other'})")
    print(f"     the fleet: {14 * FLEET_PER_PROCESS} + {FLEET_REQUESTS * FPM_IDS_PER_REQUEST} IDs in {t1 - go} ms "
          "from go to the last exit")
    ok, listing = one_state(fpm.shm, fpm.user)
    checks(ok, f"the fleet: still one state in {fpm.shm} (the identity's), the workers' own", listing)


def test_php_cli_shared_next_id_figure(work: Work, checks) -> None:  # noqa: ANN001
    """Section 4: a shared nextId() from PHP, ns a call. A figure, the median of 300 rounds of
    2,000 calls (0.6 ms each, so that most rounds run without being preempted on a loaded
    machine). The check is only that the bench ran."""
    shm = work.dir / "shm-bench"
    shm.mkdir(mode=0o700)
    r = run(["php", "tests/cross/bench_shared.php"], env=dict(os.environ, SNOWFLAKE_SHM_DIR=str(shm)))
    m = re.search(r"^shared_next_id_ns (\S+) (\S+)", r.stdout, re.M)
    checks(r.returncode == 0 and m, "PHP CLI: the shared nextId() bench ran", r.stdout)
    print("\n".join(f"     {line}" for line in r.stdout.splitlines() if not line.startswith("shared_next_id_ns")))
    if m:
        print(f"     figure: PHP CLI, shared nextId(): {m.group(1)} ns a call (median of 300 rounds of 2,000 calls; "
              f"best {m.group(2)}); issue 6's target <= {PHP_TARGET_NS}")
