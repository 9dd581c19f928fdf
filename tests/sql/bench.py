#!/usr/bin/env python3
"""IDs per second from `snowflake sql`'s PostgreSQL functions next to nextval() on a plain
sequence, in a throw-away server (the shared helpers' `Servers("postgres")`, tests/servers),
measured with pgbench. Figures only, never a pass/fail: the machine's load decides them.

    python3 tests/sql/bench.py [--seconds 3] [--rounds 3] [--layout twitter]
    python3 tests/sql/bench.py --before /path/to/older/snowflake   # that version's SQL beside
    SNOWFLAKE_CLI=/path/to/other/snowflake python3 tests/sql/bench.py  # only another version's

Rows: one ID per statement (a round trip each, as an INSERT ... DEFAULT does), and 1000 IDs
per statement: P_next_id called 1000 times (generate_series: the function's own cost) and
P_next_ids(..., 1000) (one call), from 1 and from 8 sessions (`pgbench -c N -j min(N, 2)`).
Every row runs once per round, in turn, so that the load on a shared machine falls on all of
them alike; each figure is the median of the rounds, and each ratio the median of the
rounds' ratios to nextval() of the same round.
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

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "servers"))
from servers import Servers  # noqa: E402


def cli() -> str:
    """This checkout's `snowflake`, built in release; $SNOWFLAKE_CLI overrides it (to measure
    another version's SQL against this one's)."""
    if os.environ.get("SNOWFLAKE_CLI"):
        return os.environ["SNOWFLAKE_CLI"]
    cargo = os.environ.get("CARGO", "cargo")
    subprocess.run([cargo, "build", "-q", "--release", "-p", "snowflake-cli"], cwd=REPO, check=True)
    return str(REPO / "target" / "release" / "snowflake")


def libpq_env(pg: dict) -> dict[str, str]:
    return {**os.environ, "PGHOST": pg["socket_dir"], "PGPORT": str(pg["port"]), "PGUSER": pg["user"],
            "PGDATABASE": pg["database"]}


def psql(pg: dict, sql: str) -> str:
    return subprocess.run([os.path.join(pg["bin_dir"], "psql"), "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1"],
                          input=sql, env=libpq_env(pg), capture_output=True, text=True, check=True).stdout


def pgbench(pg: dict, script: str, clients: int, seconds: float) -> float:
    with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as f:
        f.write(script + "\n")
    try:
        r = subprocess.run([os.path.join(pg["bin_dir"], "pgbench"), "-n", "-M", "prepared", "-c", str(clients),
                            "-j", str(min(clients, 2)), "-T", str(max(1, round(seconds))), "-f", f.name],
                           env=libpq_env(pg), capture_output=True, text=True, check=True)
    finally:
        os.unlink(f.name)
    m = re.search(r"tps = ([0-9.]+)", r.stdout)
    if not m:
        raise RuntimeError(r.stdout + r.stderr)
    return float(m.group(1))


def install(pg: dict, binary: str, layout: str, schema: str) -> tuple[str, bool]:
    """Installs `binary`'s SQL under `schema`; returns the node arguments ("1, 1") and whether
    it has P_next_ids."""
    sql = subprocess.run([binary, "sql", "--layout", layout, "--prefix", f"{schema}.snowflake"],
                         capture_output=True, text=True, check=True).stdout
    psql(pg, f"CREATE SCHEMA {schema};\n{sql}")
    # The header's first signature line names the node parameters: `"P_next_id"("a", "b", max_drift_ms ...`.
    signature = next(line for line in sql.splitlines() if "max_drift_ms => 0, max_wait_ms" in line)
    n_nodes = signature.split("(", 1)[1].split("max_drift_ms")[0].count('"') // 2
    return ", ".join(["1"] * n_nodes), "_next_ids\"(" in sql


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=3.0, help="pgbench -T of each figure")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--layout", default="twitter")
    ap.add_argument("--before", help="another version's `snowflake`, whose SQL is measured beside this one's")
    args = ap.parse_args()
    with Servers("postgres") as servers:
        pg = servers.info["postgres"]
        psql(pg, "CREATE SEQUENCE plain_seq")
        versions = [("ours", cli())] + ([("before", args.before)] if args.before else [])
        # (label, statement, IDs a statement)
        rows: list[tuple[str, str, int]] = [("nextval()", "SELECT nextval('plain_seq')", 1)]
        for schema, binary in versions:
            nodes, _ = install(pg, binary, args.layout, schema)
            rows.append((f"{schema}: P_next_id()", f"SELECT {schema}.snowflake_next_id({nodes})", 1))
        rows.append(("nextval() x1000", "SELECT count(nextval('plain_seq')) FROM generate_series(1, 1000)", 1000))
        for schema, binary in versions:
            nodes, has_next_ids = install(pg, binary, args.layout, schema + "_many")
            rows.append((f"{schema}: P_next_id() x1000",
                         f"SELECT count({schema}_many.snowflake_next_id({nodes})) FROM generate_series(1, 1000)", 1000))
            if has_next_ids:
                rows.append((f"{schema}: P_next_ids(..., 1000)",
                             f"SELECT count(*) FROM {schema}_many.snowflake_next_ids({nodes}, 1000)", 1000))
        version = psql(pg, "SHOW server_version").strip()
        print(f"PostgreSQL {version}, layout {args.layout}, pgbench -M prepared -T {args.seconds:.0f}, "
              f"median of {args.rounds} rounds; ours: {versions[0][1]}"
              + (f"; before: {args.before}" if args.before else ""))
        clients = (1, 8)
        figures: dict[tuple[int, int], list[float]] = {}
        for _ in range(args.rounds):
            for c in clients:
                for i, (_, statement, per) in enumerate(rows):
                    figures.setdefault((i, c), []).append(pgbench(pg, statement, c, args.seconds) * per)
        print(f"{'':34} {'1 session':>13} {'x nextval':>9} {'8 sessions':>13} {'x nextval':>9}")
        base = 0
        for i, (label, _, per) in enumerate(rows):
            if label.startswith("nextval()"):
                base = i
            cells = []
            for c in clients:
                ratio = statistics.median(a / b for a, b in zip(figures[(i, c)], figures[(base, c)]))
                cells.append(f"{statistics.median(figures[(i, c)]):>10,.0f} /s {ratio:>8.2f}x")
            print(f"{label:34} {cells[0]} {cells[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
