"""Beyond one process (DESIGN section 5) from Python: shared=, state_file=, lease=."""

from __future__ import annotations

import errno
import glob
import json
import multiprocessing as mp
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import libsnowflake as sf

LAYOUT = "twitter"


@pytest.fixture
def shared_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    # Shared states go to the test's directory (children of fork() inherit the variable).
    monkeypatch.setenv("SNOWFLAKE_SHM_DIR", str(tmp_path))
    yield f"pytest-{uuid.uuid4().hex[:8]}"
    assert glob.glob(str(tmp_path / "*.shm")), "the shared state lives in SNOWFLAKE_SHM_DIR"


def _draw_shared(name: str, n: int, out: Any) -> None:
    gen = sf.Generator(LAYOUT, {"datacenter": 9, "worker": 9}, shared=name)
    out.put(gen.next_ids(n))


def _draw_inherited(gen: sf.Generator, n: int, out: Any) -> None:
    out.put([gen.next_id() for _ in range(n)])


def test_shared_across_processes_and_fork(shared_name: str) -> None:
    ctx = mp.get_context("fork")
    gen = sf.Generator(LAYOUT, {"datacenter": 9, "worker": 9}, shared=shared_name)
    mine = gen.next_ids(1000)
    out = ctx.Queue()
    procs = [ctx.Process(target=_draw_shared, args=(shared_name, 30_000, out)) for _ in range(2)]
    # A shared generator keeps working in a child of fork(): that is what it is for.
    procs += [ctx.Process(target=_draw_inherited, args=(gen, 30_000, out)) for _ in range(2)]
    for p in procs:
        p.start()
    mine += gen.next_ids(30_000)
    batches = [out.get(timeout=60) for _ in procs]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    everything = mine + [x for b in batches for x in b]
    assert len(set(everything)) == len(everything) == 1000 + 30_000 * 5
    for b in [mine, *batches]:
        assert b == sorted(b)


def test_shared_mismatch_and_bad_names(shared_name: str) -> None:
    held = sf.Generator(LAYOUT, {"datacenter": 0, "worker": 1}, shared=shared_name)
    # A name is a label of the host's state of a layout and node values: other node values
    # under it are another state, and no name at all is the same state.
    other = sf.Generator(LAYOUT, {"datacenter": 0, "worker": 2}, shared=shared_name)
    same = sf.Generator(LAYOUT, {"datacenter": 0, "worker": 1})
    ids = [g.next_id() for _ in range(5_000) for g in (held, other, same)]
    assert len(set(ids)) == len(ids)
    # Only IDs of one identity compare: in one millisecond worker 2's are larger by
    # construction (issue 26: comparing with max(ids) over both failed once).
    worker1 = [i for i in ids if sf.Layout(LAYOUT).decode(i).fields["worker"] == 1]
    assert len(worker1) == 10_000
    # While it is used, another policy for it is refused, naming the difference and the fix.
    with pytest.raises(sf.SharedMismatchError, match="max_drift_ms=0, not 5") as e:
        sf.Generator(LAYOUT, {"datacenter": 0, "worker": 1}, max_drift_ms=5)
    assert isinstance(e.value, ValueError) and e.value.code == "ERR_SNOWFLAKE_SHARED_MISMATCH"
    assert "stop the others first" in str(e.value)
    del held, same
    # Once nothing uses it, a new policy takes it over, above its IDs (those of worker=1: the
    # guarantee is per identity, and worker=2's IDs of the same tick are larger).
    assert sf.Generator(LAYOUT, {"datacenter": 0, "worker": 1}, max_drift_ms=5).next_id() > max(worker1)
    for bad in ("a b", "", "x;y", ".hidden"):
        with pytest.raises(sf.ValueRangeError):
            sf.Generator(LAYOUT, shared=bad)
    with pytest.raises(sf.ValueRangeError, match=r"a host lease .* needs a store across hosts \(lease=redis://"):
        sf.Generator(LAYOUT, shared=shared_name, lease="local")
    with pytest.raises(TypeError):
        sf.Generator(LAYOUT, shared=3)  # type: ignore[arg-type]


def _lease_worker(shm_dir: str, n: int, out: Any) -> None:
    os.environ["SNOWFLAKE_SHM_DIR"] = shm_dir
    gen = sf.Generator(LAYOUT, {"datacenter": 2}, lease="local")
    out.put((gen.node["worker"], gen.next_ids(n)))


def test_lease_local_gives_each_process_its_own_worker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SNOWFLAKE_SHM_DIR", str(tmp_path))
    ctx = mp.get_context("fork")
    out = ctx.Queue()
    procs = [ctx.Process(target=_lease_worker, args=(str(tmp_path), 20_000, out)) for _ in range(4)]
    for p in procs:
        p.start()
    results = [out.get(timeout=60) for _ in procs]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    workers = [w for w, _ in results]
    everything = [x for _, ids in results for x in ids]
    # Processes may run one after the other and reuse a value a dead one released; the
    # IDs stay unique either way (the next holder starts above the last one's IDs).
    assert len(set(everything)) == len(everything)
    assert all(0 <= w < 32 for w in workers)
    # Held at once, leases are distinct.
    a = sf.Generator(LAYOUT, {"datacenter": 2}, lease="local")
    b = sf.Generator(LAYOUT, {"datacenter": 2}, lease="local")
    assert a.node["worker"] != b.node["worker"]
    with pytest.raises(sf.ValueRangeError):
        sf.Generator(LAYOUT, {"datacenter": 0, "worker": 3}, lease="local")  # leased field set


def test_lease_exhausted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SNOWFLAKE_SHM_DIR", str(tmp_path))
    layout = "time:41,worker:1,sequence:12;epoch=1288834974657"  # two worker values
    held = [sf.Generator(layout, lease="local") for _ in range(2)]
    assert {g.node["worker"] for g in held} == {0, 1}
    with pytest.raises(sf.LeaseError) as e:
        sf.Generator(layout, lease="local")
    assert e.value.code == "ERR_SNOWFLAKE_LEASE"


def test_state_file(tmp_path: Path) -> None:
    path = tmp_path / "ids.state"
    gen = sf.Generator(LAYOUT, {"datacenter": 0, "worker": 11}, state_file=path, state_window_ms=200)
    ids = gen.next_ids(10_000)
    assert ids == sorted(set(ids)) and path.exists()
    with pytest.raises(sf.ValueRangeError):
        sf.Generator(LAYOUT, {"datacenter": 0, "worker": 12}, state_file=tmp_path / "x.state", state_window_ms=0)


def test_a_state_file_path_may_hold_equals_signs_semicolons_and_spaces(tmp_path: Path) -> None:
    # Core takes the path as it is: the front ends no longer split or check option text.
    folder = tmp_path / "dir=with eq"
    folder.mkdir()
    path = folder / "ids;one.state"
    gen = sf.Generator(LAYOUT, {"datacenter": 0, "worker": 13}, state_file=path)
    gen.next_id()
    assert path.stat().st_size == 48
    as_text = sf.Generator(LAYOUT, {"datacenter": 0, "worker": 14}, state_file=str(folder / "two.state"))
    as_text.next_id()
    assert (folder / "two.state").exists()


def test_corrupt_state_file(tmp_path: Path) -> None:
    path = tmp_path / "ids.state"
    path.write_bytes(b"not a state file at all, and not empty either......")
    with pytest.raises(sf.StateFileError) as e:
        sf.Generator(LAYOUT, {"datacenter": 0, "worker": 13}, state_file=path)
    assert e.value.code == "ERR_SNOWFLAKE_STATE_FILE"


def test_unwritable_state_file_is_an_os_error(tmp_path: Path) -> None:
    not_a_dir = tmp_path / "a-file"
    not_a_dir.write_text("")
    with pytest.raises(sf.SnowflakeOSError) as e:
        sf.Generator(LAYOUT, {"datacenter": 0, "worker": 14}, state_file=not_a_dir / "ids.state")
    assert isinstance(e.value, OSError) and e.value.code == "ERR_SNOWFLAKE_IO"
    # As an OSError of the standard library: the errno and the file name, and what was done.
    assert e.value.errno == errno.ENOTDIR
    assert e.value.filename == str(not_a_dir / "ids.state")
    assert e.value.strerror and e.value.action


_OTHER_PROCESS = """
import json
import sys
import time
import libsnowflake as sf
kwargs = json.loads(sys.argv[1])
try:
    gen = sf.Generator("twitter", {"datacenter": 0, "worker": 21}, **kwargs)
    print(json.dumps({"ids": gen.next_ids(20_000)}))
except sf.SnowflakeError as e:
    print(json.dumps({"error": type(e).__name__, "message": str(e)}))
"""


def _other_process(**kwargs: Any) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-c", _OTHER_PROCESS, json.dumps(kwargs)],
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    )
    result: dict[str, Any] = json.loads(out.stdout)
    return result


def test_one_state_file_is_one_state_across_processes(tmp_path: Path, shared_name: str) -> None:
    # Issue 15, case 1: two processes with one identity and one state file, neither sharing a
    # state, each kept a state of its own under the file and repeated about half their IDs.
    # Now they share the host's state of their identity, and the state file with it...
    path = str(tmp_path / "ids.state")
    mine = sf.Generator(LAYOUT, {"datacenter": 0, "worker": 21}, state_file=path)
    ids = mine.next_ids(20_000)
    joined = _other_process(state_file=path)
    assert "ids" in joined, joined
    ids += joined["ids"] + mine.next_ids(20_000)
    assert len(set(ids)) == len(ids)
    del mine
    # ...while one that issues alone (process_only) holds the identity's record: another
    # process is refused meanwhile, by the host's arbiter, naming this one...
    alone = sf.Generator(LAYOUT, {"datacenter": 0, "worker": 21}, state_file=path, process_only=True)
    ids += alone.next_ids(20_000)
    for other in (_other_process(state_file=path, process_only=True), _other_process(state_file=path)):
        assert other.get("error") == "SharedMismatchError", other
        assert f"process {os.getpid()} of " in other["message"] and "process_only" in other["message"], other
    del alone
    # ...and goes on above it once it is gone.
    after = _other_process(state_file=path)
    assert "ids" in after, after
    assert min(after["ids"]) > max(ids)
    # Processes of one shared state use one state file together.
    both = str(tmp_path / "shared.state")
    ours = sf.Generator(LAYOUT, {"datacenter": 0, "worker": 21}, shared=shared_name, state_file=both)
    first = ours.next_ids(1000)
    theirs = _other_process(shared=shared_name, state_file=both)
    assert "ids" in theirs, theirs
    everything = first + theirs["ids"] + ours.next_ids(1000)
    assert len(set(everything)) == len(everything)


# --- Mixing kinds of generator for one identity (issue 13, step 2) ------------------------------
# Made safe (no repeat) or refused with a SharedMismatchError that names the other generator.

MIX_NODE = {"datacenter": 3, "worker": 7}


def _interleaved_repeats(a: sf.Generator, b: sf.Generator, n: int) -> int:
    ids = []
    for _ in range(n):
        ids.append(a.next_id())
        ids.append(b.next_id())
    return len(ids) - len(set(ids))


def test_mixing_plain_and_shared_in_one_process(shared_name: str) -> None:
    plain = sf.Generator(LAYOUT, MIX_NODE)
    shared = sf.Generator(LAYOUT, MIX_NODE, shared=shared_name)
    assert _interleaved_repeats(plain, shared, 20_000) == 0


_DRAW_AT_GO = """
import os, sys, time
import libsnowflake as sf
name, go, out = sys.argv[1:]
gen = sf.Generator("twitter", {"datacenter": 3, "worker": 7}, shared=name)
open(out + ".ready", "w").close()
while not os.path.exists(go):
    time.sleep(0.001)
ids = []
for _ in range(200):
    ids.extend(gen.next_ids(1000))
with open(out, "w") as f:
    f.write("\\n".join(map(str, ids)))
"""


def test_mixing_two_shared_names_in_one_process_and_in_two(shared_name: str, tmp_path: Path) -> None:
    one, two = shared_name + "-one", shared_name + "-two"
    a = sf.Generator(LAYOUT, MIX_NODE, shared=one)
    b = sf.Generator(LAYOUT, MIX_NODE, shared=two)
    assert _interleaved_repeats(a, b, 20_000) == 0
    del a, b
    # Two processes started independently, one name each, drawing at once from a barrier.
    go = tmp_path / "go"
    outs = [tmp_path / f"ids-{name}" for name in (one, two)]
    procs = [
        subprocess.Popen([sys.executable, "-c", _DRAW_AT_GO, name, str(go), str(out)])
        for name, out in zip((one, two), outs)
    ]
    try:
        for out in outs:
            for _ in range(6000):
                if Path(str(out) + ".ready").exists() or any(p.poll() is not None for p in procs):
                    break
                time.sleep(0.01)
        go.touch()
        for p in procs:
            assert p.wait(timeout=120) == 0
    finally:
        for p in procs:
            p.kill()
            p.wait()
    drawn = [[int(x) for x in out.read_text().split()] for out in outs]
    assert [len(ids) for ids in drawn] == [200_000, 200_000]
    everything = drawn[0] + drawn[1]
    assert len(set(everything)) == len(everything), f"{len(everything) - len(set(everything))} repeats"


def test_mixing_a_lease_and_a_plain_generator_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SNOWFLAKE_SHM_DIR", str(tmp_path))
    leased = sf.Generator(LAYOUT, {"datacenter": 3}, lease="local")
    v = leased.node["worker"]
    with pytest.raises(sf.SharedMismatchError, match="lease") as e:
        sf.Generator(LAYOUT, {"datacenter": 3, "worker": v})
    assert e.value.code == "ERR_SNOWFLAKE_SHARED_MISMATCH"
    leased.next_id()  # the refusal changed nothing


def test_mixing_process_only_and_plain_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SNOWFLAKE_SHM_DIR", str(tmp_path))
    own = sf.Generator(LAYOUT, MIX_NODE, process_only=True)
    with pytest.raises(sf.SharedMismatchError, match="process_only") as e:
        sf.Generator(LAYOUT, MIX_NODE)
    assert e.value.code == "ERR_SNOWFLAKE_SHARED_MISMATCH"
    own.next_id()
    del own
    plain = sf.Generator(LAYOUT, MIX_NODE)
    with pytest.raises(sf.SharedMismatchError):
        sf.Generator(LAYOUT, MIX_NODE, process_only=True)
    plain.next_id()
