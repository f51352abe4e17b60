"""Load benchmarks (issue 11), on the issue's table
`(id BIGINT NOT NULL, grp INT, v STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 4`:

1. Local load of a 1,000,000-row CSV (`--engine local`) against a plain pyarrow process step that
   reads the same CSV with the right types and writes one Parquet file. Goal: ≥ 0.5× its throughput;
   the same at 8,000,000 rows, goal ≥ 0.7× (issue 38).
2. The same 1M-row load while a heavyweight job dual-writes (MODIFY COLUMN grp SMALLINT, held in
   READY_TO_SWAP) against the same load into a table with no job, interleaved. Goal: ≤ 1.3×.
3. A 20,000,000-row CSV through Spark (`--engine spark`) against a plain Spark CSV→Parquet job
   (typed schema, no bucketing) on the same master. Goal: ≥ 0.8× its throughput.
4. Peak RSS of `alterflow load --engine local` of a 2 GB CSV, in its own process. Goal: < 1.5 GB.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import resource
import shutil
import subprocess
import sys
import time

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from bench import ResultRow, fresh_home, markdown_table, median, rows_text, settings_for, verdict

TABLE = "CREATE TABLE {name} (id BIGINT NOT NULL, grp INT, v STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 4"
FULL = {"rows": 1_000_000, "runs": 5, "big_rows": 8_000_000, "big_runs": 3, "spark_rows": 20_000_000, "rss_bytes": 2 << 30}
QUICK = {"rows": 20_000, "runs": 1, "big_rows": 40_000, "big_runs": 1, "spark_rows": 100_000, "rss_bytes": 20 << 20}
GOAL_LOCAL = 0.5
GOAL_LOCAL_BIG = 0.7  # issue 38: the write path uses both cores at 8M rows
GOAL_DUAL = 1.3
GOAL_SPARK = 0.8
GOAL_RSS_BYTES = 1.5 * (1 << 30)
CHUNK_ROWS = 1_000_000


def _chunk(start: int, count: int, wide: bool = False) -> pa.Table:
    ids = np.arange(start, start + count, dtype=np.int64)
    grp = (ids % 7).astype(str)
    if wide:  # about 90 bytes a row: fewer rows for the same file size
        v = np.char.add("a much longer value of sixty-four characters for the peak-memory ", ids.astype(str))
    else:
        v = np.char.add("v", ids.astype(str))
    return pa.table({"id": ids.astype(str), "grp": grp, "v": v})


def write_csv(path: pathlib.Path, rows: int | None = None, size: int | None = None, start: int = 0, wide: bool = False) -> int:
    """A CSV of `rows` rows (or of at least `size` bytes); returns its row count."""
    written = 0
    with pacsv.CSVWriter(path, _chunk(0, 1, wide).schema) as writer:
        while (rows is not None and written < rows) or (size is not None and path.stat().st_size < size):
            count = CHUNK_ROWS if rows is None else min(CHUNK_ROWS, rows - written)
            writer.write_table(_chunk(start + written, count, wide))
            written += count
    return written


def _pyarrow_step(csv: pathlib.Path, out: pathlib.Path) -> float:
    """The baseline: read the CSV with its types, write Parquet; nothing else."""
    started = time.perf_counter()
    types = {"id": pa.int64(), "grp": pa.int32(), "v": pa.string()}
    table = pacsv.read_csv(csv, convert_options=pacsv.ConvertOptions(column_types=types))
    pq.write_table(table, out, compression="snappy")
    return time.perf_counter() - started


def _timed_load(session, table: str, csv: pathlib.Path, engine: str) -> float:
    from alterflow.load.inputs import open_input

    started = time.perf_counter()
    session.load_input(table, open_input(csv), label="bench", engine=engine)
    return time.perf_counter() - started


def local_load(sizes: dict, quick: bool) -> list[ResultRow]:
    return [
        _local_load(sizes["rows"], sizes["runs"], GOAL_LOCAL, "before issue 11: 14.2 s (0.04×)", quick),
        _local_load(sizes["big_rows"], sizes["big_runs"], GOAL_LOCAL_BIG, "before issue 38: 0.52×", quick),
    ]


def _local_load(rows: int, runs: int, goal: float, reference: str, quick: bool) -> ResultRow:
    from alterflow.engine.session import Session

    with fresh_home("load") as home:
        session = Session(settings_for(home))
        csvs = []
        for run in range(runs + 1):  # distinct keys per run: each load adds rows
            csvs.append(home / f"in{run}.csv")
            write_csv(csvs[-1], rows, start=run * rows)
        list(session.run(TABLE.format(name="t")))
        _pyarrow_step(csvs[0], home / "warm.parquet")
        _timed_load(session, "t", csvs[0], "local")  # warm-up
        baseline = median([_pyarrow_step(csv, home / "out.parquet") for csv in csvs[1:]])
        ours = median([_timed_load(session, "t", csv, "local") for csv in csvs[1:]])
        mb = csvs[1].stat().st_size / 1e6
    ratio = baseline / ours
    print(
        f"  {rows_text(rows)}: pyarrow {baseline:.2f} s, alterflow load {ours:.2f} s ({rows / ours / 1e6:.2f} M rows/s); ratio {ratio:.2f}"
    )
    return ResultRow(
        "load (local engine)",
        f"{rows_text(rows)} CSV, {mb:.0f} MB, PK, 4 buckets",
        f"{ours:.2f} s ({rows / ours / 1e6:.2f} M rows/s)",
        baseline=f"pyarrow read+cast+write: {baseline:.2f} s",
        ratio=f"{ratio:.2f} (throughput, ours/pyarrow)",
        goal=f"≥ {goal}×",
        reference=reference,
        met=verdict(ratio >= goal, quick),
        summary=f"load, local engine, {rows_text(rows)}",
    )


def dual_write_load(sizes: dict, quick: bool) -> list[ResultRow]:
    from alterflow.engine.session import Session

    rows = sizes["rows"]
    with fresh_home("dual-load") as home:
        session = Session(settings_for(home))
        for name in ("plain", "dual"):
            list(session.run(TABLE.format(name=name)))
            list(session.run(f"INSERT INTO {name} VALUES (-1, 1, 'x')"))
        list(session.run('ALTER TABLE dual MODIFY COLUMN grp SMALLINT PROPERTIES ("postpone_swap" = "true")'))
        assert session.catalog.active_job(session.catalog.table("dual").id).state == "READY_TO_SWAP"
        csvs = []
        for run in range(sizes["runs"] + 1):
            csvs.append(home / f"in{run}.csv")
            write_csv(csvs[-1], rows, start=run * rows)
        _timed_load(session, "plain", csvs[0], "local")  # warm-up, both paths
        _timed_load(session, "dual", csvs[0], "local")
        plain, dual, plain_cpu, dual_cpu = [], [], [], []
        for csv in csvs[1:]:  # interleaved, so both see the same machine
            for name, walls, cpus in (("plain", plain, plain_cpu), ("dual", dual, dual_cpu)):
                before = _cpu_seconds()
                walls.append(_timed_load(session, name, csv, "local"))
                cpus.append(_cpu_seconds() - before)
    ratio = median(dual) / median(plain)
    cpu_ratio = median(dual_cpu) / median(plain_cpu)
    print(f"  no job {median(plain):.2f} s, dual write {median(dual):.2f} s; ratio {ratio:.2f}; CPU ratio {cpu_ratio:.2f}")
    return [
        ResultRow(
            "load during dual write",
            f"{rows_text(rows)} CSV, job MODIFY COLUMN grp SMALLINT in READY_TO_SWAP",
            f"median {median(dual):.2f} s; CPU {median(dual_cpu):.2f} s ({median(dual_cpu) / median(dual):.2f} cores)",
            baseline=f"no job: median {median(plain):.2f} s; CPU {median(plain_cpu):.2f} s ({median(plain_cpu) / median(plain):.2f} cores)",
            ratio=f"{ratio:.2f} (dual/plain); CPU {cpu_ratio:.2f}",
            goal=f"≤ {GOAL_DUAL}×",
            met=verdict(ratio <= GOAL_DUAL, quick),
            summary=f"CSV load during dual write, {rows_text(rows)}",
        )
    ]


def _cpu_seconds() -> float:
    """CPU time of this process, every thread (the load's reader and writers run here)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def spark_load(sizes: dict, quick: bool) -> list[ResultRow]:
    from alterflow.engine.session import Session

    rows = sizes["spark_rows"]
    with fresh_home("spark-load") as home:
        session = Session(settings_for(home))
        spark = session.spark
        csv, warm = home / "big.csv", home / "warm.csv"
        write_csv(csv, rows)
        write_csv(warm, max(1000, rows // 100), start=10**12)
        list(session.run(TABLE.format(name="t")))
        from pyspark.sql.types import IntegerType, LongType, StringType, StructField, StructType

        schema = StructType([StructField("id", LongType()), StructField("grp", IntegerType()), StructField("v", StringType())])

        def plain(path: pathlib.Path) -> float:
            target = home / "plain"
            shutil.rmtree(target, ignore_errors=True)
            started = time.perf_counter()
            spark.read.schema(schema).option("header", True).csv(str(path)).write.parquet(str(target))
            return time.perf_counter() - started

        plain(warm)
        _timed_load(session, "t", warm, "spark")
        baseline = plain(csv)
        ours = _timed_load(session, "t", csv, "spark")
        loaded = list(session.run("SELECT count(*) FROM t"))[0].rows[0][0]
        assert loaded == rows + max(1000, rows // 100), loaded
        mb = csv.stat().st_size / 1e6
    ratio = baseline / ours
    print(f"  plain Spark {baseline:.2f} s, alterflow load --engine spark {ours:.2f} s; throughput ratio {ratio:.2f}")
    return [
        ResultRow(
            "load (Spark engine, local[2])",
            f"{rows_text(rows)} CSV, {mb:.0f} MB, PK, 4 buckets",
            f"{ours:.2f} s ({rows / ours / 1e6:.2f} M rows/s)",
            baseline=f"plain Spark CSV→Parquet: {baseline:.2f} s",
            ratio=f"{ratio:.2f} (throughput, ours/plain)",
            goal=f"≥ {GOAL_SPARK}×",
            met=verdict(ratio >= GOAL_SPARK, quick),
            summary=f"load, Spark engine, {rows_text(rows)}",
        )
    ]


def peak_rss(sizes: dict, quick: bool) -> list[ResultRow]:
    with fresh_home("rss") as home:
        csv = home / "big.csv"
        rows = write_csv(csv, size=sizes["rss_bytes"], wide=True)
        env = dict(os.environ, ALTERFLOW_HOME=str(home / "home"))
        env.pop("ALTERFLOW_CATALOG_URL", None)
        env.pop("ALTERFLOW_WAREHOUSE", None)
        alterflow = [sys.executable, "-m", "alterflow.cli.command"]
        subprocess.run([*alterflow, "sql", "-e", TABLE.format(name="t")], env=env, check=True, capture_output=True)
        started = time.perf_counter()
        proc = subprocess.Popen([*alterflow, "load", "t", str(csv), "--engine", "local"], env=env, stdout=subprocess.PIPE)
        _pid, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - started
        output = proc.stdout.read().decode().strip()
        if os.waitstatus_to_exitcode(status) != 0:
            raise RuntimeError(f"alterflow load failed: {output}")
        size = csv.stat().st_size
    peak = usage.ru_maxrss * 1024  # kilobytes on Linux
    print(f"  {size / 2**30:.2f} GB, {rows:,} rows in {elapsed:.1f} s; peak RSS {peak / 2**20:.0f} MB ({output})")
    return [
        ResultRow(
            "load peak memory",
            f"{size / 2**30:.2f} GiB CSV, {rows_text(rows)}, `alterflow load --engine local`",
            f"peak RSS {peak / 2**20:,.0f} MiB; {elapsed:.1f} s",
            baseline=f"input {size / 2**20:,.0f} MiB",
            ratio=f"{peak / size:.2f} (RSS/input)",
            goal="< 1.5 GiB",
            met=verdict(peak < GOAL_RSS_BYTES, quick),
            summary=f"load peak memory, {size / 2**30:.1f} GiB CSV",
        )
    ]


def run(quick: bool = False, only: str | None = None) -> list[ResultRow]:
    sizes = QUICK if quick else FULL
    results = []
    for name, bench in (("local", local_load), ("dual", dual_write_load), ("rss", peak_rss), ("spark", spark_load)):
        if only in (None, name):
            print(f"load benchmark: {name}", flush=True)
            results += bench(sizes, quick)
    return results


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (smoke test); no goal is judged")
    parser.add_argument("--only", choices=("local", "dual", "rss", "spark"))
    args = parser.parse_args()
    print(markdown_table(run(args.quick, args.only)))
