"""Small SELECTs through the CLI, whole process, as a user types them (issue 26): `SELECT * FROM t`
and a GROUP BY over a 1,000-row table, `alterflow sql -e ...` from start to exit (the local engine
under `engine` = `auto`), against a plain Python process that imports DuckDB and runs the same
query on the same Parquet files, printing the rows. Goal: at most 2×. Runs of ours and of the
baseline are interleaved; the first of each warms the file cache.
"""

from __future__ import annotations

import os
import pathlib
import sys
from decimal import Decimal

import numpy as np
import pyarrow as pa

from bench import ResultRow, fresh_home, median, rows_text, settings_for, timed_process, verdict

FULL = {"rows": 1_000, "runs": 5}
QUICK = {"rows": 1_000, "runs": 1}
GOAL = 2.0
TABLE = "CREATE TABLE t (id BIGINT NOT NULL, grp INT, v STRING, amount DECIMAL(10,2))"
QUERIES = {
    "SELECT *": ("SELECT * FROM t", "SELECT * FROM read_parquet({files})"),
    "GROUP BY": (
        "SELECT grp, count(*) AS n, sum(amount) AS total FROM t GROUP BY grp ORDER BY grp",
        "SELECT grp, count(*) AS n, sum(amount) AS total FROM read_parquet({files}) GROUP BY grp ORDER BY grp",
    ),
}
DUCKDB_QUERY = """
import sys, duckdb
for row in duckdb.sql(sys.argv[1]).fetchall():
    print(*row, sep=" | ")
"""


def _rows(count: int) -> pa.Table:
    ids = np.arange(count, dtype=np.int64)
    return pa.table(
        {
            "id": ids,
            "grp": (ids % 7).astype(np.int32),
            "v": pa.array((ids * 31).astype(str)),
            "amount": pa.array([Decimal(int(i) * 100 + 25).scaleb(-2) for i in ids], pa.decimal128(10, 2)),
        }
    )


def run(quick: bool = False) -> list[ResultRow]:
    from alterflow.cli.session import Session
    from alterflow.store.layout import absolute

    sizes = QUICK if quick else FULL
    runs, count = sizes["runs"], sizes["rows"]
    cli = str(pathlib.Path(sys.executable).parent / "alterflow")
    rows = []
    with fresh_home("query-cli") as home:
        session = Session(settings_for(home))
        list(session.run(TABLE))
        session.load("t", _rows(count), label="bench", by_name=True)
        files = [str(absolute(session.warehouse, f.path)) for f in session.catalog.snapshot("t").files]
        env = {k: v for k, v in os.environ.items() if not k.startswith("ALTERFLOW_")}
        env["ALTERFLOW_HOME"] = str(home)
        for case, (ours_sql, duckdb_sql) in QUERIES.items():
            engine, reason = session.execute(_parse(f"EXPLAIN {ours_sql}")).rows[0]
            assert engine == "local", reason
            plain_sql = duckdb_sql.format(files=repr(files))
            ours, plain = [], []
            for i in range(runs + 1):
                mine = timed_process([cli, "sql", "-e", ours_sql], env, quiet=True)
                base = timed_process([sys.executable, "-c", DUCKDB_QUERY, plain_sql], env, quiet=True)
                if i:
                    ours.append(mine), plain.append(base)
            ratio = median(ours) / median(plain)
            print(f"  {case}: {median(ours):.2f} s; DuckDB process {median(plain):.2f} s; ratio {ratio:.2f}")
            rows.append(
                ResultRow(
                    "query, CLI process",
                    f"{case} of {rows_text(count)}, engine auto (local)",
                    f"median {median(ours):.2f} s ({runs} runs)",
                    baseline=f"Python + DuckDB over the same Parquet files: {median(plain):.2f} s",
                    ratio=f"{ratio:.2f} (ours/plain)",
                    goal=f"≤ {GOAL:g}×",
                    reference="before issue 26: 10.4 s for the GROUP BY (≈ 75×, Spark)",
                    met=verdict(ratio <= GOAL, quick),
                )
            )
        session.catalog.engine.dispose()
    return rows


def _parse(sql: str):
    from alterflow import sql as ast

    return ast.parse_statements(sql)[0]


if __name__ == "__main__":
    for row in run("--quick" in sys.argv):
        print(row)
