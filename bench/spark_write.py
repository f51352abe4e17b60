"""`alterflow.spark.write_table` (issue 25): a 20,000,000-row DataFrame written into the load
benchmarks' table `(id BIGINT NOT NULL, grp INT, v STRING, PRIMARY KEY (id)) DISTRIBUTED BY
HASH(id) BUCKETS 4` against a plain `df.write.parquet` of the same DataFrame on the same local[2]
session. Both compute the DataFrame (`spark.range` and two expressions) from scratch; ours also
moves its rows to Python workers as Arrow, converts and buckets them, writes each tablet's
files, and commits one transaction. Three runs of each, interleaved, after a warm-up; the medians
are compared. Goal: ≥ 0.8× the plain write's throughput.
"""

from __future__ import annotations

import argparse
import pathlib
import shutil
import time

from bench import ResultRow, fresh_home, markdown_table, median, rows_text, settings_for, verdict

TABLE = "CREATE TABLE t (id BIGINT NOT NULL, grp INT, v STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 4"
FULL = {"rows": 20_000_000, "runs": 3}
QUICK = {"rows": 100_000, "runs": 1}
GOAL = 0.8


def run(quick: bool = False) -> list[ResultRow]:
    import alterflow
    from alterflow.session import Session
    from alterflow.spark import write_table

    sizes = QUICK if quick else FULL
    rows = sizes["rows"]
    with fresh_home("spark-write") as home:
        session = Session(settings_for(home))
        spark = session.spark  # local[2], the process's session
        list(session.run(TABLE))
        from pyspark.sql import functions as F

        def frame(start: int, count: int):
            ids = spark.range(start, start + count)
            return ids.select("id", (F.col("id") % 7).cast("int").alias("grp"), F.concat(F.lit("v"), F.col("id").cast("string")).alias("v"))

        def plain(start: int, count: int) -> float:
            target = home / "plain"
            shutil.rmtree(target, ignore_errors=True)
            started = time.perf_counter()
            frame(start, count).write.parquet(str(target))
            return time.perf_counter() - started

        with alterflow.connect(catalog_url=session.settings.catalog_url, warehouse=session.settings.warehouse) as af:

            def ours(start: int, count: int) -> float:
                started = time.perf_counter()
                write_table(frame(start, count), "t", connection=af)
                return time.perf_counter() - started

            warm = max(1000, rows // 100)
            plain(-warm, warm)
            ours(-warm, warm)
            baseline, timed = [], []
            for run_number in range(sizes["runs"]):
                start = run_number * rows  # each write its own keys: every run adds rows, as a load does
                baseline.append(plain(start, rows))
                timed.append(ours(start, rows))
            loaded = af.sql("SELECT count(*) FROM t").rows[0][0]
            assert loaded == warm + rows * sizes["runs"], loaded
        files = _folder_bytes(home / "plain")
    ratio = median(baseline) / median(timed)
    print(
        f"  plain df.write.parquet median {median(baseline):.2f} s, write_table median {median(timed):.2f} s; "
        f"throughput ratio {ratio:.2f} (runs: plain {', '.join(f'{t:.2f}' for t in baseline)}; ours {', '.join(f'{t:.2f}' for t in timed)})"
    )
    return [
        ResultRow(
            "write_table (Spark, local[2])",
            f"{rows_text(rows)} DataFrame (spark.range, 3 columns), PK, 4 buckets",
            f"median {median(timed):.2f} s of {sizes['runs']} ({rows / median(timed) / 1e6:.2f} M rows/s)",
            baseline=f"plain df.write.parquet, same DataFrame: median {median(baseline):.2f} s ({files / 1e6:.0f} MB)",
            ratio=f"{ratio:.2f} (throughput, ours/plain)",
            goal=f"≥ {GOAL}×",
            met=verdict(ratio >= GOAL, quick),
        )
    ]


def _folder_bytes(folder: pathlib.Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*.parquet"))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (smoke test); no goal is judged")
    args = parser.parse_args()
    print(markdown_table(run(args.quick)))
