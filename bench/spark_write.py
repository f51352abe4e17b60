"""`alterflow.spark.write_table` (issue 25): a 20,000,000-row DataFrame written into the load
benchmarks' table `(id BIGINT NOT NULL, grp INT, v STRING, PRIMARY KEY (id)) DISTRIBUTED BY
HASH(id) BUCKETS 4` against a plain `df.write.parquet` of the same DataFrame on the same local[2]
session. Both compute the DataFrame (`spark.range` and two expressions) from scratch; ours also
moves its rows to Python workers as Arrow, converts and buckets them, writes each tablet's
files, and commits one transaction. Three runs of each, interleaved, after a warm-up; the medians
are compared. Goal: ≥ 0.8× the plain write's throughput. The CPU time of this process and every
process under it (Spark's JVM, its Python workers) is shown too: on a shared 2-core host other
processes inflate wall time, not CPU time.
"""

from __future__ import annotations

import argparse
import os
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
    from alterflow.engine.session import Session
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

        def plain(start: int, count: int) -> tuple[float, float]:
            target = home / "plain"
            shutil.rmtree(target, ignore_errors=True)
            started, cpu = time.perf_counter(), tree_cpu_seconds()
            frame(start, count).write.parquet(str(target))
            return time.perf_counter() - started, tree_cpu_seconds() - cpu

        with alterflow.connect(catalog_url=session.settings.catalog_url, warehouse=session.settings.warehouse) as af:

            def ours(start: int, count: int) -> tuple[float, float]:
                started, cpu = time.perf_counter(), tree_cpu_seconds()
                write_table(frame(start, count), "t", connection=af)
                return time.perf_counter() - started, tree_cpu_seconds() - cpu

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
    wall, cpu = median([t for t, _ in timed]), median([c for _, c in timed])
    plain_wall, plain_cpu = median([t for t, _ in baseline]), median([c for _, c in baseline])
    ratio = plain_wall / wall
    print(
        f"  plain df.write.parquet median {plain_wall:.2f} s (CPU {plain_cpu:.2f} s), write_table median {wall:.2f} s "
        f"(CPU {cpu:.2f} s); throughput ratio {ratio:.2f} (runs: plain {', '.join(f'{t:.2f}' for t, _ in baseline)}; "
        f"ours {', '.join(f'{t:.2f}' for t, _ in timed)})"
    )
    return [
        ResultRow(
            "write_table (Spark, local[2])",
            f"{rows_text(rows)} DataFrame (spark.range, 3 columns), PK, 4 buckets",
            f"median {wall:.2f} s of {sizes['runs']} ({rows / wall / 1e6:.2f} M rows/s); CPU {cpu:.2f} s",
            baseline=f"plain df.write.parquet, same DataFrame: median {plain_wall:.2f} s ({files / 1e6:.0f} MB); CPU {plain_cpu:.2f} s",
            ratio=f"{ratio:.2f} (throughput, ours/plain); CPU {plain_cpu / cpu:.2f}",
            goal=f"≥ {GOAL}×",
            met=verdict(ratio >= GOAL, quick),
            summary=f"write_table, Spark, {rows_text(rows)}",
        )
    ]


def tree_cpu_seconds() -> float:
    """CPU time (user + system) of this process and every live process under it (Linux /proc):
    Spark's JVM and its Python workers run the work, in processes this one never waits for."""
    tick = os.sysconf("SC_CLK_TCK")
    parents, cpu = {}, {}
    for stat in pathlib.Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:  # the process ended meanwhile
            continue
        fields = text[text.rindex(")") + 2 :].split()  # after "pid (command) "
        pid = int(stat.parent.name)
        parents[pid], cpu[pid] = int(fields[1]), (int(fields[11]) + int(fields[12])) / tick
    mine, total = {os.getpid()}, 0.0
    for pid in sorted(cpu, key=lambda p: _depth(p, parents)):
        if pid in mine or parents.get(pid) in mine:
            mine.add(pid)
            total += cpu[pid]
    return total


def _depth(pid: int, parents: dict[int, int]) -> int:
    depth = 0
    while pid in parents and depth < 64:
        pid, depth = parents[pid], depth + 1
    return depth


def _folder_bytes(folder: pathlib.Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*.parquet"))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (smoke test); no goal is judged")
    args = parser.parse_args()
    print(markdown_table(run(args.quick)))
