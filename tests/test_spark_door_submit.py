"""`alterflow.spark` from a user's own PySpark job run with spark-submit (issue 25), the way a
pipeline runs it: its own session (another time zone, ANSI on, field-id reads off), the catalog
from the environment.

- SQLite catalog, standalone cluster (a master and a worker): the job writes 1,000,000 rows with
  write_table while a heavyweight ALTER (MODIFY COLUMN v STRING -> INT) is PENDING; this process
  then converts, validates and swaps; the job reads the table back with read_table: every row
  once, converted.
- PostgreSQL catalog, local[2]: examples/spark_write_during_alter.py with 200,000 rows (the same
  path on the other catalog, and the example kept working): its own ALTER, held before the swap.
- A write_table job killed with SIGKILL while its tasks write: nothing visible; once its lease
  expires GC aborts the transaction and removes what it staged; the table takes the write again.
"""

from __future__ import annotations

import json
import os
import pathlib
import signal
import subprocess
import time

import pytest
from pyspark.sql import functions as F

import alterflow
from alterflow.catalog.models import DataFileRow, TransactionRow
from alterflow.engine.session import Session
from alterflow.gc.gc_runner import run_gc
from alterflow.rewrite.spark_submit import spark_submit_binary
from alterflow.settings import Settings
from alterflow.spark import write_table
from tests.support import REPO
from tests.support.catalog_rows import txn_state
from tests.support.heavy_jobs import check, describe, job, sql, start, subprocess_env, swap, to_validating
from tests.support.process_signals import stop_outside_a_catalog_write
from tests.support.spark_standalone import standalone_cluster

pytestmark = pytest.mark.spark

JOB = REPO / "tests" / "support" / "spark_door_job.py"
EXAMPLE = REPO / "examples" / "spark_write_during_alter.py"
TABLE = "CREATE TABLE t (id BIGINT NOT NULL, v STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 4"
BEFORE = 1_000  # rows in the table before the job: ids 0.., v = the id as a string
ROWS = 1_000_000  # the write during the ALTER (SQLite, standalone cluster)
EXAMPLE_ROWS = 200_000  # the example's write (PostgreSQL, local[2])
KILLED_ROWS = 600_000
LEASE_S = 3.0
TIMEOUT = 300


@pytest.fixture(scope="module")
def standalone(tmp_path_factory):
    """A standalone master and one worker (2 cores, 1g) on 127.0.0.1."""
    yield from standalone_cluster(tmp_path_factory.mktemp("standalone"), cores=2)


def submit(script: pathlib.Path, args: list, master: str, env: dict, out: pathlib.Path) -> subprocess.Popen:
    """spark-submit of a Python file, in its own process group; stdout and stderr into `out`.*"""
    command = [str(spark_submit_binary()), "--master", master, "--conf", "spark.ui.enabled=false", str(script), *map(str, args)]
    with open(out.with_suffix(".out"), "w") as stdout, open(out.with_suffix(".err"), "w") as stderr:
        return subprocess.Popen(command, env=env, stdout=stdout, stderr=stderr, start_new_session=True)


def output(out: pathlib.Path) -> list[dict]:
    return [json.loads(line) for line in out.with_suffix(".out").read_text().splitlines() if line.startswith("{")]


def wait_until(proc: subprocess.Popen, ready, what: str, out: pathlib.Path):
    deadline = time.monotonic() + TIMEOUT
    while not (found := ready()):
        assert proc.poll() is None, f"the job ended before {what}: {out.with_suffix('.err').read_text()[-3000:]}"
        assert time.monotonic() < deadline, f"never saw {what}"
        time.sleep(0.05)
    return found


def finish(proc: subprocess.Popen, out: pathlib.Path) -> None:
    try:
        proc.wait(TIMEOUT)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(30)
    assert proc.returncode == 0, out.with_suffix(".err").read_text()[-3000:]


def v_sum(ids: range) -> int:
    return sum(i % 1000 for i in ids)


def test_a_users_job_writes_during_a_heavy_alter_and_reads_it_converted_after_the_swap(session, spark, standalone, tmp_path):
    sql(session, TABLE)
    sql(session, "INSERT INTO t VALUES " + ", ".join(f"({k}, '{k}')" for k in range(BEFORE)))
    job_id = start(session, "ALTER TABLE t MODIFY COLUMN v INT")  # PENDING: every load from now on dual-writes
    swapped, out = tmp_path / "swapped", tmp_path / "job"
    env = subprocess_env(session.settings.home)
    proc = submit(JOB, ["write-then-read", "t", BEFORE, ROWS, swapped], standalone["master"], env, out)
    try:
        written = wait_until(proc, lambda: output(out), "the write's line", out)[0]
        assert written["step"] == "written" and written["rows"] == ROWS
        assert job(session, job_id).state == "PENDING"  # the whole write landed between PENDING and the swap
        assert txn_state(session, written["txn"]) == "COMMITTED"

        to_validating(session, spark, job_id)  # converts what was committed below the boundary
        check(session, spark, job_id)
        assert swap(session, job_id).state == "FINISHED"
        swapped.touch()
        finish(proc, out)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    read = output(out)[-1]
    total = BEFORE + ROWS
    assert read == {
        "step": "read",
        "rows": total,
        "ids": total,
        "v_sum": v_sum(range(total)),
        "min_id": 0,
        "max_id": total - 1,
        "types": {"id": "bigint", "v": "int"},  # the new version's type, read by the job
        "time_zone": "America/New_York",  # the user's settings, as they set them
        "ansi": "true",
        "master": standalone["master"],
    }
    assert "user-job-write-then-read" in standalone["logs"]["master"].read_text(errors="replace")  # it ran on the cluster
    # This process sees the same table.
    assert describe(session, "t")["v"][0] == "INT"
    assert sql(session, "SELECT count(*), count(DISTINCT id), sum(v) FROM t") == ((total, total, v_sum(range(total))),)


@pytest.mark.postgres
def test_the_example_job_on_a_postgresql_catalog(pg_url, tmp_path, spark):
    home = tmp_path / "home"
    env = subprocess_env(home)
    env["ALTERFLOW_CATALOG_URL"] = pg_url
    out = tmp_path / "example"
    proc = submit(EXAMPLE, [EXAMPLE_ROWS], "local[2]", env, out)
    finish(proc, out)
    total = 1_000 + EXAMPLE_ROWS
    assert output(out)[-1] == {
        "job_state_during_write": "READY_TO_SWAP",
        "written": EXAMPLE_ROWS,
        "rows": total,
        "distinct_ids": total,
        "amount_type": "int",
        "amount_sum": v_sum(range(total)),
        "expected_amount_sum": v_sum(range(total)),
    }
    session = Session(Settings.from_env({"ALTERFLOW_HOME": str(home), "ALTERFLOW_CATALOG_URL": pg_url}))
    assert describe(session, "spark_write_demo")["amount"][0] == "INT"
    assert sql(session, "SELECT count(*), count(DISTINCT id), sum(amount) FROM spark_write_demo") == ((total, total, v_sum(range(total))),)


def write_txn(session: Session) -> int | None:
    with session.catalog.db_session() as s:
        return s.query(TransactionRow.id).filter(TransactionRow.label == "write_table t").scalar()


def staged_files(session: Session) -> list[pathlib.Path]:
    return sorted(session.warehouse.rglob("_load/l*/*.parquet"))


def test_a_killed_write_leaves_nothing_and_gc_removes_what_it_staged(session, spark, tmp_path):
    sql(session, TABLE)
    sql(session, "INSERT INTO t VALUES (-1, 'x'), (-2, 'y')")
    env = subprocess_env(session.settings.home)
    env.update(ALTERFLOW_LEASE_S=str(LEASE_S), ALTERFLOW_TARGET_FILE_MB="1")  # files roll while the tasks run
    out = tmp_path / "killed"
    proc = submit(JOB, ["write", "t", 0, KILLED_ROWS], "local[2]", env, out)
    try:
        wait_until(proc, lambda: staged_files(session), "a staged file", out)
        # frozen mid-task, outside a catalog write (a stop inside one locks SQLite for every reader): look, then kill
        stop_outside_a_catalog_write(proc.pid, session.settings.catalog_url)
        txn = write_txn(session)
        with session.catalog.db_session() as s:
            registered = s.query(DataFileRow).filter(DataFileRow.txn_id == txn).count()
        assert (txn_state(session, txn), registered) == ("PREPARE", 0), "the tasks were over before the kill"
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(60)
    assert staged_files(session)
    assert sql(session, "SELECT count(*) FROM t") == ((2,),)  # nothing of it visible

    time.sleep(LEASE_S + 0.5)  # its lease runs out: whoever looks first aborts it
    run_gc(session.catalog, session.warehouse, lambda: spark, 0)  # no retention: the dead write's files go now
    assert txn_state(session, txn) == "ABORTED"
    assert not staged_files(session) and not list(session.warehouse.rglob("_load/l*"))
    live = {f.path for f in session.catalog.snapshot("t").files}
    assert {str(p.relative_to(session.warehouse)) for p in session.warehouse.rglob("*.parquet")} == live

    # The same write again (in this process's session): every row once.
    frame = spark.range(0, KILLED_ROWS, 1, 4).select("id", (F.col("id") % 1000).cast("string").alias("v"))
    with alterflow.connect(env={"ALTERFLOW_HOME": str(session.settings.home)}) as af:
        assert write_table(frame, "t", connection=af).rows == KILLED_ROWS
    assert sql(session, "SELECT count(*), count(DISTINCT id), min(id), max(id) FROM t") == (
        (KILLED_ROWS + 2, KILLED_ROWS + 2, -2, KILLED_ROWS - 1),
    )
