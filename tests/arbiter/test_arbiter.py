"""The host's arbiter (issue 25), with real processes of every language, as users run them.

    .venv/bin/python -m pytest tests/arbiter -q -p no:cacheprovider [-k 'matrix and shm_dir']
        (scripts/suites.sh runs it; needs the release library and CLI, the Node addon, .venv's
        libsnowflake, php, gcc)

1. **The cross-mode matrix.** Two processes at a time, one identity, issuing at once for
   300 ms: every pair of default, `shared=`, `process_only`, `state_file`, `lease=local`, a
   Redis lease, a host lease, `rollover` and the CLI, each side in another language where it
   can (Python, Node, PHP, C; the CLI is its own). Each pair is either refused, with a message
   that names the other process, or repeats nothing. Run with `SNOWFLAKE_SHM_DIR` set and with
   the default `/dev/shm`, and once more with the host lease holding a value other than 0.
2. **The review's table**, each row as a regression test that failed on the old main: a
   removed lease record, a removed record borrowed 2.9 s ahead, an empty or relative
   `SNOWFLAKE_SHM_DIR`, `PrivateTmp` (a private /tmp in a mount namespace), two copies of the
   library in one process.
3. **Real users** (root and nobody, when run as root): stale and live, both ways round; a
   symlink and an empty file planted by the other under the victim's record name, and a
   symlink planted as a state file's lock.
4. **Other ways to break it**: a record truncated under its users (no SIGBUS, no repeat); a
   stopped holder of a lock (BUSY within max_wait_ms, naming it); a process in a time
   namespace whose monotonic clock is 5 s off (refused while others use the record).

Each pair of the matrix is a test (`test_matrix[shm_dir-default-cli]`), each other scenario
one, with soft checks (tests/servers/checks.py); the tables of the matrix are written at the
end of the run.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "servers"))
from checks import add_summary  # noqa: E402
from servers import Servers  # noqa: E402

PY = str(ROOT / ".venv" / "bin" / "python")
LIB = ROOT / "target" / "release" / "libsnowflake.so"
CLI = ROOT / "target" / "release" / "snowflake"
ISSUE_MS = 300
LANGS = ["py", "node", "php", "c"]

# The running test's soft checks (tests/servers/checks.py), for the scenarios below.
_checks = None


@pytest.fixture(autouse=True)
def _soft_checks(checks) -> Iterator[None]:  # noqa: ANN001
    global _checks
    _checks = checks
    yield
    _checks = None


def ok(what: str) -> None:
    assert _checks is not None, "ok() outside a test"
    _checks.ok(what)


def fail(what: str, detail: str = "") -> None:
    assert _checks is not None, "fail() outside a test"
    _checks.fail(what, detail)


def check(cond: bool, what: str, detail: str = "") -> bool:
    assert _checks is not None, "check() outside a test"
    return _checks(cond, what, detail)


# --------------------------------------------------------------------------------------------
# Issuing processes


class Work:
    """The run's directory, and how to start an issuer of each language (as a user)."""

    def __init__(self, top: Path) -> None:
        self.top = top
        self.c_issue = top / "issue"
        self.n = 0

    def fresh(self, name: str) -> Path:
        self.n += 1
        d = self.top / f"{self.n:03d}-{name}"
        d.mkdir()
        # Like /dev/shm: every user may make files here, only a file's owner remove it.
        os.chmod(d, 0o1777)
        return d


def issuer_argv(work: Work, lang: str) -> list[str]:
    here = ROOT / "tests" / "arbiter"
    return {
        "py": [PY, str(here / "issue.py")],
        "node": ["node", str(here / "issue.mjs")],
        "php": ["php", str(here / "issue.php")],
        "c": [str(work.c_issue)],
    }[lang]


def as_user(user: str | None, env: dict[str, str]) -> tuple[list[str], dict[str, str]]:
    """The command prefix and environment that run a process as `user` (None: as we are)."""
    if user is None:
        return [], env
    prefix = ["setpriv", f"--reuid={user}", "--regid=nogroup" if user == "nobody" else f"--regid={user}",
              "--clear-groups", "--"]
    env = dict(env, HOME="/tmp")
    return prefix, env


def python_for(user: str | None) -> list[str]:
    """The interpreter `user` can run with .venv's packages: .venv's, or (when pyenv's lives in
    root's home, where nobody cannot go) the system's with .venv's site-packages on its path."""
    if user is None:
        return [PY]
    purelib = subprocess.check_output([PY, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                      text=True).strip()
    # As a site directory (its .pth files too), then the script as __main__.
    run = ("import runpy, site, sys; site.addsitedir(sys.argv.pop(1)); sys.argv.pop(0); "
           "runpy.run_path(sys.argv[0], run_name='__main__')")
    return ["/usr/bin/python3", "-c", run, purelib]


class Proc:
    """An issuer: started, then read back."""

    def __init__(self, work: Work, lang: str, layout: str, node: str, options: str, out: Path, sync: Path,
                 env: dict[str, str], user: str | None = None, ms: int = ISSUE_MS) -> None:
        self.lang, self.out, self.node, self.options = lang, out, node, options
        prefix, env = as_user(user, env)
        if lang == "cli":
            self.argv = None
            self.cli = (prefix, env, layout, node, options)
            self.proc = None
            return
        argv = issuer_argv(work, lang)
        if lang == "py":
            argv = python_for(user) + argv[1:]
        self.proc = subprocess.Popen(prefix + argv + [layout, node, options, str(ms), str(out), str(sync)],
                                     env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                     cwd="/")

    def go(self) -> None:
        """The CLI cannot wait at the barrier: it starts at `go`."""
        if self.proc is None:
            prefix, env, layout, node, options = self.cli
            argv = [str(CLI), "next", "-n", "300000", "--layout", layout]
            if node != "-":
                argv += ["--node", node]
            if options != "-":
                argv += ["--options", options]
            self.stdout = open(self.out, "w")
            self.proc = subprocess.Popen(prefix + argv, env=env, stdout=self.stdout, stderr=subprocess.PIPE,
                                         text=True, cwd="/")

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def result(self) -> tuple[str, list[int], str]:
        """(`ok` or `error CODE MESSAGE`, the IDs, a failure after some IDs or '')."""
        assert self.proc is not None
        _, err = self.proc.communicate(timeout=180)
        if self.lang == "cli":
            self.stdout.close()
            ids = [int(x) for x in self.out.read_text().split()]
            if self.proc.returncode == 0:
                return "ok", ids, ""
            msg = err.strip().replace("\n", " ")
            return ("error " + msg if not ids else "ok"), ids, ("" if not ids else "error " + msg)
        if self.proc.returncode != 0:
            return f"crash {self.proc.returncode} {err.strip()[-500:]}", [], ""
        text = self.out.read_text() if self.out.exists() else ""
        lines = text.splitlines()
        if not lines:
            return f"nothing {err.strip()[-500:]}", [], ""
        head, ids, tail = lines[0], [], ""
        for line in lines[1:]:
            if line.startswith("error "):
                tail = line
            else:
                ids.append(int(line))
        return head, ids, tail


def barrier(sync: Path, procs: list[Proc], seconds: float = 60) -> None:
    """Waits until every issuer that opened its generator is ready (or has exited)."""
    end = time.monotonic() + seconds
    waiting = [p for p in procs if p.lang != "cli"]
    while time.monotonic() < end:
        ready = {int(f.name.split(".")[1]) for f in sync.glob("ready.*")}
        if all(p.pid in ready or p.proc.poll() is not None for p in waiting):  # type: ignore[union-attr]
            return
        time.sleep(0.01)


def has_issued(sync: Path, proc: Proc, seconds: float = 60) -> None:
    """Waits until `proc` has issued its first IDs after `go` (or has exited): under load a
    process can be far later than any fixed pause."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if (sync / f"issued.{proc.pid}").exists() or proc.proc.poll() is not None:  # type: ignore[union-attr]
            return
        time.sleep(0.01)


def run_together(work: Work, specs: list[tuple[str, str, str]], layout: str, env: dict[str, str],
                 users: list[str | None] | None = None, ms: int = ISSUE_MS,
                 stagger: float = 0.0) -> list[tuple[Proc, tuple[str, list[int], str]]]:
    """Starts one issuer per (lang, node, options), lets them issue at once, returns what
    each did. `stagger` seconds between starts (0: all at once)."""
    d = work.fresh("run")
    sync = d / "sync"
    sync.mkdir(mode=0o777)
    os.chmod(sync, 0o777)
    procs = []
    for i, (lang, node, options) in enumerate(specs):
        user = users[i] if users else None
        out = d / f"out.{i}"
        procs.append(Proc(work, lang, layout, node, options, out, sync, env, user, ms))
        if stagger:
            time.sleep(stagger)
    barrier(sync, procs)
    (sync / "go").touch()
    for p in procs:
        p.go()
    return [(p, p.result()) for p in procs]


def repeats(ids: list[list[int]]) -> int:
    seen: set[int] = set()
    n = 0
    for group in ids:
        for i in group:
            n += i in seen
            seen.add(i)
    return n


# --------------------------------------------------------------------------------------------
# 1. The cross-mode matrix

MODES = ["default", "shared", "process_only", "state_file", "lease_local", "redis", "host_lease", "rollover", "cli"]


def mode_spec(mode: str, w: int, state_dir: Path, redis_url: str) -> tuple[str, str]:
    """(node, options) of `mode` for the identity clock=0,datacenter=1,worker=w."""
    node = f"clock=0,datacenter=1,worker={w}"
    lease_node = "clock=0,datacenter=1"
    return {
        "default": (node, "-"),
        "cli": (node, "-"),
        "shared": (node, "shared=matrix"),
        "process_only": (node, "process_only=true"),
        "state_file": (node, f"state_file={state_dir}/w{w}.state"),
        "lease_local": (lease_node, "lease=local"),
        "redis": (lease_node, f"lease={redis_url}"),
        "host_lease": (lease_node, f"shared=hostlease;lease={redis_url}"),
        "rollover": (f"datacenter=1,worker={w}", "rollover=clock"),
    }[mode]


def judge_pair(label: str, results: list[tuple[Proc, tuple[str, list[int], str]]]) -> str:
    """Checks one pair; returns the matrix cell: `share` (both issued, no repeat), `A`/`B`
    (that side was refused), or what went wrong."""
    (pa, (ha, ia, ta)), (pb, (hb, ib, tb)) = results
    problems = []
    for p, head, tail in [(pa, ha, ta), (pb, hb, tb)]:
        if head.startswith(("crash", "nothing")):
            problems.append(f"{p.lang} {p.options}: {head}")
        if tail and "ERR_SNOWFLAKE_SHARED_MISMATCH" not in tail and "ERR_SNOWFLAKE_LEASE" not in tail:
            problems.append(f"{p.lang} {p.options}: failed while issuing: {tail}")
    n = repeats([ia, ib])
    if n:
        problems.append(f"{n} IDs repeated between {pa.lang} ({pa.options}) and {pb.lang} ({pb.options})")
    cell = "share"
    for side, (p, head), other in [("A", (pa, ha), pb), ("B", (pb, hb), pa)]:
        if head.startswith("error"):
            cell = side if cell == "share" else "both"
            if f"process {other.pid}" not in head:
                problems.append(f"{p.lang} ({p.options}) was refused without naming process {other.pid}: {head}")
    if cell == "both":
        problems.append(f"both refused: {ha} | {hb}")
    if cell == "share" and not (ia and ib):
        problems.append("one side issued nothing")
    if problems:
        fail(label, "\n".join(problems))
        return "FAIL"
    ok(f"{label}: {'both issued, ' + str(len(ia) + len(ib)) + ' IDs, no repeat' if cell == 'share' else 'refused ' + cell + ': ' + (ha if cell == 'A' else hb)[:160]}")
    return cell


def matrix_pairs(only: list[str] | None = None) -> list[tuple[str, str]]:
    """Every pair of MODES once (a row's mode before its column's), or those with a mode of `only`."""
    return [(a, b) for i, a in enumerate(MODES) for j, b in enumerate(MODES)
            if j >= i and not (only and a not in only and b not in only)]


def print_matrix(print, title: str, cells: dict[tuple[str, str], str]) -> None:  # noqa: A002
    print(f"\n     {title}: share = both issued with no repeat; A/B = the row's/column's process was refused, naming the other")
    short = {"default": "default", "shared": "shared=", "process_only": "proc_only", "state_file": "state_file",
             "lease_local": "lease=local", "redis": "redis", "host_lease": "host lease", "rollover": "rollover",
             "cli": "CLI"}
    print("     " + " " * 12 + "".join(f"{short[m]:>12}" for m in MODES))
    for a in MODES:
        row = f"{short[a]:>12}"
        for b in MODES:
            cell = cells.get((a, b)) or cells.get((b, a), "")
            if (a, b) not in cells and cell in ("A", "B"):
                cell = "B" if cell == "A" else "A"
            row += f"{cell:>12}"
        print("     " + row)


# --------------------------------------------------------------------------------------------
# 2. The review's rows


def env_with(shm: Path | None, **more: str) -> dict[str, str]:
    env = dict(os.environ, SNOWFLAKE_LIB=str(LIB))
    if shm is None:
        env.pop("SNOWFLAKE_SHM_DIR", None)
    else:
        env["SNOWFLAKE_SHM_DIR"] = str(shm)
    env.update(more)
    return env


def field_of(layout: str, id: int, name: str) -> int:
    """The value of field `name` in `id` (the layout's fields, high to low, in its spec)."""
    fields = [f.split(":") for f in layout.split(";")[0].split(",")]
    shift = sum(int(bits) for _, bits in fields)
    for field, bits in fields:
        shift -= int(bits)
        if field == name:
            return (id >> shift) & ((1 << int(bits)) - 1)
    raise KeyError(name)


def record_files(shm: Path) -> list[Path]:
    return sorted(shm.glob("libsnowflake-*.shm"))


def removed_while_in_use(work: Work, layout: str) -> None:
    """Rows 4 and 5: a local lease's record, and a record borrowed 2.9 s ahead
    (max_drift_ms=3000), removed while in use (a cleaner, RemoveIPC); a newcomer repeats
    nothing."""
    for label, first_opts, node, second_opts in [
        ("row 4: a local lease's record removed while held, then a second lease=local",
         "lease=local", "clock=0,datacenter=2", "lease=local;max_wait_ms=5000"),
        ("row 5: a record borrowed ahead with max_drift_ms=3000, removed; a default process starts",
         "max_drift_ms=3000", "clock=0,datacenter=3,worker=1", "max_wait_ms=5000"),
    ]:
        shm = work.fresh("shm")
        env = env_with(shm)
        d = work.fresh("removed")
        sync = d / "sync"
        sync.mkdir()
        # 64 IDs a millisecond: the first process runs far ahead of the clock when it may.
        small = layout.replace("sequence:12", "sequence:6")
        first = Proc(work, "c", small, node, first_opts, d / "first", sync, env, ms=1500)
        barrier(sync, [first])
        (sync / "go").touch()
        has_issued(sync, first)
        time.sleep(0.3)  # and runs on, ahead of the clock where it may
        for f in record_files(shm):
            f.unlink()
        sync2 = d / "sync2"
        sync2.mkdir()
        second = Proc(work, "py", small, node, second_opts, d / "second", sync2, env, ms=1500)
        barrier(sync2, [second])
        (sync2 / "go").touch()
        (h1, i1, t1), (h2, i2, t2) = first.result(), second.result()
        n = repeats([i1, i2])
        check(n == 0 and h1 == "ok" and bool(i1) and (bool(i2) or h2.startswith("error")),
              f"{label}: no repeat ({len(i1)} + {len(i2)} IDs; the first stopped with: {t1[:100] or 'nothing'})",
              f"{n} repeats\nfirst: {h1} {t1}\nsecond: {h2} {t2}")


def redis_record_removed(work: Work, layout: str, redis_url: str) -> None:
    """Row 2b's cousin: a Redis lease's record on this host removed while it issues, then a
    default process given the leased value by hand: the holder notices and moves to another
    value; nothing repeats."""
    shm = work.fresh("shm")
    env = env_with(shm)
    d = work.fresh("redisremoved")
    sync = d / "sync"
    sync.mkdir()
    first = Proc(work, "node", layout, "clock=0,datacenter=6", f"lease={redis_url}", d / "first", sync, env, ms=1500)
    barrier(sync, [first])
    (sync / "go").touch()
    has_issued(sync, first)
    files = record_files(shm)
    for f in files:
        f.unlink()
    sync2 = d / "sync2"
    sync2.mkdir()
    # The value it holds: the one record it had (worker=W in its name is not readable; the
    # IDs say).
    second = None
    deadline = time.monotonic() + 30
    while second is None and time.monotonic() < deadline:
        time.sleep(0.05)
        second = Proc(work, "c", layout, "clock=0,datacenter=6,worker=0", "max_wait_ms=5000", d / "second", sync2, env,
                      ms=1000)
    barrier(sync2, [second])  # type: ignore[list-item]
    (sync2 / "go").touch()
    (h1, i1, t1), (h2, i2, t2) = first.result(), second.result()  # type: ignore[union-attr]
    n = repeats([i1, i2])
    check(len(files) == 1 and h1 == "ok" and i1 and n == 0,
          f"a Redis lease's record removed while it issues, then worker=0 given by hand: no repeat "
          f"({len(i1)} + {len(i2)} IDs; the holder: {t1[:90] or 'went on'}; the newcomer: {h2[:90]})",
          f"{n} repeats\n{h1} {t1}\n{h2} {t2}")


def shm_dir_forms(work: Work, layout: str) -> None:
    """Row 6: SNOWFLAKE_SHM_DIR empty means unset (/dev/shm); a relative one is refused."""
    node = "clock=0,datacenter=4,worker=2"
    env = env_with(None, SNOWFLAKE_SHM_DIR="")
    # Both open the record at once, and one waits for the other's set-up lock: a bound for
    # that wait, not the default 1000 ms, which a holder descheduled under CI's load outlasted
    # once (ERR_SNOWFLAKE_BUSY). The row is about where the state is, not about that wait.
    opts = "max_wait_ms=30000"
    results = run_together(work, [("py", node, opts), ("c", node, opts)], layout, env)
    (_, (ha, ia, _)), (_, (hb, ib, _)) = results
    check(ha == "ok" and hb == "ok" and repeats([ia, ib]) == 0,
          "row 6: SNOWFLAKE_SHM_DIR= (empty) in two processes: one host state, no repeat",
          f"{ha}\n{hb}\n{repeats([ia, ib])} repeats")
    env = env_with(None, SNOWFLAKE_SHM_DIR="relative/shm")
    results = run_together(work, [("node", node, "-")], layout, env)
    head = results[0][1][0]
    check(head.startswith("error ERR_SNOWFLAKE_VALUE") and "SNOWFLAKE_SHM_DIR" in head and "absolute" in head,
          "row 6: a relative SNOWFLAKE_SHM_DIR is refused, naming the variable", head)


def private_tmp(work: Work, layout: str) -> None:
    """Row 7: two services with systemd's PrivateTmp (each its own /tmp, in a mount namespace
    of its own) and lease=local: the leases are records beside the host's state, so they meet."""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        fail("row 7: PrivateTmp needs root and unshare(1) to make a private /tmp")
        return
    # Outside /tmp, which each service's private /tmp hides.
    outside = ROOT / "target" / f"arbiter-privatetmp-{os.getpid()}"
    outside.mkdir(parents=True, exist_ok=True)
    shm, d = outside / "shm", outside / "run"
    shm.mkdir(mode=0o700)
    d.mkdir()
    def start(k: int, attempt: int) -> tuple[subprocess.Popen[str], Path]:
        out = d / f"out{k}.{attempt}"
        # A checkout under /tmp (CI clones there) stays visible at its path: bound aside
        # before the private /tmp hides it, then bound back onto it.
        keep = (f"mount --bind {ROOT} /mnt && mount -t tmpfs tmpfs /tmp && mkdir -p {ROOT} && mount --bind /mnt {ROOT}"
                if ROOT.is_relative_to("/tmp") else "mount -t tmpfs tmpfs /tmp")
        script = (f"{keep} && exec {PY} {ROOT}/tests/arbiter/issue.py "
                  f"'{layout}' clock=0,datacenter=5 'lease=local' 400 {out} {d}")
        return (subprocess.Popen(["unshare", "--mount", "--propagation", "private", "sh", "-c", script],
                                 env=env_with(shm, TMPDIR="/tmp"), stderr=subprocess.PIPE, text=True), out)

    def busy(service: tuple[subprocess.Popen[str], Path]) -> bool:
        p, out = service
        return p.poll() is not None and out.exists() and out.read_text().startswith("error ERR_SNOWFLAKE_BUSY")

    services = [start(k, 0) for k in range(2)]
    attempts = 0
    end = time.monotonic() + 60
    while len(list(d.glob("ready.*"))) < 2 and time.monotonic() < end:
        # A service refused at open because the other held the record's set-up lock longer than
        # an open waits (starved under load: flaky.sh met it) is started again: a refusal of the
        # moment, not the answer the row asks for.
        for k, service in enumerate(services):
            if busy(service):
                attempts += 1
                services[k] = start(k, attempts)
        if any(p.poll() is not None and not busy((p, out)) for p, out in services):
            break
        time.sleep(0.01)
    procs = [p for p, _ in services]
    outs = [out for _, out in services]
    (d / "go").touch()
    errors = [p.communicate(timeout=120)[1] for p in procs]
    results = []
    for out, err in zip(outs, errors):
        lines = out.read_text().splitlines() if out.exists() else [f"nothing ({err.strip()[-300:]})"]
        results.append((lines[0], [int(x) for x in lines[1:] if not x.startswith("error")]))
    workers = {field_of(layout, ids[0], "worker") for _, ids in results if ids}
    check(all(h == "ok" for h, _ in results) and len(workers) == 2 and repeats([r[1] for r in results]) == 0,
          "row 7: two services, each with a private /tmp (PrivateTmp), lease=local: distinct values, no repeat",
          f"{[h for h, _ in results]} workers {workers}")
    shutil.rmtree(outside, ignore_errors=True)


def two_copies_in_one_process(work: Work, layout: str) -> None:
    """Row 10: two copies of the library in one process (the wheel, and libsnowflake.so
    through ctypes), process_only both: the second is refused, naming this process."""
    shm = work.fresh("shm")
    code = f"""
import ctypes, json, sys
import libsnowflake as sf
g = sf.Generator({layout!r}, {{"clock": 0, "datacenter": 6, "worker": 1}}, process_only=True)
g.next_id()
lib = ctypes.CDLL({str(LIB)!r})
lib.snowflake_last_error.restype = ctypes.c_char_p
layout = ctypes.c_void_p()
assert lib.snowflake_layout_new({layout!r}.encode(), ctypes.byref(layout)) == 0
gen = ctypes.c_void_p()
status = lib.snowflake_generator_new(layout, b"clock=0,datacenter=6,worker=1", b"process_only=true", ctypes.byref(gen))
print(json.dumps({{"status": status, "message": lib.snowflake_last_error().decode()}}))
"""
    out = subprocess.run([PY, "-c", code], env=env_with(shm), capture_output=True, text=True, timeout=60)
    try:
        r = json.loads(out.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        fail("row 10: two copies of the library in one process", out.stdout + out.stderr)
        return
    check(r["status"] == 12 and "process_only" in r["message"],
          "row 10: the wheel and libsnowflake.so in one process, process_only both: the second is refused",
          json.dumps(r))


# --------------------------------------------------------------------------------------------
# 3. Real users


def users(work: Work, layout: str) -> None:
    if os.geteuid() != 0:
        fail("real users: run as root to run processes as nobody too")
        return
    shm = work.fresh("shm-users")  # 0777, like a sticky /dev/shm: both users' records meet here
    os.chmod(shm, 0o1777)
    for first, second in [(None, "nobody"), ("nobody", None)]:
        a = first or "root"
        b = second or "root"
        node = "clock=0,datacenter=7,worker=3" if first is None else "clock=0,datacenter=7,worker=4"
        env = env_with(shm)
        # Stale: the first user's process issues and exits; the second starts above it.
        r1 = run_together(work, [("py", node, "-")], layout, env, users=[first])
        r2 = run_together(work, [("c", node, "-")], layout, env, users=[second])
        (h1, i1, _), (h2, i2, _) = r1[0][1], r2[0][1]
        check(h1 == "ok" and h2 == "ok" and i1 and i2 and min(i2) > max(i1),
              f"users: {a} issued and exited; then {b} with the same node values starts above its IDs",
              f"{h1}\n{h2}")
        # Live: while the first user's process issues, the second user's is refused, named.
        d = work.fresh("live")
        sync = d / "sync"
        sync.mkdir(mode=0o777)
        os.chmod(sync, 0o777)
        holder = Proc(work, "node", layout, node, "-", d / "holder", sync, env, first, ms=3000)
        barrier(sync, [holder])
        (sync / "go").touch()
        time.sleep(0.2)
        r3 = run_together(work, [("php", node, "-")], layout, env, users=[second])
        head = r3[0][1][0]
        holder.result()
        user_word = "user nobody" if first == "nobody" else "user root"
        check(head.startswith("error ERR_SNOWFLAKE_SHARED_MISMATCH") and f"process {holder.pid} of {user_word}" in head
              and "give this user's processes other node values, or run them as one user" in head
              and "SNOWFLAKE_SHM_DIR" not in head,
              f"users: while {a}'s process issues, {b}'s is refused, naming that user and process", head)

    # Planted by nobody under root's record name: a symlink, and an empty file.
    victim = work.top / "victim"
    victim.write_text("root's data\n")
    for kind in ["symlink", "empty file"]:
        node = {"clock": 0, "datacenter": 7, "worker": 5 if kind == "symlink" else 6}
        name = record_name(work, layout, ",".join(f"{k}={v}" for k, v in node.items()))
        planted = shm / name
        if kind == "symlink":
            cmd = ["ln", "-s", str(victim), str(planted)]
        else:
            cmd = ["touch", str(planted)]
        subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"] + cmd, check=True)
        r = run_together(work, [("py", ",".join(f"{k}={v}" for k, v in node.items()), "-")], layout, env_with(shm))
        head = r[0][1][0]
        check(head.startswith("error ERR_SNOWFLAKE_SHARED_MISMATCH") and "refused" in head
              and victim.read_text() == "root's data\n",
              f"users: a {kind} that nobody planted under root's record name is refused; nothing written through it",
              head)
    # A symlink planted as a state file's lock, in a sticky directory both may write.
    sticky = work.fresh("sticky")
    os.chmod(sticky, 0o1777)
    subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--", "ln", "-s", str(victim),
                    str(sticky / "ids.state.lock")], check=True)
    r = run_together(work, [("c", "clock=0,datacenter=7,worker=7", f"state_file={sticky}/ids.state")], layout,
                     env_with(work.fresh("shm")))
    head, ids, tail = r[0][1]
    check((head.startswith("error") or tail.startswith("error")) and "symbolic link" in head + tail
          and victim.read_text() == "root's data\n",
          "users: a symlink planted as a state file's lock is refused, and its target left alone", head + tail)


def record_name(work: Work, layout: str, node: str) -> str:
    """This user's record name of `layout` and `node`: made in a scratch directory, read back."""
    scratch = work.fresh("scratch")
    run_together(work, [("py", node, "-")], layout, env_with(scratch), ms=1)
    return record_files(scratch)[0].name


# --------------------------------------------------------------------------------------------
# 4. Other ways to break it


def truncated(work: Work, layout: str) -> None:
    """A record truncated to 0 bytes by a process of the user while others issue from it:
    every process stops with an error that says so (no SIGBUS), and nothing repeats."""
    shm = work.fresh("shm")
    env = env_with(shm)
    d = work.fresh("truncate")
    sync = d / "sync"
    sync.mkdir()
    node = "clock=0,datacenter=2,worker=9"
    procs = [Proc(work, lang, layout, node, "-", d / f"out.{lang}", sync, env, ms=1500) for lang in ["py", "node", "c"]]
    barrier(sync, procs)
    (sync / "go").touch()
    time.sleep(0.3)
    for f in record_files(shm):
        os.truncate(f, 0)
    results = [p.result() for p in procs]
    heads = [h for h, _, _ in results]
    tails = [t for _, _, t in results]
    n = repeats([i for _, i, _ in results])
    check(all(h == "ok" for h in heads) and all("truncated" in t for t in tails) and n == 0,
          "a record truncated under three processes: each stops with `truncated`, no SIGBUS, no repeat",
          f"heads {heads}\ntails {tails}\n{n} repeats")
    # A process started after it sets the record up again, above what the others may issue.
    r = run_together(work, [("php", node, "-")], layout, env)
    h, ids, _ = r[0][1]
    check(h == "ok" and repeats([i for _, i, _ in results] + [ids]) == 0,
          "after the truncation a new process issues again, repeating nothing", h)


def stopped_holder(work: Work, layout: str) -> None:
    """A process stopped (SIGSTOP) while it holds a record's lock, or a state file's: the
    others' calls fail within max_wait_ms with BUSY, naming it, instead of waiting for ever."""
    shm = work.fresh("shm")
    env = env_with(shm)
    state = work.fresh("stopped") / "ids.state"
    node = "clock=0,datacenter=2,worker=10"
    # The record: set it up, then a holder takes its flock and stops itself.
    r = run_together(work, [("py", node, "-")], layout, env)
    check(r[0][1][0] == "ok", "stopped holder: the record is set up", r[0][1][0])
    for what, target in [("the record's set-up lock", None), ("the state file's lock", Path(str(state) + ".lock"))]:
        if target is None:
            target = record_files(shm)[0]
            options = "max_wait_ms=0"
        else:
            target.touch()
            options = f"state_file={state};max_wait_ms=0"
        holder = subprocess.Popen([sys.executable, "-c", f"""
import fcntl, os, signal
f = open({str(target)!r}, "r+")
fcntl.flock(f, fcntl.LOCK_EX)
os.kill(os.getpid(), signal.SIGSTOP)
"""])
        time.sleep(0.3)
        t0 = time.monotonic()
        r = run_together(work, [("c", node, options)], layout, env)
        took = time.monotonic() - t0
        head, ids, tail = r[0][1]
        text = head + tail
        holder.send_signal(signal.SIGKILL)
        holder.wait()
        check("ERR_SNOWFLAKE_BUSY" in text and f"process {holder.pid}" in text and took < 20,
              f"stopped holder of {what}: BUSY in {took:.1f} s, naming process {holder.pid}", text)


def time_namespace(work: Work, layout: str) -> None:
    """A process in a time namespace whose monotonic clock is 5 s ahead: refused while others
    use the record; it takes the record over (re-anchored) once none does."""
    if os.geteuid() != 0 or subprocess.run(["unshare", "--time", "--monotonic", "5", "true"]).returncode != 0:
        fail("time namespace: needs root and unshare --time")
        return
    shm = work.fresh("shm")
    env = env_with(shm)
    node = "clock=0,datacenter=2,worker=11"
    d = work.fresh("timens")
    sync = d / "sync"
    sync.mkdir()
    holder = Proc(work, "py", layout, node, "-", d / "holder", sync, env, ms=2000)
    barrier(sync, [holder])
    (sync / "go").touch()
    out = d / "shifted"
    sync2 = d / "sync2"
    sync2.mkdir()
    p = subprocess.run(["unshare", "--time", "--monotonic", "5", PY, str(ROOT / "tests/arbiter/issue.py"), layout,
                        node, "-", "100", str(out), str(sync2)], env=env, capture_output=True, text=True, timeout=60)
    head = out.read_text().splitlines()[0] if out.exists() else p.stderr
    h1, i1, _ = holder.result()
    check(head.startswith("error ERR_SNOWFLAKE_SHARED_MISMATCH") and "monotonic clock is" in head,
          "time namespace: a process whose monotonic clock is 5 s off is refused while another uses the record", head)
    (sync2 / "go").touch()
    p = subprocess.Popen(["unshare", "--time", "--monotonic", "5", PY, str(ROOT / "tests/arbiter/issue.py"), layout,
                          node, "-", "100", str(out), str(sync2)], env=env, stderr=subprocess.PIPE, text=True)
    p.communicate(timeout=60)
    lines = out.read_text().splitlines()
    ids = [int(x) for x in lines[1:] if not x.startswith("error")]
    check(lines[0] == "ok" and ids and min(ids) > max(i1),
          "time namespace: once no process uses the record, the shifted process takes it over, above its IDs",
          lines[0])


# --------------------------------------------------------------------------------------------


def build(work: Work) -> None:
    subprocess.run(["gcc", "-std=c99", "-O2", "-Wall", "-Werror", f"-I{ROOT}/include", str(ROOT / "tests/arbiter/issue.c"),
                    "-o", str(work.c_issue), f"-L{LIB.parent}", "-lsnowflake", f"-Wl,-rpath,{work.top}/lib"], check=True)
    (work.top / "lib").mkdir()
    soname = subprocess.run(["readelf", "-d", str(LIB)], capture_output=True, text=True).stdout
    soname = soname.split("Library soname: [")[1].split("]")[0] if "soname" in soname else LIB.name
    (work.top / "lib" / soname).symlink_to(LIB)


class Run:
    """What the tests share: the run's directory and issuers, its layout, its Redis, and each
    matrix's record directory, state files and cells."""

    def __init__(self, work: Work, layout: str, redis_url: str, tmpfs: Path) -> None:
        self.work, self.layout, self.url, self.tmpfs = work, layout, redis_url, tmpfs
        self.dirs: dict[str, tuple[Path | None, Path]] = {}
        self.cells: dict[str, dict[tuple[str, str], str]] = {}

    def matrix_dirs(self, where: str) -> tuple[Path | None, Path]:
        """(SNOWFLAKE_SHM_DIR or None for /dev/shm, the state files' directory) of one matrix.

        The state files are on tmpfs: the matrix checks who may share an identity, not the
        disk. A state file's write holds its lock through two fsyncs, and on a disk busy with
        CI's package builds that took longer than max_wait_ms (CI: `state_file in php +
        state_file in c`, BUSY on the state file's lock), a refusal that says nothing of who
        may share. On tmpfs an fsync returns at once. (Durability on a real disk is
        core/tests/processes.rs's.)"""
        if where not in self.dirs:
            state = self.tmpfs / f"state-{where}"
            state.mkdir()
            os.chmod(state, 0o1777)
            self.dirs[where] = (None if where == "dev_shm" else self.work.fresh("shm"), state)
        return self.dirs[where]


@pytest.fixture(scope="module")
def run() -> Iterator[Run]:
    for need in [LIB, CLI, Path(PY)]:
        if not need.exists():
            pytest.fail(f"{need} is missing: build it first (scripts/check.sh does)")
    top = Path(tempfile.mkdtemp(prefix="snowflake-arbiter-"))
    os.chmod(top, 0o755)
    tmpfs = Path(tempfile.mkdtemp(prefix="snowflake-arbiter-", dir="/dev/shm"))
    os.chmod(tmpfs, 0o755)
    work = Work(top)
    # A layout of this run's own (its epoch): records it leaves in /dev/shm are its own.
    epoch = int(time.time() * 1000) - 86_400_000 - (os.getpid() % 100_000)
    layout = f"time:41,clock:2,datacenter:3,worker:5,sequence:12;epoch={epoch}"
    try:
        build(work)
        with Servers("redis", dir=top) as redis:
            r = Run(work, layout, redis.info["redis"]["url"], tmpfs)
            yield r
        # The matrices, as tables, after the run's results.
        titles = {"shm_dir": "SNOWFLAKE_SHM_DIR set", "dev_shm": "the default /dev/shm",
                  "host_lease_1": "SNOWFLAKE_SHM_DIR set, the host lease holding worker=1"}
        for where, cells in r.cells.items():
            print_matrix(add_summary, titles[where], cells)
    finally:
        shutil.rmtree(top, ignore_errors=True)
        shutil.rmtree(tmpfs, ignore_errors=True)
        # This run's records in /dev/shm: its layout's, by the fingerprint in their text.
        for f in Path("/dev/shm").glob("libsnowflake-*"):
            try:
                if f"epoch={epoch}".encode() in f.read_bytes()[:1024]:
                    f.unlink()
            except OSError:
                pass


def matrix_cell(run: Run, where: str, a: str, b: str, w: int = 0) -> None:
    """One pair of the matrix: `a` and `b` (in the languages their place in MODES picks)
    issue at once with one identity, under `where`'s records."""
    shm, state_dir = run.matrix_dirs(where)
    env = env_with(shm)
    i, j = MODES.index(a), MODES.index(b)
    la = "cli" if a == "cli" else LANGS[(i + j) % 4]
    lb = "cli" if b == "cli" else LANGS[(i + j + 1) % 4]
    na, oa = mode_spec(a, w, state_dir, run.url)
    nb, ob = mode_spec(b, w, state_dir, run.url)
    label = f"SNOWFLAKE_SHM_DIR={shm}" if shm else "/dev/shm"
    label = f"matrix ({label}, worker={w}): {a} in {la} + {b} in {lb}"
    # A pair in which Redis did not answer a side in time (a loaded machine: `flaky.sh` met it,
    # a typed refusal that names no other process) runs again, whether the side met it as it
    # opened or while it issued (where a first call that meets it leaves the side with no ID);
    # its IDs still count for repeats.
    earlier: list[list[int]] = []
    for attempt in range(5):
        results = run_together(run.work, [(la, na, oa), (lb, nb, ob)], run.layout, env)
        if attempt == 4 or not any("did not answer in time" in h + t for _, (h, _, t) in results):
            break
        earlier += [ids for _, (_, ids, _) in results]
    if earlier and (n := repeats(earlier + [ids for _, (_, ids, _) in results])):
        fail(label, f"{n} IDs repeated across the attempts of the pair")
    run.cells.setdefault(where, {})[(a, b)] = judge_pair(label, results)


# 1. The cross-mode matrix, in SNOWFLAKE_SHM_DIR and in /dev/shm.
@pytest.mark.parametrize("a,b", matrix_pairs(), ids=[f"{a}-{b}" for a, b in matrix_pairs()])
@pytest.mark.parametrize("where", ["shm_dir", "dev_shm"])
def test_matrix(run: Run, where: str, a: str, b: str) -> None:
    matrix_cell(run, where, a, b)


@pytest.fixture(scope="class")
def blocker(run: Run) -> Iterator[None]:
    """A process that holds worker=0 in Redis, for the tests of one class."""
    d = run.work.fresh("blocker")
    blocker = Proc(run.work, "py", run.layout, "clock=0,datacenter=1", f"lease={run.url}", d / "out", d,
                   env_with(run.work.fresh("shm-blocker")), ms=600_000)
    barrier(d, [blocker])
    yield
    blocker.proc.kill()  # type: ignore[union-attr]
    blocker.proc.wait()  # type: ignore[union-attr]


class TestHostLeaseHolding1:
    """The matrix's pairs with a host lease, while worker=0 is held in Redis by another process
    (the host lease then holds 1)."""

    @pytest.mark.parametrize("a,b", matrix_pairs(["host_lease"]),
                             ids=[f"{a}-{b}" for a, b in matrix_pairs(["host_lease"])])
    def test_matrix(self, run: Run, blocker: None, a: str, b: str) -> None:
        matrix_cell(run, "host_lease_1", a, b, w=1)


# 2. The review's rows.
def test_removed_while_in_use(run: Run) -> None:
    removed_while_in_use(run.work, run.layout)


def test_redis_record_removed(run: Run) -> None:
    redis_record_removed(run.work, run.layout, run.url)


def test_shm_dir_forms(run: Run) -> None:
    shm_dir_forms(run.work, run.layout)


def test_private_tmp(run: Run) -> None:
    private_tmp(run.work, run.layout)


def test_two_copies_in_one_process(run: Run) -> None:
    two_copies_in_one_process(run.work, run.layout)


# 3. Real users.
def test_users(run: Run) -> None:
    users(run.work, run.layout)


# 4. Other ways to break it.
def test_truncated(run: Run) -> None:
    truncated(run.work, run.layout)


def test_stopped_holder(run: Run) -> None:
    stopped_holder(run.work, run.layout)


def test_time_namespace(run: Run) -> None:
    time_namespace(run.work, run.layout)
