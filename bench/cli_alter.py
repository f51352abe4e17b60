"""ALTERs through the CLI, whole process, as a user types them (issue 12):

1. A heavyweight ALTER of a 10,000-row table (`MODIFY COLUMN v BIGINT` of a STRING column; the
   local engine under `"engine" = "auto"`), `alterflow sql -e ...` from start to exit, against a
   plain pyarrow process that reads the same rows, casts the column and writes Parquet.
   Goal: at most 5×.
2. A lightweight ALTER (`ADD COLUMN`), `alterflow sql -e ...` from start to exit, against a plain
   Python process that imports SQLAlchemy and commits one row to SQLite. Goal: at most 2×.

Each run alters a table of its own (prepared beforehand), so every run does the same work; runs of
ours and of the baseline are interleaved.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import sys

import numpy as np
import pyarrow as pa

from bench import ResultRow, fresh_home, markdown_table, median, rows_text, settings_for, timed_process, verdict

FULL = {"rows": 10_000, "runs": 5}
QUICK = {"rows": 1_000, "runs": 1}
GOAL_HEAVY = 5.0
GOAL_LIGHT = 1.5  # the engine package must not make the CLI import more (docs/benchmarks.md)
TABLE = "CREATE TABLE {name} (id BIGINT NOT NULL, grp INT, v STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 4"

PYARROW_CONVERSION = """
import sys, pyarrow.parquet as pq, pyarrow.compute as pc
table = pq.read_table(sys.argv[1:-1])
table = table.set_column(table.schema.get_field_index("v"), "v", pc.cast(table["v"], "int64"))
pq.write_table(table, sys.argv[-1])
"""

SQLALCHEMY_COMMIT = """
import sys
from sqlalchemy import create_engine, text
engine = create_engine("sqlite:///" + sys.argv[1])
with engine.begin() as conn:
    conn.execute(text("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, v TEXT)"))
    conn.execute(text("INSERT INTO t (v) VALUES ('one row')"))
"""


def _rows(count: int) -> pa.Table:
    ids = np.arange(count, dtype=np.int64)
    return pa.table({"id": ids, "grp": (ids % 7).astype(np.int32), "v": pa.array(ids.astype(str))})


def run(quick: bool = False) -> list[ResultRow]:
    from alterflow.engine.session import Session
    from alterflow.store.layout import absolute

    sizes = QUICK if quick else FULL
    runs, count = sizes["runs"], sizes["rows"]
    cli = str(pathlib.Path(sys.executable).parent / "alterflow")
    with fresh_home("cli-alter") as home:
        session = Session(settings_for(home))
        for i in range(runs + 1):  # +1: a warm-up run of each (file cache)
            for kind in ("heavy", "light"):
                list(session.run(TABLE.format(name=f"{kind}{i}")))
                session.load(f"{kind}{i}", _rows(count), label="bench", by_name=True)
        env = {**os.environ, "ALTERFLOW_HOME": str(home)}
        env.pop("ALTERFLOW_CATALOG_URL", None)
        env.pop("ALTERFLOW_AIRFLOW_URL", None)
        files = [str(absolute(session.warehouse, f.path)) for f in session.catalog.snapshot("heavy0").files]
        heavy, pyarrow_s, light, sqlalchemy_s = [], [], [], []
        for i in range(runs + 1):
            ours = timed_process([cli, "sql", "-e", f"ALTER TABLE heavy{i} MODIFY COLUMN v BIGINT"], env)
            base = timed_process([sys.executable, "-c", PYARROW_CONVERSION, *files, str(home / f"out{i}.parquet")], env)
            ours_light = timed_process([cli, "sql", "-e", f"ALTER TABLE light{i} ADD COLUMN n INT"], env)
            base_light = timed_process([sys.executable, "-c", SQLALCHEMY_COMMIT, str(home / "plain.db")], env)
            if i:  # run 0 warms the file cache
                heavy.append(ours), pyarrow_s.append(base), light.append(ours_light), sqlalchemy_s.append(base_light)
        job = session.catalog.jobs(session.catalog.table("heavy1" if runs else "heavy0").id)[-1]
        assert job.state == "FINISHED" and job.kind == "HEAVY", job
    heavy_ratio = median(heavy) / median(pyarrow_s)
    light_ratio = median(light) / median(sqlalchemy_s)
    print(f"  heavy ALTER of {count} rows: {median(heavy):.2f} s; pyarrow process {median(pyarrow_s):.2f} s; ratio {heavy_ratio:.1f}")
    print(f"  light ALTER: {median(light):.2f} s; SQLAlchemy process {median(sqlalchemy_s):.2f} s; ratio {light_ratio:.1f}")
    return [
        ResultRow(
            "heavy ALTER, CLI process",
            f"{rows_text(count)}, MODIFY COLUMN v BIGINT (STRING), engine auto (local)",
            f"median {median(heavy):.2f} s ({runs} runs)",
            baseline=f"pyarrow process read+cast+write: {median(pyarrow_s):.2f} s",
            ratio=f"{heavy_ratio:.1f} (ours/pyarrow)",
            goal=f"≤ {GOAL_HEAVY:g}×",
            reference="before issue 12: 30.4 s (≈ 60×)",
            met=verdict(heavy_ratio <= GOAL_HEAVY, quick),
            summary=f"heavy ALTER, CLI, {rows_text(count)}",
        ),
        ResultRow(
            "light ALTER, CLI process",
            "ADD COLUMN, SQLite catalog",
            f"median {median(light):.2f} s ({runs} runs)",
            baseline=f"Python + SQLAlchemy committing one row: {median(sqlalchemy_s):.2f} s",
            ratio=f"{light_ratio:.1f} (ours/plain)",
            goal=f"≤ {GOAL_LIGHT:g}×",
            reference="before issue 12: 1.9 s (≈ 5×)",
            met=verdict(light_ratio <= GOAL_LIGHT, quick),
            summary="light ALTER, CLI",
        ),
    ]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (smoke test); no goal is judged")
    print(markdown_table(run(quick=parser.parse_args().quick)))
