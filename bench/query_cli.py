"""Small SELECTs through the CLI, whole process, as a user types them (issue 26): `SELECT * FROM t`
and a GROUP BY over a 1,000-row table, `alterflow sql -e ...` from start to exit (the local engine
under `engine` = `auto`), against a plain Python process that imports DuckDB and runs the same
query on the same Parquet files, printing the rows. Goal: at most 2×. Runs of ours and of the
baseline are interleaved; the first of each warms the file cache.

Issue 37 adds a primary-key table of 10,000 keys loaded several times (each later load replacing
a fifth of the keys), whose merge-on-read DuckDB now does inside the query: the same two queries,
against the same bare DuckDB process reading the same files (which merges nothing: the floor).
"""

from __future__ import annotations

import os
import pathlib
import sys
from decimal import Decimal

import numpy as np
import pyarrow as pa

from bench import ResultRow, fresh_home, median, rows_text, settings_for, timed_process, verdict

FULL = {"rows": 1_000, "keyed_rows": 10_000, "runs": 5}
QUICK = {"rows": 1_000, "keyed_rows": 10_000, "runs": 1}
KEYED_LOADS = 5  # the first loads every key, each later one replaces a fifth of them
GOAL = 2.0
TABLE = "CREATE TABLE t (id BIGINT NOT NULL, grp INT, v STRING, amount DECIMAL(10,2))"
KEYED = "CREATE TABLE k (id BIGINT NOT NULL, grp INT, v STRING, amount DECIMAL(10,2), PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 4"
QUERIES = {
    "SELECT *": ("SELECT * FROM {table}", "SELECT * FROM read_parquet({files})"),
    "GROUP BY": (
        "SELECT grp, count(*) AS n, sum(amount) AS total FROM {table} GROUP BY grp ORDER BY grp",
        "SELECT grp, count(*) AS n, sum(amount) AS total FROM read_parquet({files}) GROUP BY grp ORDER BY grp",
    ),
}
DUCKDB_QUERY = """
import sys, duckdb
for row in duckdb.sql(sys.argv[1]).fetchall():
    print(*row, sep=" | ")
"""


def _rows(count: int, ids: np.ndarray | None = None, load: int = 0) -> pa.Table:
    ids = np.arange(count, dtype=np.int64) if ids is None else ids
    return pa.table(
        {
            "id": ids,
            "grp": ((ids + load) % 7).astype(np.int32),
            "v": pa.array((ids * 31 + load).astype(str)),
            "amount": pa.array([Decimal(int(i) * 100 + 25 + load).scaleb(-2) for i in ids], pa.decimal128(10, 2)),
        }
    )


def run(quick: bool = False) -> list[ResultRow]:
    from alterflow.engine.session import Session
    from alterflow.store.layout import absolute

    sizes = QUICK if quick else FULL
    runs, count = sizes["runs"], sizes["rows"]
    cli = str(pathlib.Path(sys.executable).parent / "alterflow")
    rows = []
    with fresh_home("query-cli") as home:
        session = Session(settings_for(home))
        list(session.run(TABLE))
        session.load("t", _rows(count), label="bench", by_name=True)
        keyed = sizes["keyed_rows"]
        list(session.run(KEYED))
        session.load("k", _rows(keyed), label="bench keyed 0", by_name=True)
        picker = np.random.default_rng(37)
        for load in range(1, KEYED_LOADS):
            replaced = np.sort(picker.choice(keyed, keyed // 5, replace=False)).astype(np.int64)
            session.load("k", _rows(len(replaced), replaced, load), label=f"bench keyed {load}", by_name=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith("ALTERFLOW_")}
        env["ALTERFLOW_HOME"] = str(home)
        cases = [(table, n, case, sqls) for table, n in (("t", count), ("k", keyed)) for case, sqls in QUERIES.items()]
        for table, n, case, (ours_sql, duckdb_sql) in cases:
            ours_sql = ours_sql.format(table=table)
            engine, reason = session.execute(_parse(f"EXPLAIN {ours_sql}")).rows[0]
            assert engine == "local", reason
            snapshot = session.catalog.snapshot(table)
            files = [str(absolute(session.warehouse, f.path)) for f in snapshot.files]
            plain_sql = duckdb_sql.format(files=repr(files))
            ours, plain = [], []
            for i in range(runs + 1):
                mine = timed_process([cli, "sql", "-e", ours_sql], env, quiet=True)
                base = timed_process([sys.executable, "-c", DUCKDB_QUERY, plain_sql], env, quiet=True)
                if i:
                    ours.append(mine), plain.append(base)
            ratio = median(ours) / median(plain)
            what = f"{case} of {rows_text(n)}" + (f", primary key, {KEYED_LOADS} loads in {len(files)} files" if table == "k" else "")
            print(f"  {what}: {median(ours):.2f} s; DuckDB process {median(plain):.2f} s; ratio {ratio:.2f}")
            reference = (
                "before issue 37: GROUP BY 0.92 s against 0.23 s (3.9×, Arrow merge-on-read)"
                if table == "k"
                else "before issue 26: 10.4 s for the GROUP BY (≈ 75×, Spark)"
            )
            rows.append(
                ResultRow(
                    "query, CLI process",
                    f"{what}, engine auto (local)",
                    f"median {median(ours):.2f} s ({runs} runs)",
                    baseline=f"Python + DuckDB over the same Parquet files: {median(plain):.2f} s",
                    ratio=f"{ratio:.2f} (ours/plain)",
                    goal=f"≤ {GOAL:g}×",
                    reference=reference,
                    met=verdict(ratio <= GOAL, quick),
                    summary=f"query, CLI, {what.split(', ')[0]}",
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
