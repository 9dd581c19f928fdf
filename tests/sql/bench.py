#!/usr/bin/env python3
"""IDs per second from `snowflake sql`'s PostgreSQL functions next to nextval() on a plain
sequence, in a throw-away server (the shared helpers' `Servers("postgres")`, tests/servers),
measured with pgbench. Figures only, never a pass/fail: the machine's load decides them.

    python3 tests/sql/bench.py [--seconds 5] [--layout twitter]
    SNOWFLAKE_CLI=/path/to/other/snowflake python3 tests/sql/bench.py   # another version's SQL

Rows: one ID per statement (a round trip each, as an INSERT ... DEFAULT does), and 1000 IDs
per statement (generate_series: the functions' own cost), from 1 and from 8 sessions.
"""

from __future__ import annotations

import argparse
import os
import re
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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--layout", default="twitter")
    args = ap.parse_args()
    sql = subprocess.run([cli(), "sql", "--layout", args.layout], capture_output=True, text=True, check=True).stdout
    with Servers("postgres") as servers:
        pg = servers.info["postgres"]
        psql(pg, sql)
        psql(pg, "CREATE SEQUENCE plain_seq")
        # The header's first signature line names the node parameters: `"P_next_id"("a", "b", max_drift_ms ...`.
        signature = next(line for line in sql.splitlines() if "max_drift_ms => 0, max_wait_ms" in line)
        n_nodes = signature.split("(", 1)[1].split("max_drift_ms")[0].count('"') // 2
        call = f"snowflake_next_id({', '.join(['1'] * n_nodes)})"
        version = psql(pg, "SHOW server_version").strip()
        print(f"PostgreSQL {version}, layout {args.layout}, {args.seconds:.0f} s a row, pgbench -M prepared")
        print(f"{'':38} {'1 session':>14} {'8 sessions':>14}")
        rows = [
            ("SELECT nextval('plain_seq')", 1),
            (f"SELECT {call}", 1),
            ("SELECT count(nextval('plain_seq')) FROM generate_series(1, 1000)", 1000),
            (f"SELECT count({call}) FROM generate_series(1, 1000)", 1000),
        ]
        for statement, per in rows:
            figures = [pgbench(pg, statement, c, args.seconds) * per for c in (1, 8)]
            label = ("nextval()" if "plain_seq" in statement else call.split("(")[0] + "()") + (
                "  x1000 a statement" if per > 1 else "  one a statement")
            print(f"{label:38} {figures[0]:>10,.0f} /s {figures[1]:>10,.0f} /s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
