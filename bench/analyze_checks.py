"""The validation checks of `migrate lint --analyze` / EXPLAIN ANALYZE (issue 36): what the NOT NULL
check adds to the cast analysis it sits beside.

A table of 1,000,000 rows (id BIGINT key, v STRING of digits with 1% NULL, n INT) in 4 buckets,
analysed on the local engine (`alterflow.rewrite.cast_analysis.analyze_local`, what the lint and
EXPLAIN ANALYZE run) for two statements on the same data:
- baseline: `MODIFY COLUMN v INT`, the cast analysis (v nullable: no NOT NULL check on it);
- measured: `MODIFY COLUMN v INT NOT NULL`, the same cast analysis plus the NOT NULL check of v,
  which finds the 10,000 NULLs with five samples and their keys.
Goal: at most 1.5× the baseline. Runs interleaved (each first every other run), median of 5.
"""

from __future__ import annotations

import argparse
import dataclasses
import time

import numpy as np
import pyarrow as pa

from bench import ResultRow, fresh_home, markdown_table, median, rows_text, settings_for, verdict

FULL = {"rows": 1_000_000, "runs": 5}
QUICK = {"rows": 20_000, "runs": 1}
GOAL = 1.5
NULL_EVERY = 100  # 1% of v is NULL
TABLE = "CREATE TABLE t (id BIGINT NOT NULL, v STRING, n INT, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 4"


def _rows(count: int) -> pa.Table:
    ids = np.arange(count, dtype=np.int64)
    texts = pa.array(ids.astype(str), mask=ids % NULL_EVERY == 0)
    return pa.table({"id": ids, "v": texts, "n": (ids % 7).astype(np.int32)})


def _retyped(old, nullable: bool):
    """The version `MODIFY COLUMN v INT [NOT NULL]` makes (what the planner gives: v retyped, its
    NULLability set; the same column id)."""
    from alterflow.values.types import parse_type

    columns = tuple(dataclasses.replace(c, type=parse_type("INT"), nullable=nullable) if c.name == "v" else c for c in old.columns)
    return dataclasses.replace(old, version=old.version + 1, columns=columns)


def run(quick: bool = False) -> list[ResultRow]:
    from alterflow.engine.session import Session
    from alterflow.rewrite.cast_analysis import analyze_local
    from alterflow.rewrite.validation_checks import CheckKind

    sizes = QUICK if quick else FULL
    count, runs = sizes["rows"], sizes["runs"]
    with fresh_home("analyze-checks") as home:
        session = Session(settings_for(home))
        list(session.run(TABLE))
        session.load("t", _rows(count), label="bench", by_name=True)
        snapshot = session.catalog.snapshot("t")
        old = snapshot.current
        statements = {"cast": _retyped(old, nullable=True), "not_null": _retyped(old, nullable=False)}
        times: dict[str, list[float]] = {"cast": [], "not_null": []}
        for i in range(runs + 1):  # run 0 warms the file cache
            for way in ("cast", "not_null") if i % 2 else ("not_null", "cast"):
                started = time.perf_counter()
                analysis = analyze_local(session.warehouse, snapshot, old, statements[way])
                elapsed = time.perf_counter() - started
                assert analysis.rows == count and sum(f.count for f in analysis.failures.values()) == 0, analysis
                nulls = [c.count for c in analysis.checks if c.check.kind is CheckKind.NOT_NULL and c.check.columns == ("v",)]
                assert nulls == ([count // NULL_EVERY + (count % NULL_EVERY > 0)] if way == "not_null" else []), nulls
                if i:
                    times[way].append(elapsed)
    cast, not_null = median(times["cast"]), median(times["not_null"])
    ratio = not_null / cast
    print(f"  analysis of {count} rows: cast alone {cast:.3f} s; with the NOT NULL check {not_null:.3f} s; ratio {ratio:.2f}")
    return [
        ResultRow(
            "lint --analyze, NOT NULL check",
            f"{count:,} rows, STRING -> INT NOT NULL with 1% NULL, local engine (analyze_local)",
            f"median {not_null:.3f} s ({runs} runs)",
            baseline=f"the cast analysis alone (-> INT, nullable): {cast:.3f} s",
            ratio=f"{ratio:.2f} (with NOT NULL / cast alone)",
            goal=f"≤ {GOAL:g}×",
            met=verdict(ratio <= GOAL, quick),
            summary=f"lint --analyze NOT NULL, {rows_text(count)}",
        )
    ]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (smoke test); no goal is judged")
    args = parser.parse_args()
    print(markdown_table(run(args.quick)))
