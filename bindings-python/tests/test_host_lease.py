"""Host leases (`lease=redis://…` with `shared=`), as a fleet uses them: each simulated host is
a shared-memory directory of its own (SNOWFLAKE_SHM_DIR) with separate Python processes, on one
real redis-server. The layout's worker field has 2 bits, so the fleet has 4 worker values and
more processes than values: the processes of a host share one state and one leased value."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Optional, TypeVar

import pytest
from servers import Servers, redis_call

import libsnowflake as sf

LAYOUT = "time:41,worker:2,sequence:12;epoch=1288834974657"
TTL_MS = 3000
PER_PROCESS = 20_000

# One process of a host: opens the host lease, says which value it holds, draws IDs into a file
# when told to, and exits when its input ends (or is killed).
WORKER = r"""
import json, sys, time
import libsnowflake as sf
url, layout, ttl, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
try:
    # A claim on a Redis that lost its data starts up to 2 s ahead of the clock: calls wait
    # for it (a loaded machine adds its own delays), rather than fail after the default 1 s.
    gen = sf.Generator(layout, shared="app", lease=url, lease_ttl_ms=ttl, max_wait_ms=10_000)
except sf.SnowflakeError as e:
    print(json.dumps({"error": type(e).__name__, "message": str(e)}), flush=True)
    sys.exit(3)
print(json.dumps({"value": gen.stats().lease_value}), flush=True)
for line in sys.stdin:
    n, refused = int(line), 0
    while True:
        try:
            ids = gen.next_ids(n)
            break
        except sf.LeaseError:  # lost, and claimed again: its IDs start a little later
            refused += 1
            time.sleep(0.05)
    with open(out, "a") as f:
        f.write("\n".join(map(str, ids)) + "\n")
    s = gen.stats()
    print(json.dumps({"drew": n, "value": s.lease_value, "claims": s.lease_claims, "losses": s.lease_losses,
                      "refused": refused}), flush=True)
"""


class Host:
    """A simulated host: a directory for its shared memory, and its processes."""

    def __init__(self, name: str, root: Path, url: str) -> None:
        self.name, self.url = name, url
        self.dir = root / name
        self.shm = self.dir / "shm"
        self.shm.mkdir(parents=True)
        self.procs: list[subprocess.Popen[str]] = []
        self.started = 0  # names each process's file of IDs

    def start(self, n: int) -> list[dict[str, Any]]:
        """Starts `n` processes at once; returns what each said once open."""
        env = {**os.environ, "SNOWFLAKE_SHM_DIR": str(self.shm)}
        new = []
        for i in range(n):
            out = self.dir / f"ids-{self.started}.txt"
            self.started += 1
            p = subprocess.Popen([sys.executable, "-c", WORKER, self.url, LAYOUT, str(TTL_MS), str(out)],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
            self.procs.append(p)
            new.append(p)
        return [self.read(p) for p in new]

    def open(self, n: int) -> list[dict[str, Any]]:
        """Starts `n` processes at once that must open: one refused for a cause of the moment (a
        Redis that did not answer in time on a loaded machine: `flaky.sh` met it) is started
        again, one at a time, until it opens; a refusal for want of a value fails at once."""
        at = len(self.procs)
        replies = self.start(n)
        deadline = time.monotonic() + 60
        for i, reply in enumerate(replies):
            while "value" not in reply:
                assert "are leased" not in reply["message"] and time.monotonic() < deadline, \
                    f"a process of host {self.name} did not open: {reply}"
                self.procs[at + i].wait()
                time.sleep(0.1)
                (reply,) = self.start(1)
                self.procs[at + i] = self.procs.pop()
            replies[i] = reply
        return replies

    def refused(self) -> dict[str, Any]:
        """Starts one process that must be refused for want of a value: one refused for a cause
        of the moment instead (a Redis that did not answer in time, as in open()) is started
        again until the refusal is another's."""
        deadline = time.monotonic() + 60
        while True:
            (reply,) = self.start(1)
            if not late(reply.get("message", "")) or time.monotonic() > deadline:
                return reply
            self.procs[-1].wait()

    @staticmethod
    def read(p: subprocess.Popen[str]) -> dict[str, Any]:
        assert p.stdout is not None
        line = p.stdout.readline()
        assert line, f"a process exited with {p.wait()} before answering"
        reply: dict[str, Any] = json.loads(line)
        return reply

    def live(self) -> list[subprocess.Popen[str]]:
        return [p for p in self.procs if p.poll() is None]

    def draw(self, n: int) -> list[dict[str, Any]]:
        """Every live process draws `n` IDs at once."""
        procs = self.live()
        for p in procs:
            assert p.stdin is not None
            p.stdin.write(f"{n}\n")
            p.stdin.flush()
        return [self.read(p) for p in procs]

    def ids(self) -> list[int]:
        out: list[int] = []
        for f in sorted(self.dir.glob("ids-*.txt")):
            out += [int(x) for x in f.read_text().split()]
        return out

    def kill(self) -> None:
        for p in self.live():
            p.send_signal(signal.SIGKILL)
        for p in self.procs:
            p.wait()

    def exit(self) -> None:
        """Ends every process the usual way: its input closes, it exits."""
        for p in self.live():
            assert p.stdin is not None
            p.stdin.close()
        for p in self.procs:
            assert p.wait(timeout=60) == 0


def late(message: str) -> bool:
    """A refusal for a cause of the moment: Redis did not answer within the lease's timeout, on a
    loaded machine (`flaky.sh` met it), which a process meets and tries again."""
    return "did not answer in time" in message


T = TypeVar("T")


def patiently(call: Callable[[], T]) -> T:
    """`call()` (a generator opened, an ID that may reserve time in Redis), made again while it
    is refused because Redis did not answer in time (for a minute at most): the test's premise
    is a Redis that answers."""
    deadline = time.monotonic() + 60
    while True:
        try:
            return call()
        except sf.LeaseError as e:
            if not late(str(e)) or time.monotonic() > deadline:
                raise
            time.sleep(0.1)


@pytest.fixture()
def redis(tmp_path: Path) -> Iterator[dict[str, Any]]:
    with Servers("redis", dir=tmp_path) as s:
        yield s.info["redis"]


def lease_keys(node: dict[str, Any]) -> dict[str, int]:
    """The lease keys in Redis (not their marks: `:hwm`, and `:run`, the run that wrote it), with
    their time to live in ms."""
    keys = [k.decode() if isinstance(k, bytes) else k for k in redis_call(node, "KEYS", "libsnowflake:*")]
    return {k: int(redis_call(node, "PTTL", k)) for k in keys if not k.endswith((":hwm", ":run"))}


def value_of(layout: sf.Layout, id_: int) -> int:
    return int(layout.decode(id_).fields["worker"])


def test_three_hosts_of_four_processes_share_three_values_and_repeat_nothing(
        redis: dict[str, Any], tmp_path: Path) -> None:
    # A run whose premise (three hosts, three values) a lapsed lease broke runs again: see
    # `until_premise_holds` (flaky.sh met two hosts naming worker=0).
    until_premise_holds(three_hosts_case, redis, tmp_path)


def until_premise_holds(case: Callable[[dict[str, Any], Path], Optional[str]], redis: dict[str, Any],
                        tmp_path: Path) -> None:
    """Runs `case` until a run holds, for four minutes at most. A case's premise is hosts that
    keep their values while it runs; on a loaded machine a host's renewals can be held back
    past the TTL, and its key lapse before another host claims. Such a run still checks what
    matters, that no ID repeats and that the lapse shows (`lapsed`), and returns why; the
    case then runs again from the start, once the run's keys expired."""
    deadline = time.monotonic() + 240
    run = 0
    while True:
        run += 1
        lapse = case(redis, tmp_path / f"run-{run}")
        if lapse is None:
            return
        assert time.monotonic() < deadline, f"leases lapsed under load in every run, the last: {lapse}"
        # Every process of the run is dead: its keys expire within the TTL.
        wait_for(lambda: not lease_keys(redis), 60, "the killed run's lease keys to expire")


def three_hosts_case(redis: dict[str, Any], root: Path) -> Optional[str]:
    """One run of the case; `None` when it held, else why a lapsed lease broke its premise."""
    url = f"unix://{redis['unix_socket']}"
    layout = sf.Layout(LAYOUT)
    hosts = [Host(n, root, url) for n in ("a", "b", "c")]
    try:
        held = {}
        for h in hosts:
            replies = h.open(4)
            values = {r["value"] for r in replies}
            assert len(values) == 1, f"host {h.name}'s processes hold {values}: one value per host"
            held[h.name] = values.pop()
        if sorted(held.values()) != sorted(set(held.values())):
            return lapsed(hosts, held, f"the hosts hold {held}")
        # One lease per host, not per process: every key is a value some host holds. (Not
        # "three keys": the processes are idle until they draw, and a host whose renewals a
        # loaded machine held back past the TTL lets its key lapse until its next call claims
        # again. flaky.sh met that: 2 keys.)
        keys = lease_keys(redis)
        assert {int(k.rsplit("=", 1)[1]) for k in keys} <= set(held.values()) and len(keys) <= 3, \
            f"one lease per host, not per process: {keys}, hosts hold {held}"

        # 12 processes draw at once, each host's four from one state.
        for h in hosts:
            for p in h.live():
                assert p.stdin is not None
                p.stdin.write(f"{PER_PROCESS}\n")
                p.stdin.flush()
        for h in hosts:
            for p in h.live():
                assert Host.read(p)["drew"] == PER_PROCESS
        all_ids = []
        for h in hosts:
            ids = h.ids()
            assert len(ids) == 4 * PER_PROCESS
            assert {value_of(layout, i) for i in ids} == {held[h.name]}
            all_ids += ids
        assert len(set(all_ids)) == len(all_ids) == 12 * PER_PROCESS, "no ID repeats across or within hosts"

        # The last process of a host to exit releases its value at once.
        b_key = next(k for k in lease_keys(redis) if k.endswith(f"worker={held['b']}"))
        hosts[1].exit()
        assert b_key not in lease_keys(redis), "the host's last process released the lease"
        (again,) = hosts[1].open(1)
        assert again["value"] == held["b"], "the host claims the value it held before"
        hosts[1].draw(PER_PROCESS)
        ids = hosts[1].ids()
        assert len(set(ids)) == len(ids) == 5 * PER_PROCESS, "a restart repeats none of the host's IDs"
        return None
    finally:
        for h in hosts:
            h.kill()


def test_a_killed_hosts_value_frees_within_the_ttl_for_another_host(redis: dict[str, Any], tmp_path: Path) -> None:
    # A run whose premise (four hosts, four values) a lapsed lease broke runs again: see
    # `until_premise_holds` (flaky.sh met two hosts naming worker=0).
    until_premise_holds(killed_host_case, redis, tmp_path)


def wait_for(done: Callable[[], bool], seconds: float, what: str) -> None:
    end = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < end, f"waited {seconds} s for {what}"
        time.sleep(0.05)


def lapsed(hosts: list[Host], held: dict[str, int], why: str, dead: tuple[Host, ...] = ()) -> str:
    """A lease lapsed under load: every live process of `hosts` draws (one whose value another
    took claims one again, which a free value or an expired key allows), no ID repeats, and
    some process shows the lapse (claimed again, a loss, or another value than it held);
    returns `why`. The IDs of the `dead` hosts' processes count too."""
    replies = {h.name: h.draw(1000) for h in hosts}
    ids = [i for h in (*hosts, *dead) for i in h.ids()]
    assert len(set(ids)) == len(ids), f"IDs repeat after {why}"
    shown = [(name, r) for name, rs in replies.items() for r in rs
             if r["claims"] > 1 or r["losses"] > 0 or r["value"] != held.get(name)]
    assert shown, f"{why}, and no process shows a lapsed lease: {replies}"
    return f"{why} ({shown[0][0]}: {shown[0][1]})"


def killed_host_case(redis: dict[str, Any], root: Path) -> Optional[str]:
    """One run of the case; `None` when it held, else why a lapsed lease broke its premise."""
    url = f"unix://{redis['unix_socket']}"
    layout = sf.Layout(LAYOUT)
    a, b, c, d, e = (Host(n, root, url) for n in "abcde")
    try:
        held: dict[str, int] = {}
        opened: list[Host] = []
        for h in (a, b, c, d):
            (first,) = h.open(1)
            opened.append(h)
            held[h.name] = first["value"]
            rest = h.open(3)
            if {r["value"] for r in rest} != {first["value"]}:
                return lapsed(opened, held, f"host {h.name}'s processes hold {[r['value'] for r in rest]}")
        if sorted(held.values()) != [0, 1, 2, 3]:
            return lapsed(opened, held, f"the hosts hold {held}")
        for h in (a, b, c, d):
            h.draw(5000)

        refused = e.refused()
        if "value" in refused:
            # The host whose value it took claims another only once e's key is gone.
            e.kill()
            return lapsed([a, b, c, d], held, f"host e got worker={refused['value']} while four hosts held four")
        assert refused.get("error") == "LeaseError", refused
        assert "all 4 values of `worker` are leased" in refused["message"], refused["message"]

        # Every process of host a dies at once: nobody renews, nobody releases.
        a_key = next((k for k in lease_keys(redis) if k.endswith(f"worker={held['a']}")), None)
        if a_key is None:
            return lapsed([a, b, c, d], held, f"host a's key of worker={held['a']} lapsed before it was killed")
        a.kill()
        ttl_left = lease_keys(redis).get(a_key)
        assert ttl_left is not None and 0 < ttl_left <= TTL_MS, f"{a_key} lives on for at most the TTL: {ttl_left}"

        deadline = time.monotonic() + TTL_MS / 1000 + 60
        taken: Optional[dict[str, Any]] = None
        while taken is None:
            (reply,) = e.start(1)
            if "value" in reply:
                taken = reply
                break
            assert time.monotonic() < deadline, f"host e never got a value: {reply}"
            time.sleep(0.2)
        if taken["value"] != held["a"]:
            e.kill()
            return lapsed([b, c, d], held, f"host e took worker={taken['value']}, not host a's {held['a']}", dead=(a,))
        e.open(3)
        for h in (b, c, d, e):
            h.draw(5000)
        all_ids = [i for h in (a, b, c, d, e) for i in h.ids()]
        assert len(set(all_ids)) == len(all_ids) == 2 * 4 * 4 * 5000, "no ID repeats"
        by_value = {value_of(layout, i) for i in e.ids()}
        assert by_value == {held["a"]}
        return None
    finally:
        for h in (a, b, c, d, e):
            h.kill()


def test_a_host_lease_and_a_plain_shared_state_cannot_mix(redis: dict[str, Any], tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SNOWFLAKE_SHM_DIR", str(tmp_path))
    url = f"unix://{redis['unix_socket']}"
    # A claim whose IDs start ahead of the clock (its lease lapsed under a loaded machine's late
    # renewals and was claimed again: flaky.sh met it) is waited for by the library, for as
    # long as the claim takes, not refused after the default second: the premise is an ID.
    leased = patiently(lambda: sf.Generator(LAYOUT, shared="mix", lease=url, lease_ttl_ms=TTL_MS,
                                            max_wait_ms=10_000))
    with pytest.raises(sf.SharedMismatchError) as e:
        sf.Generator(LAYOUT, shared="mix", node={"worker": 0})
    # The host's state of these node values holds the host lease (or, when Redis gave it
    # worker=0, this process's lease holds them): either way the other generator is named.
    assert "host lease of `worker`" in str(e.value) or "holds a lease of worker=0" in str(e.value), str(e.value)
    # Its first ID may reserve time in Redis (flaky.sh met a Redis late to answer there).
    assert patiently(leased.next_id) > 0
    with pytest.raises(sf.ValueRangeError) as bad:
        sf.Generator(LAYOUT, shared="mix", lease="local")
    assert "lease=redis://" in str(bad.value)


def test_a_host_that_loses_its_lease_stops_claims_again_and_repeats_nothing(tmp_path: Path) -> None:
    with Servers("redis", dir=tmp_path) as s:
        url = f"unix://{s.info['redis']['unix_socket']}"
        h = Host("h", tmp_path, url)
        try:
            replies = h.open(3)
            (value,) = {r["value"] for r in replies}
            h.draw(5000)
            # Redis restarts empty: the key, its mark and every renewal are gone. Each process
            # finds its lease lost (a renewal or a reservation is refused, or its validity runs
            # out), stops, and the host claims again, starting past anything it may have issued.
            s.command("restart")
            time.sleep(TTL_MS / 1000)
            after = h.draw(5000)
            assert {r["value"] for r in after} == {value}, after
            assert max(r["claims"] for r in after) >= 2, f"the host claimed again: {after}"
            ids = h.ids()
            assert len(set(ids)) == len(ids) == 2 * 3 * 5000, "no ID repeats across the loss"
            assert len(lease_keys(s.info["redis"])) == 1
        finally:
            h.kill()
