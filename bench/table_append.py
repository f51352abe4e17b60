"""Python API append benchmark (issue 25): `Table.append` of a 1,000,000-row Arrow table (already
typed: id BIGINT, grp INT, v STRING) into the issue 11 table
`(id BIGINT NOT NULL, grp INT, v STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 4`,
against `pq.write_table` of the same Arrow table to one Parquet file in the same process (the least
any writer of those rows does). Medians of interleaved runs, with an `os.sync()` between runs
(untimed); distinct keys per run.
Goal: ≥ 0.5× the baseline's throughput."""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from bench import ResultRow, fresh_home, markdown_table, median, rows_text, settings_for, verdict

TABLE = "CREATE TABLE t (id BIGINT NOT NULL, grp INT, v STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 4"
FULL = {"rows": 1_000_000, "runs": 5}
QUICK = {"rows": 20_000, "runs": 1}
GOAL = 0.5


def arrow_rows(start: int, count: int) -> pa.Table:
    ids = np.arange(start, start + count, dtype=np.int64)
    return pa.table({"id": ids, "grp": (ids % 7).astype(np.int32), "v": pa.array(np.char.add("v", ids.astype(str)))})


def run(quick: bool = False) -> list[ResultRow]:
    import alterflow

    sizes = QUICK if quick else FULL
    rows = sizes["rows"]
    with fresh_home("append") as home:
        settings = settings_for(home)
        with alterflow.connect(settings.catalog_url, settings.warehouse, env={"ALTERFLOW_HOME": str(home)}) as af:
            af.sql(TABLE)
            table = af.table("t")
            data = [arrow_rows(run * rows, rows) for run in range(sizes["runs"] + 1)]
            pq.write_table(data[0], home / "warm.parquet", compression="snappy")
            table.append(data[0])  # warm-up: imports, the first catalog writes
            baseline, ours = [], []
            for batch in data[1:]:  # interleaved, so both see the same machine
                started = time.perf_counter()
                pq.write_table(batch, home / "out.parquet", compression="snappy")
                baseline.append(time.perf_counter() - started)
                # The append fsyncs its files before its commit: on ext4 that also flushes the
                # baseline's dirty pages, which would be charged to it. Neither pays for the other.
                os.sync()
                started = time.perf_counter()
                result = table.append(batch)
                ours.append(time.perf_counter() - started)
                os.sync()
                assert result.rows == rows
            assert table.scan(columns=["id"]).to_arrow().num_rows == rows * (sizes["runs"] + 1)
    base, mine = median(baseline), median(ours)
    ratio = base / mine
    print(f"  pq.write_table {base:.2f} s, Table.append {mine:.2f} s ({rows / mine / 1e6:.2f} M rows/s); throughput ratio {ratio:.2f}")
    return [
        ResultRow(
            "Table.append (Python API)",
            f"{rows_text(rows)} Arrow table, PK, 4 buckets",
            f"{mine:.2f} s ({rows / mine / 1e6:.2f} M rows/s)",
            baseline=f"pq.write_table, same table: {base:.2f} s",
            ratio=f"{ratio:.2f} (throughput, ours/pyarrow)",
            goal=f"≥ {GOAL}×",
            met=verdict(ratio >= GOAL, quick),
            summary=f"Table.append, {rows_text(rows)}",
        )
    ]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m bench.table_append")
    parser.add_argument("--quick", action="store_true")
    print(markdown_table(run(quick=parser.parse_args().quick)))
