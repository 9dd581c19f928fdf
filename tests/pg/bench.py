#!/usr/bin/env python3
"""IDs per second from the extension `snowflake` beside nextval() and the PL/pgSQL functions of
`snowflake sql`, in one throw-away server (serve.py, shared_preload_libraries=snowflake),
measured with pgbench. Figures only, never a pass/fail: the machine's load decides them.

    python3 tests/pg/bench.py [--seconds 3] [--rounds 3]

Rows: one ID per statement (a round trip each, as an INSERT ... DEFAULT does) from 1 and from
8 sessions (`pgbench -M prepared -c N -j min(N, 2)`); then 1,000,000 IDs in one statement
(the mean latency of `pgbench -t`), with max_drift_ms => 1000 so that the twitter layout's
4,096 IDs a millisecond do not wait for the clock (1M of them are 244 ms of ticks). Every row
runs once per round, in turn, so that the load on a shared machine falls on all alike; each
figure is the median of the rounds, each ratio the median of the rounds' ratios to nextval().
The extension must be installed (dist/pg's .deb, as tests/pg/run.sh installs it, or
`cargo pgrx install`: docs/postgres.md).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import libsnowflake as sf

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "servers"))
from servers import Servers  # noqa: E402


def libpq_env(pg: dict) -> dict[str, str]:
    return {**os.environ, "PGHOST": pg["socket_dir"], "PGPORT": str(pg["port"]), "PGUSER": pg["user"],
            "PGDATABASE": pg["database"]}


def psql(pg: dict, sql: str) -> str:
    return subprocess.run([os.path.join(pg["bin_dir"], "psql"), "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1"],
                          input=sql, env=libpq_env(pg), capture_output=True, text=True, check=True).stdout


def pgbench(pg: dict, script: str, clients: int, how: list[str]) -> tuple[float, float]:
    """(transactions a second, mean latency in ms)."""
    with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as f:
        f.write(script + "\n")
    try:
        r = subprocess.run([os.path.join(pg["bin_dir"], "pgbench"), "-n", "-M", "prepared", "-c", str(clients),
                            "-j", str(min(clients, 2)), *how, "-f", f.name],
                           env=libpq_env(pg), capture_output=True, text=True, check=True)
    finally:
        os.unlink(f.name)
    tps = re.search(r"tps = ([0-9.]+)", r.stdout)
    latency = re.search(r"latency average = ([0-9.]+) ms", r.stdout)
    if not tps or not latency:
        raise RuntimeError(r.stdout + r.stderr)
    return float(tps.group(1)), float(latency.group(1))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=3.0, help="pgbench -T of each one-a-statement figure")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--million-runs", type=int, default=3, help="pgbench -t of each 1M-a-statement figure")
    args = ap.parse_args()
    with Servers("postgres", "--pg-config", "shared_preload_libraries=snowflake") as servers:
        pg = servers.info["postgres"]
        psql(pg, "CREATE SEQUENCE plain_seq; CREATE EXTENSION snowflake; CREATE SCHEMA plpgsql;\n"
             + sf.Layout("twitter").sql("postgres", prefix="plpgsql.snowflake"))
        one = [
            ("nextval()", "SELECT nextval('plain_seq')"),
            ("extension: snowflake_next_id(1, 1)", "SELECT snowflake_twitter.snowflake_next_id(1, 1)"),
            ("PL/pgSQL: snowflake_next_id(1, 1)", "SELECT plpgsql.snowflake_next_id(1, 2)"),
        ]
        million = [
            ("nextval() x1M", "SELECT count(nextval('plain_seq')) FROM generate_series(1, 1000000)"),
            ("extension: next_ids(1M) rows",
             "SELECT count(*) FROM snowflake_twitter.snowflake_next_ids(1, 3, 1000000, max_drift_ms => 1000)"),
            ("extension: next_ids_array(1M)",
             "SELECT cardinality(snowflake_twitter.snowflake_next_ids_array(1, 4, 1000000, max_drift_ms => 1000))"),
            ("PL/pgSQL: next_ids(1M) rows",
             "SELECT count(*) FROM plpgsql.snowflake_next_ids(1, 5, 1000000, max_drift_ms => 1000, max_wait_ms => 5000)"),
        ]
        version = psql(pg, "SHOW server_version").strip()
        load = os.getloadavg()
        print(f"PostgreSQL {version}, layout twitter, pgbench -M prepared, median of {args.rounds} rounds; "
              f"load average {load[0]:.1f} at the start (a shared 2-core machine)")
        clients = (1, 8)
        rates: dict[tuple[int, int], list[float]] = {}
        millis: dict[int, list[float]] = {}
        for _ in range(args.rounds):
            for c in clients:
                for i, (_, statement) in enumerate(one):
                    rates.setdefault((i, c), []).append(pgbench(pg, statement, c, ["-T", str(round(args.seconds))])[0])
            for i, (_, statement) in enumerate(million):
                millis.setdefault(i, []).append(pgbench(pg, statement, 1, ["-t", str(args.million_runs)])[1])
        print(f"{'one ID a statement':38} {'1 session':>13} {'x nextval':>9} {'8 sessions':>13} {'x nextval':>9}")
        for i, (label, _) in enumerate(one):
            cells = []
            for c in clients:
                ratio = statistics.median(a / b for a, b in zip(rates[(i, c)], rates[(0, c)]))
                cells.append(f"{statistics.median(rates[(i, c)]):>10,.0f} /s {ratio:>8.2f}x")
            print(f"{label:38} {cells[0]} {cells[1]}")
        print(f"{'1,000,000 IDs in one statement':38} {'ms':>13}")
        for i, (label, _) in enumerate(million):
            print(f"{label:38} {statistics.median(millis[i]):>13,.0f}")
        print(f"load average {os.getloadavg()[0]:.1f} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
