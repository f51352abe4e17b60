"""A warehouse in object storage (issue 38), against a real S3-protocol server (moto's, as the
tests run it); both sides of every ratio use the same server.

1. `Table.append` of a 1,000,000-row Arrow table into a table of an `s3://` warehouse, against
   `pq.write_table` of the same rows to the same bucket through pyarrow's S3 file system.
   Goal: ≥ 0.5× the baseline's throughput.
2. A small SELECT through the CLI on an `s3://` warehouse, against a bare Python process that
   reads the same objects with pyarrow and runs the query in DuckDB. Goal: ≤ 2×.
4. What `alterflow load --engine auto` chooses on a bucket: an 8,000,000-row CSV loaded in process
   (the local engine, auto's choice there) against the same CSV through Spark (`local[2]`), into
   tables of the same bucket, interleaved. For context (no goal): the local engine should not be
   slower, or auto would choose wrong.
3. A heavyweight conversion (STRING -> INT) of 20,000,000 rows on Spark (`local[2]`) on an
   `s3://` warehouse, against a plain Spark job that copies the same files to another prefix of
   the same bucket by the same means (its rows pass through Spark, read and written through
   pyarrow in the tasks' Python workers: the pyspark wheel has no S3 connector). Goal: ≥ 0.8×
   the copy's rows/s.

Spark's Python workers take the store's address and credentials from the JVM's environment, so
this benchmark sets the AWS variables in its own environment before Spark starts (`python -m
bench` runs it before the first benchmark that starts Spark)."""

from __future__ import annotations

import argparse
import contextlib
import os
import pathlib
import sys
import time
from collections.abc import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from bench import ResultRow, fresh_home, markdown_table, median, rows_text, timed_process, verdict

FULL = {
    "append_rows": 1_000_000,
    "append_runs": 3,
    "query_rows": 1_000,
    "query_runs": 5,
    "convert_rows": 20_000_000,
    "batch": 2_000_000,
    "load_rows": 8_000_000,
    "load_runs": 2,
}
QUICK = {
    "append_rows": 20_000,
    "append_runs": 1,
    "query_rows": 1_000,
    "query_runs": 1,
    "convert_rows": 40_000,
    "batch": 20_000,
    "load_rows": 20_000,
    "load_runs": 1,
}
GOAL_APPEND, GOAL_QUERY, GOAL_CONVERT = 0.5, 2.0, 0.8
TABLE = "CREATE TABLE t (id BIGINT NOT NULL, grp INT, v STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 4"
QUERY = "SELECT grp, count(*) AS n, sum(id) AS s FROM t GROUP BY grp ORDER BY grp"

BARE_QUERY = """
import os, sys
import duckdb
import pyarrow.parquet as pq
from pyarrow import fs

endpoint = os.environ["AWS_ENDPOINT_URL"].split("://", 1)
s3 = fs.S3FileSystem(endpoint_override=endpoint[1], scheme=endpoint[0], region=os.environ["AWS_REGION"])
t = pq.ParquetDataset(sys.argv[2:], filesystem=s3).read()
print(duckdb.sql(sys.argv[1]).fetchall())
"""


def _rows(start: int, count: int) -> pa.Table:
    ids = np.arange(start, start + count, dtype=np.int64)
    return pa.table({"id": ids, "grp": (ids % 7).astype(np.int32), "v": pa.array(np.char.add("v", ids.astype(str)))})


@contextlib.contextmanager
def s3_server() -> Iterator[object]:
    """moto's server, with the AWS variables that reach it set in this process's environment (and
    so in Spark's, when Spark starts after this)."""
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
    from tests.support.s3_server import S3Server

    with fresh_home("s3-server") as folder:
        server = S3Server(folder / "moto.log").start()
        before = {name: os.environ.get(name) for name in server.env()}
        os.environ.update(server.env())
        try:
            yield server
        finally:
            for name, value in before.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
            server.stop()


def _connect(home: pathlib.Path, uri: str):
    import alterflow

    env = {**os.environ, "ALTERFLOW_HOME": str(home), "ALTERFLOW_SPARK_MASTER": "local[2]"}  # the AWS variables included
    return alterflow.connect(f"sqlite:///{home / 'catalog.db'}", uri, env=env)


def append(server, sizes: dict, quick: bool) -> ResultRow:
    rows, runs = sizes["append_rows"], sizes["append_runs"]
    s3 = server.filesystem()
    bucket = server.bucket()
    with fresh_home("s3-append") as home, _connect(home, f"s3://{bucket}/wh") as af:
        af.sql(TABLE)
        table = af.table("t")
        data = [_rows(run * rows, rows) for run in range(runs + 1)]
        pq.write_table(data[0], f"{bucket}/plain/warm.parquet", filesystem=s3, compression="snappy")
        table.append(data[0])  # warm-up: imports, the first catalog writes, the first connections
        baseline, ours = [], []
        for run, batch in enumerate(data[1:], 1):  # interleaved, so both see the same machine and server
            started = time.perf_counter()
            pq.write_table(batch, f"{bucket}/plain/{run}.parquet", filesystem=s3, compression="snappy")
            baseline.append(time.perf_counter() - started)
            started = time.perf_counter()
            assert table.append(batch).rows == rows
            ours.append(time.perf_counter() - started)
        assert table.scan(columns=["id"]).to_arrow().num_rows == rows * (runs + 1)
    base, mine = median(baseline), median(ours)
    ratio = base / mine
    print(f"  pq.write_table to S3 {base:.2f} s, Table.append to S3 {mine:.2f} s; throughput ratio {ratio:.2f}")
    return ResultRow(
        "object store: Table.append",
        f"{rows_text(rows)} Arrow table, PK, 4 buckets, s3:// (moto)",
        f"median {mine:.2f} s ({rows / mine / 1e6:.2f} M rows/s, {runs} runs)",
        baseline=f"pq.write_table to the same bucket: {base:.2f} s",
        ratio=f"{ratio:.2f} (throughput, ours/pyarrow)",
        goal=f"≥ {GOAL_APPEND}×",
        met=verdict(ratio >= GOAL_APPEND, quick),
        summary=f"S3: Table.append, {rows_text(rows)}",
    )


def query(server, sizes: dict, quick: bool) -> ResultRow:
    rows, runs = sizes["query_rows"], sizes["query_runs"]
    bucket = server.bucket()
    uri = f"s3://{bucket}/wh"
    cli = str(pathlib.Path(sys.executable).parent / "alterflow")
    with fresh_home("s3-query") as home:
        with _connect(home, uri) as af:
            af.sql(TABLE)
            af.table("t").append(_rows(0, rows))
            keys = [f"{bucket}/wh/{f.path}" for f in af.catalog.snapshot("t").files]
        env = {k: v for k, v in os.environ.items() if not k.startswith("ALTERFLOW_")}
        env.update(ALTERFLOW_HOME=str(home), ALTERFLOW_WAREHOUSE=uri)
        ours, plain = [], []
        for i in range(runs + 1):
            mine = timed_process([cli, "sql", "-e", QUERY], env, quiet=True)
            base = timed_process([sys.executable, "-c", BARE_QUERY, QUERY, *keys], env, quiet=True)
            if i:  # the first of each is a warm-up
                ours.append(mine), plain.append(base)
    ratio = median(ours) / median(plain)
    print(f"  CLI {median(ours):.2f} s; pyarrow + DuckDB process {median(plain):.2f} s; ratio {ratio:.2f}")
    return ResultRow(
        "object store: query, CLI process",
        f"GROUP BY of {rows_text(rows)} in {len(keys)} objects, s3:// (moto), engine auto (local)",
        f"median {median(ours):.2f} s ({runs} runs)",
        baseline=f"Python reading the objects with pyarrow, DuckDB querying them: {median(plain):.2f} s",
        ratio=f"{ratio:.2f} (ours/plain)",
        goal=f"≤ {GOAL_QUERY:g}×",
        met=verdict(ratio <= GOAL_QUERY, quick),
        summary=f"S3: query, CLI, {rows_text(rows)}",
    )


def _task_filesystem():
    """pyarrow's S3 file system of the plain copy's tasks, from the AWS variables they inherit."""
    from pyarrow import fs

    endpoint = os.environ["AWS_ENDPOINT_URL"].split("://", 1)
    return fs.S3FileSystem(endpoint_override=endpoint[1], scheme=endpoint[0], region=os.environ.get("AWS_REGION"))


def _read_files(batches, keys: list[str]):
    """The plain copy's reading task: its objects' rows, read with pyarrow, as Arrow batches."""
    s3 = _task_filesystem()
    for batch in batches:
        for position in batch.column(0).to_pylist():
            yield from pq.read_table(keys[position], filesystem=s3).to_batches(max_chunksize=32768)


def _write_files(batches, target: str):
    """The plain copy's writing task: its rows as one object, written with pyarrow."""
    import uuid

    s3 = _task_filesystem()
    data = pa.Table.from_batches(list(batches))
    if data.num_rows:
        pq.write_table(data, f"{target}/{uuid.uuid4().hex}.parquet", filesystem=s3, compression="snappy")
    yield pa.RecordBatch.from_pydict({"rows": [data.num_rows]})


def _bucket_session(server, home: pathlib.Path, bucket: str):
    """An embedded session (Spark `local[2]`) whose warehouse is `s3://<bucket>/wh` on `server`."""
    from alterflow.engine.session import Session
    from alterflow.settings import Settings

    env = {"ALTERFLOW_HOME": str(home), "ALTERFLOW_SPARK_MASTER": "local[2]", "ALTERFLOW_WAREHOUSE": f"s3://{bucket}/wh"}
    return Session(Settings.from_env({**env, **server.env()}))


def conversion(server, sizes: dict, quick: bool) -> ResultRow:
    import functools

    from alterflow.workflow import alter_steps, heavy_steps
    from alterflow.workflow.request import AlterRequest
    from bench.heavy_alter import _batch

    rows, batch = sizes["convert_rows"], sizes["batch"]
    bucket = server.bucket()
    with fresh_home("s3-convert") as home:
        session = _bucket_session(server, home, bucket)
        spark = session.spark

        def table(name: str, count: int) -> None:
            list(session.run(f"CREATE TABLE {name} (id BIGINT NOT NULL, code STRING, amount DOUBLE, tag STRING)"))
            for start in range(0, count, batch):
                session.load(name, _batch(start, min(batch, count - start)), label="bench", by_name=True)

        table("t", rows)
        keys = [f"{bucket}/wh/{f.path}" for f in session.catalog.snapshot("t").files]

        schema = "id long, code string, amount double, tag string"

        def copy(run: int) -> float:
            """Rows through Spark, as the conversion's: read by pyarrow in the tasks, written by pyarrow."""
            started = time.perf_counter()
            frame = spark.range(0, len(keys), 1, len(keys)).mapInArrow(functools.partial(_read_files, keys=keys), schema)
            written = frame.mapInArrow(functools.partial(_write_files, target=f"{bucket}/copy{run}"), "rows long")
            copied = written.groupBy().sum("rows").first()[0]
            assert copied == rows, copied
            return time.perf_counter() - started

        def convert(name: str) -> float:
            request = AlterRequest(name, f"ALTER TABLE {name} MODIFY COLUMN code INT", {"engine": "spark"})
            job_id = heavy_steps.start(
                session.catalog, request, alter_steps.validate(session.catalog, request, warehouse=session.warehouse)
            ).job_id
            heavy_steps.wait_for_boundary(session.catalog, session.warehouse, job_id)
            started = time.perf_counter()
            result = heavy_steps.convert(spark, session.catalog, session.warehouse, job_id)
            elapsed = time.perf_counter() - started
            assert result.rows == (rows if name == "t" else batch // 10) and result.failed_casts == 0, result
            return elapsed

        copy(0)  # warm-up: the workers, the first connections
        copy_s = median([copy(run) for run in range(1, 2 if quick else 3)])
        table("warm", batch // 10)
        convert("warm")  # warm-up, as the copy had
        convert_s = convert("t")
        session.catalog.engine.dispose()
    ratio = copy_s / convert_s
    print(f"  copy {copy_s:.2f} s; conversion {convert_s:.2f} s ({rows / convert_s / 1e6:.2f} M rows/s); throughput ratio {ratio:.2f}")
    return ResultRow(
        "object store: heavy conversion (Spark local[2])",
        f"{rows_text(rows)}, 4 columns, STRING -> INT, s3:// (moto)",
        f"{convert_s:.2f} s ({rows / convert_s / 1e6:.2f} M rows/s)",
        baseline=f"Spark copy of the same rows, read and written through pyarrow: {copy_s:.2f} s ({rows / copy_s / 1e6:.2f} M rows/s)",
        ratio=f"{ratio:.2f} (conversion/copy throughput)",
        goal=f"≥ {GOAL_CONVERT}×",
        met=verdict(ratio >= GOAL_CONVERT, quick),
        summary=f"S3: heavy conversion, {rows_text(rows)}",
    )


def load_engines(server, sizes: dict, quick: bool) -> ResultRow:
    from alterflow.load.inputs import open_input
    from bench.load_throughput import TABLE as LOAD_TABLE
    from bench.load_throughput import write_csv

    rows, runs = sizes["load_rows"], sizes["load_runs"]
    bucket = server.bucket()
    with fresh_home("s3-load") as home:
        session = _bucket_session(server, home, bucket)
        csvs = [home / f"in{run}.csv" for run in range(runs + 1)]
        for run, csv in enumerate(csvs):  # distinct keys per run: each load adds rows
            write_csv(csv, rows, start=run * rows)
        timings: dict[str, list[float]] = {"local": [], "spark": []}
        for engine in timings:
            list(session.run(LOAD_TABLE.format(name=engine)))
            session.load_input(engine, open_input(csvs[0]), label="bench", engine=engine)  # warm-up (Spark's start)
        for csv in csvs[1:]:
            for engine, seconds in timings.items():  # interleaved: both see the same machine and server
                started = time.perf_counter()
                session.load_input(engine, open_input(csv), label="bench", engine=engine)
                seconds.append(time.perf_counter() - started)
        for engine in timings:
            assert sum(f.row_count for f in session.catalog.snapshot(engine).files) == rows * (runs + 1), engine
        session.catalog.engine.dispose()
    server.drop(bucket)  # moto keeps objects in memory: the tables' 16M rows go
    local_s, spark_s = median(timings["local"]), median(timings["spark"])
    ratio = spark_s / local_s
    print(f"  load to S3: local engine {local_s:.2f} s, Spark engine {spark_s:.2f} s; Spark/local time {ratio:.2f}")
    return ResultRow(
        "object store: load, engine auto",
        f"{rows_text(rows)} CSV, PK, 4 buckets, s3:// (moto)",
        f"local engine (auto's choice): median {local_s:.2f} s ({rows / local_s / 1e6:.2f} M rows/s)",
        baseline=f"--engine spark (local[2]): {spark_s:.2f} s",
        ratio=f"{ratio:.2f} (Spark/local time)",
        goal="— (context: auto keeps a bucket's loads in process)",
        met="—",
        summary=f"S3: load, {rows_text(rows)}",
    )


def run(quick: bool = False) -> list[ResultRow]:
    sizes = QUICK if quick else FULL
    with s3_server() as server:
        return [
            append(server, sizes, quick),
            query(server, sizes, quick),
            conversion(server, sizes, quick),
            load_engines(server, sizes, quick),
        ]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m bench.object_store")
    parser.add_argument("--quick", action="store_true")
    print(markdown_table(run(quick=parser.parse_args().quick)))
