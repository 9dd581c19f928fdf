"""Two processes of one identity, started together, each printing IDs (tests/dist/platforms.sh).

    python3 two_processes.py <expect> <count> <command...> [-- <next's options...>]

Runs `<command...> next -n <count> <next's options...>` twice at once (a CLI: the command may
start with a runner such as wine), each writing to a file of its own, then checks what the
guarantee promises:

- every ID of the two is distinct (`expect` = `unique`), or some IDs repeat (`expect` =
  `repeats`: the control, which gives each process a host-state directory of its own,
  `$SNOWFLAKE_SHM_DIR-apart-<i>`, so that they share nothing: it shows the check can fail;
  a Windows path such as `Z:\\tmp\\x`, for Wine, is made as Wine's Z: drive, `/tmp/x`);
  `expect` = `leased` (options with a `lease=` across hosts): every ID distinct too, and
  each process issued with one node value (the `twitter` layout's datacenter and worker,
  bits 12 to 21) that differs from the other's, as leases of two values do;
- each process's IDs increase;
- the two issued at once: the times of their IDs (the `twitter` layout: the ID shifted right
  by 22 bits is the millisecond) overlap, so neither finished before the other began. A pair
  that did not is run again, up to 5 times; each is checked in full.

Prints "ok ..." and exits 0 when all hold.
"""

import subprocess
import sys
import tempfile
import os

ATTEMPTS = 5
expect, count, command = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
assert expect in ("unique", "repeats", "leased"), expect
command, options = (command[: command.index("--")], command[command.index("--") + 1 :]) if "--" in command else (command, [])


def run_pair() -> list[list[int]]:
    """Starts the two processes together; the IDs each printed."""
    with tempfile.TemporaryDirectory() as tmp:
        outs = [os.path.join(tmp, f"ids-{i}") for i in range(2)]
        procs = []
        for i, out in enumerate(outs):
            env = dict(os.environ)
            if expect == "repeats":
                env["SNOWFLAKE_SHM_DIR"] = apart = f"{os.environ['SNOWFLAKE_SHM_DIR']}-apart-{i}"
                os.makedirs(apart[2:].replace("\\", "/") if apart[1:3] == ":\\" else apart, exist_ok=True)
            with open(out, "wb") as f:
                procs.append(subprocess.Popen([*command, "next", "-n", str(count), *options],
                                              stdout=f, stderr=subprocess.STDOUT, env=env))
        codes = [p.wait() for p in procs]
        ids = []
        for out, code in zip(outs, codes):
            text = open(out, "rb").read().decode(errors="replace")
            lines = [line.strip() for line in text.splitlines() if line.strip()]
            if code != 0 or len(lines) != count or not all(line.isdigit() for line in lines):
                sys.exit(f"FAIL a process exited {code} with {len(lines)} lines: {text[:400]}")
            ids.append([int(line) for line in lines])
        return ids


# Every pair is checked in full. One whose times do not overlap (one process started late:
# under Wine, a lease's connection can take longer than the other's million IDs) checks
# nothing about issuing at once, so the pair runs again, up to ATTEMPTS times.
for attempt in range(1, ATTEMPTS + 1):
    ids = run_pair()
    spans = [(i[0] >> 22, i[-1] >> 22) for i in ids]
    increasing = all(all(a < b for a, b in zip(i, i[1:])) for i in ids)
    repeated = 2 * count - len(set(ids[0]) | set(ids[1]))
    overlap = min(spans[0][1], spans[1][1]) - max(spans[0][0], spans[1][0])
    print(f"attempt {attempt}: 2 processes x {count} IDs: {repeated} repeated; each increasing: {increasing}; "
          f"their times overlap for {overlap} ms (ms {spans[0]} and {spans[1]})")
    if not increasing:
        sys.exit("FAIL a process's IDs do not increase")
    if expect in ("unique", "leased") and repeated:
        sys.exit(f"FAIL {repeated} IDs repeated")
    if expect == "leased":
        nodes = [sorted({(i >> 12) & 0x3FF for i in process}) for process in ids]
        print(f"node values (datacenter << 5 | worker) of each process: {nodes[0]} and {nodes[1]}")
        if len(nodes[0]) != 1 or len(nodes[1]) != 1 or nodes[0] == nodes[1]:
            sys.exit("FAIL the two processes did not each hold a node value of its own")
    if overlap >= 0:
        break
else:
    sys.exit(f"FAIL the two processes did not issue at once in {ATTEMPTS} attempts (try more IDs)")
if expect == "repeats" and not repeated:
    sys.exit("FAIL the control repeated nothing: the check could not have failed")
print(f"ok {f'the control repeated {repeated} IDs' if expect == 'repeats' else 'no ID repeated'}"
      f"{', each with a leased value of its own' if expect == 'leased' else ''}")
