"""Heavyweight change benchmarks (issue 3).

1. Conversion throughput: a 20,000,000-row, 4-column table whose STRING column becomes INT,
   converted by the RUNNING step (per-tablet Spark conversion, staging, per-tablet commits),
   against a plain Spark Parquet-to-Parquet copy of the same files in the same run.
   Goal: ≥ 0.8× the copy's rows/s.
2. Load latency during dual write: the same small loads with a job held in READY_TO_SWAP
   (every load also writes converted rows to the shadow index) and with no job. Goal: ≤ 2×.
"""

from __future__ import annotations

import argparse
import shutil
import time

import numpy as np
import pyarrow as pa

from bench import ResultRow, fresh_home, markdown_table, median, ms, rows_text, settings_for, verdict

FULL = {"rows": 20_000_000, "batch": 2_000_000, "loads": 30, "load_rows": 1_000}
QUICK = {"rows": 40_000, "batch": 20_000, "loads": 4, "load_rows": 100}
GOAL_THROUGHPUT = 0.8
GOAL_DUAL_WRITE = 2.0


def _batch(start: int, count: int) -> pa.Table:
    ids = np.arange(start, start + count, dtype=np.int64)
    return pa.table(
        {
            "id": pa.array(ids),
            "code": pa.array((ids % 100_000).astype(str)),
            "amount": pa.array((ids % 1000).astype(np.float64) / 8),
            "tag": pa.array(np.where(ids % 2 == 0, "even", "odd")),
        }
    )


def _table(session, name: str, rows: int, batch: int) -> None:
    list(session.run(f"CREATE TABLE {name} (id BIGINT NOT NULL, code STRING, amount DOUBLE, tag STRING)"))
    for start in range(0, rows, batch):
        session.load(name, _batch(start, min(batch, rows - start)), label="bench", by_name=True)


def conversion(sizes: dict, quick: bool, judged: bool | None = None) -> list[ResultRow]:
    from alterflow.engine.session import Session
    from alterflow.store.layout import absolute
    from alterflow.workflow import alter_steps, heavy_steps
    from alterflow.workflow.request import AlterRequest

    with fresh_home("convert") as home:
        session = Session(settings_for(home))
        spark = session.spark
        _table(session, "t", sizes["rows"], sizes["batch"])
        paths = [str(absolute(session.warehouse, f.path)) for f in session.catalog.snapshot("t").files]

        def copy() -> float:
            target = home / "copy"
            shutil.rmtree(target, ignore_errors=True)
            started = time.perf_counter()
            spark.read.parquet(*paths).write.mode("overwrite").parquet(str(target))
            return time.perf_counter() - started

        copy()  # warm-up: JIT, file cache
        copy_s = median([copy() for _ in range(2 if quick else 3)])

        def convert(table: str) -> tuple[float, heavy_steps.ConversionResult | heavy_steps.StepSkipped]:
            request = AlterRequest(table, f"ALTER TABLE {table} MODIFY COLUMN code INT", {"engine": "spark"})
            job_id = heavy_steps.start(session.catalog, request, alter_steps.validate(session.catalog, request)).job_id
            heavy_steps.wait_for_boundary(session.catalog, session.warehouse, job_id)
            started = time.perf_counter()
            result = heavy_steps.convert(spark, session.catalog, session.warehouse, job_id)
            return time.perf_counter() - started, result

        # Warm-up, as the copy had: the same conversion on a small table (JIT, code generation).
        _table(session, "warm", sizes["batch"] // 10, sizes["batch"] // 10)
        convert("warm")
        convert_s, result = convert("t")
        assert result.rows == sizes["rows"] and result.failed_casts == 0, result

    rows = sizes["rows"]
    ratio = copy_s / convert_s  # throughput ratio: conversion rows/s over copy rows/s
    print(
        f"  copy {copy_s:.2f} s ({rows / copy_s / 1e6:.2f} M rows/s); conversion {convert_s:.2f} s "
        f"({rows / convert_s / 1e6:.2f} M rows/s); throughput ratio {ratio:.2f}"
    )
    return [
        ResultRow(
            "heavy conversion",
            f"{rows_text(rows)}, 4 columns, STRING -> INT",
            f"{convert_s:.2f} s ({rows / convert_s / 1e6:.2f} M rows/s)",
            baseline=f"Spark Parquet copy: {copy_s:.2f} s ({rows / copy_s / 1e6:.2f} M rows/s)",
            ratio=f"{ratio:.2f} (conversion/copy throughput)",
            goal=f"≥ {GOAL_THROUGHPUT}×",
            reference="plain copy ≈ 2.3 M rows/s; Doris worst case ≈ 10 MB/s",
            met=verdict(ratio >= GOAL_THROUGHPUT, quick if judged is None else not judged),
            summary=f"heavy conversion, Spark, {rows_text(rows)}",
        )
    ]


def dual_write(sizes: dict, quick: bool) -> list[ResultRow]:
    from alterflow.engine.session import Session

    def timed_loads(session, start: int) -> list[float]:
        times = []
        for i in range(sizes["loads"]):
            data = _batch(start + i * sizes["load_rows"], sizes["load_rows"])
            began = time.perf_counter()
            session.load("t", data, label="bench", by_name=True)
            times.append(time.perf_counter() - began)
        return times

    with fresh_home("dual-write") as home:
        session = Session(settings_for(home))
        _table(session, "t", sizes["batch"], sizes["batch"])
        timed_loads(session, 10**9)  # warm-up
        plain = median(timed_loads(session, 2 * 10**9))
        list(session.run('ALTER TABLE t MODIFY COLUMN code INT PROPERTIES ("postpone_swap" = "true")'))
        assert session.catalog.active_job(session.catalog.table("t").id).state == "READY_TO_SWAP"
        dual = median(timed_loads(session, 3 * 10**9))
    ratio = dual / plain
    print(f"  load of {sizes['load_rows']} rows: p50 {ms(plain)} alone, {ms(dual)} while dual-writing; ratio {ratio:.2f}")
    return [
        ResultRow(
            "load during dual write",
            f"{sizes['loads']} loads of {rows_text(sizes['load_rows'])}",
            f"p50 {ms(dual)}",
            baseline=f"no job: p50 {ms(plain)}",
            ratio=f"{ratio:.2f} (dual/plain p50)",
            goal=f"≤ {GOAL_DUAL_WRITE}×",
            met=verdict(ratio <= GOAL_DUAL_WRITE, quick),
            summary=f"load during dual write, {sizes['loads']} loads",
        )
    ]


def run(quick: bool = False, rows: int | None = None, conversion_only: bool = False) -> list[ResultRow]:
    """Both benchmarks at FULL sizes (QUICK with `quick`); `rows` sets the conversion's row count
    (loaded in 10 batches; the goal is judged at the full count only)."""
    sizes = dict(QUICK if quick else FULL)
    if rows:
        sizes.update(rows=rows, batch=max(1, rows // 10))
    judged = not quick and sizes["rows"] == FULL["rows"]
    print(f"heavy conversion: {rows_text(sizes['rows'])}")
    results = conversion(sizes, quick, judged)
    if conversion_only:
        return results
    print(f"dual write: {sizes['loads']} loads of {rows_text(sizes['load_rows'])}")
    return results + dual_write(sizes, quick)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (smoke test); no goal is judged")
    parser.add_argument("--rows", type=int, help=f"rows to convert (default {FULL['rows']:,}); the goal is judged at the default only")
    parser.add_argument("--conversion-only", action="store_true", help="skip the dual-write benchmark")
    args = parser.parse_args()
    print(markdown_table(run(args.quick, args.rows, args.conversion_only)))
