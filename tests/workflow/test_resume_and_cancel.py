"""Kill and resume (docs/heavyweight.md, "The steps": a conversion killed and run again continues from the tablets already
done and never duplicates a row) and CANCEL in every state (the shadow index, the pending version
and their files are gone; the origin is untouched; a new ALTER is allowed)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time

import pyarrow as pa
import pytest

import alterflow.rewrite.tablet_conversion as tablet_conversion
from alterflow.catalog.catalog import Catalog
from alterflow.catalog.heavy_jobs import HeavyJobs, JobStateError
from alterflow.engine.session import StatementError
from alterflow.held_leases import process_group
from alterflow.rewrite.progress import count_text
from alterflow.rewrite.spark_submit import submit_command
from alterflow.workflow import heavy_steps
from alterflow.workflow.heavy_steps import JobCancelled
from tests.support.catalog_rows import txn_state
from tests.support.gc import delete_dropped_files
from tests.support.heavy_jobs import (
    check,
    convert,
    index_state,
    job,
    one_line,
    origin_state,
    parquet_files,
    shadow_dir,
    show_job,
    sql,
    start,
    subprocess_env,
    swap,
    to_validating,
    version_state,
    versions,
    wait,
)

pytestmark = pytest.mark.spark

TABLE = "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 4"
ALTER = "ALTER TABLE t MODIFY COLUMN v INT"
ROWS = tuple((k, str(k)) for k in range(1, 21))


def create(session):
    sql(session, TABLE)
    sql(session, "INSERT INTO t VALUES " + ", ".join(f"({k}, '{v}')" for k, v in ROWS))


def assert_cancelled(session, job_id: int, before: tuple, rows=ROWS, select=True) -> None:
    """The job is CANCELLED with a Msg; its shadow index, version and files are gone; the origin
    is exactly as it was; a new ALTER is allowed."""
    j = job(session, job_id)
    assert j.state == "CANCELLED" and j.msg and j.finished_at is not None
    shown = show_job(session, "t", job_id)
    assert shown["State"] == "CANCELLED" and shown["Msg"] == j.msg
    assert version_state(session, j.table_id, j.to_version) is None
    assert index_state(session, j.shadow_index_id) == "DROPPED"
    delete_dropped_files(session)  # deferred: GC deletes the shadow's files after the retention
    assert parquet_files(shadow_dir(session, j)) == [], "files left under the cancelled shadow index"
    assert session.catalog.index_snapshot(j.table_id, j.shadow_index_id, j.from_version).files == ()
    assert HeavyJobs(session.catalog).dual_write_target(j.table_id) is None
    assert origin_state(session, "t") == before
    assert versions(session, "t") == [1]
    if select:
        assert sql(session, "SELECT id, v FROM t ORDER BY id") == rows
    for step in (
        lambda: heavy_steps.wait_for_boundary(session.catalog, session.warehouse, job_id),
        lambda: heavy_steps.swap(session.catalog, session.warehouse, job_id),
    ):
        with pytest.raises(JobCancelled):
            step()
    with pytest.raises(StatementError) as err:
        sql(session, "RESUME ALTER TABLE COLUMN FROM t")
    assert "no unfinished job" in one_line(err.value)


# -- kill and resume ----------------------------------------------------------------------------
def _kill_midway(session, job_id: int, log_path) -> dict:
    """spark-submit the conversion (one tablet at a time) and SIGKILL its process group once a
    tablet is recorded converted. Returns the converted tablets seen after the kill."""
    heavy = HeavyJobs(session.catalog)
    # The application drives the job as part of this test's driver (as a DAG run's convert task does).
    command = submit_command(session.settings, job_id, "local[1]", parallelism=1, lease_group=process_group())
    with open(log_path, "w") as log:
        proc = subprocess.Popen(
            command,
            env=subprocess_env(),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 300
        while not heavy.converted(job_id):
            assert proc.poll() is None, f"spark-submit ended early: {log_path.read_text()[-3000:]}"
            assert time.monotonic() < deadline, "no tablet converted within 300 s"
            time.sleep(0.05)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(60)
    time.sleep(0.5)  # let the killed group's children go
    return heavy.converted(job_id)


def test_a_conversion_killed_midway_resumes_without_redoing_or_doubling(session, spark, tmp_path):
    sql(session, "CREATE TABLE t (id INT NOT NULL, v STRING) DISTRIBUTED BY HASH(id) BUCKETS 8")
    n = 4000
    session.load("t", pa.table({"id": pa.array(range(n), pa.int32()), "v": [str(k) for k in range(n)]}), "bulk", by_name=True)
    session.load("t", pa.table({"id": pa.array(range(n, 2 * n), pa.int32()), "v": [str(k) for k in range(n, 2 * n)]}), "bulk", by_name=True)
    origin_tablets = len(session.catalog.tablets(session.catalog.table("t").current_index_id))
    assert origin_tablets == 8

    for attempt in range(3):
        job_id = start(session, ALTER)
        wait(session, job_id)
        before_kill = _kill_midway(session, job_id, tmp_path / f"submit-{attempt}.log")
        if len(before_kill) < origin_tablets:
            break
        heavy_steps.cancel(session.catalog, session.warehouse, job_id, "the kill came too late; again")
    else:
        pytest.fail("the conversion finished every tablet before the kill three times")
    assert 1 <= len(before_kill) < origin_tablets
    assert job(session, job_id).state == "RUNNING"
    # Readers still see the origin, whole.
    assert sql(session, "SELECT count(*), count(DISTINCT id) FROM t") == ((2 * n, 2 * n),)

    result = convert(session, spark, job_id)
    assert result.tablets_done == result.tablets_total == origin_tablets and result.rows == 2 * n
    after = HeavyJobs(session.catalog).converted(job_id)
    assert set(after) == set(session.catalog.tablets(job(session, job_id).origin_index_id))
    for tablet, record in before_kill.items():  # not redone: same conversion transaction
        assert after[tablet].txn_id == record.txn_id and after[tablet].rows_out == record.rows_out
    rows = count_text(2 * n)  # a resumed runner's rate counts only the tablets it converted
    assert re.fullmatch(
        rf"tablets {origin_tablets}/{origin_tablets}, rows {rows}/{rows}, [0-9.]+ MB/s, ETA 0:00:00", job(session, job_id).progress
    )

    check(session, spark, job_id)
    assert swap(session, job_id).state == "FINISHED"
    assert sql(session, "SELECT count(*), count(DISTINCT id), sum(CASE WHEN v = id THEN 1 ELSE 0 END) FROM t") == ((2 * n, 2 * n, 2 * n),)


# -- cancel in each state -----------------------------------------------------------------------
def test_cancel_a_pending_job_then_a_new_alter_runs(session, spark):
    create(session)
    job_id = start(session, ALTER)
    sql(session, "INSERT INTO t VALUES (21, '21')")  # dual-written: a file in the shadow index
    j = job(session, job_id)
    assert parquet_files(shadow_dir(session, j))
    before = origin_state(session, "t")
    done = sql(session, "CANCEL ALTER TABLE COLUMN FROM t")
    assert done == f"CANCEL ALTER TABLE COLUMN FROM t: job {job_id} CANCELLED"
    assert job(session, job_id).msg == "cancelled by CANCEL ALTER TABLE COLUMN"
    assert_cancelled(session, job_id, before, ROWS + ((21, "21"),))
    with pytest.raises(StatementError) as err:
        sql(session, "CANCEL ALTER TABLE COLUMN FROM t")
    assert "no unfinished alter job" in one_line(err.value)

    # The same change again, to the end: its version is 2 (versions stay one apart).
    done = sql(session, ALTER)
    assert done.endswith("FINISHED, schema version 2"), done
    assert versions(session, "t") == [1, 2]
    assert sql(session, "SELECT id, v FROM t ORDER BY id") == tuple((k, k) for k in range(1, 22))


def test_cancel_a_job_waiting_for_transactions(session):
    create(session)
    info = session.catalog.table("t")
    held = session.catalog.begin_transaction(info.id, "a slow load", 3600)
    job_id = start(session, ALTER)
    assert heavy_steps.wait_for_boundary(session.catalog, session.warehouse, job_id).done is False
    assert job(session, job_id).state == "WAITING_TXN"
    before = origin_state(session, "t")
    sql(session, "CANCEL ALTER TABLE COLUMN FROM t")
    assert_cancelled(session, job_id, before, select=False)
    # The transaction it waited for is not the job's business: still open, and it can commit.
    assert txn_state(session, held) == "PREPARE"
    session.catalog.commit_transaction(held)
    assert "FINISHED" in sql(session, "ALTER TABLE t ADD COLUMN x INT")


def test_cancel_while_running_between_tablets(session, spark, monkeypatch):
    create(session)
    origin_tablets = len(session.catalog.tablets(session.catalog.table("t").current_index_id))
    assert origin_tablets == 4
    job_id = start(session, ALTER)
    wait(session, job_id)
    sql(session, "INSERT INTO t VALUES (21, '21')")
    before = origin_state(session, "t")
    real_commit = tablet_conversion.TabletConverter._commit_tablet
    commits = []

    def commit_then_cancel(self, *args, **kwargs):
        real_commit(self, *args, **kwargs)
        commits.append(True)
        if len(commits) == 1:
            sql(session, "CANCEL ALTER TABLE COLUMN FROM t")

    monkeypatch.setattr(tablet_conversion.TabletConverter, "_commit_tablet", commit_then_cancel)
    with pytest.raises(JobCancelled):
        convert(session, spark, job_id, parallelism=1)
    assert len(commits) == 1, "tablets kept converting after the cancel"
    assert_cancelled(session, job_id, before, ROWS + ((21, "21"),))
    assert "FINISHED" in sql(session, "ALTER TABLE t ADD COLUMN x INT")


def test_cancel_arriving_while_a_tablet_commits_leaves_no_file(session, spark, monkeypatch):
    """A CANCEL from another session lands after a tablet's files are registered and before they
    are moved into the shadow index: the tablet's commit fails, and its files must not stay."""
    create(session)
    job_id = start(session, ALTER)
    wait(session, job_id)
    before = origin_state(session, "t")
    real_register = Catalog.register_files
    cancelled = []

    def register_then_cancel(self, txn_id, files):
        real_register(self, txn_id, files)
        if not cancelled and txn_state(session, txn_id) == "PREPARE" and job(session, job_id).state == "RUNNING":
            cancelled.append(txn_id)
            heavy_steps.cancel(Catalog(session.settings.catalog_url), session.warehouse, job_id, "cancelled by another session")

    monkeypatch.setattr(Catalog, "register_files", register_then_cancel)
    with pytest.raises((JobCancelled, JobStateError)):
        convert(session, spark, job_id, parallelism=1)
    assert cancelled
    monkeypatch.undo()
    assert_cancelled(session, job_id, before)


def test_cancel_a_validating_job(session, spark):
    create(session)
    job_id = start(session, ALTER)
    to_validating(session, spark, job_id)
    j = job(session, job_id)
    assert j.state == "VALIDATING" and parquet_files(shadow_dir(session, j))
    before = origin_state(session, "t")
    sql(session, "CANCEL ALTER TABLE COLUMN FROM t")
    with pytest.raises(JobCancelled):
        check(session, spark, job_id)
    assert_cancelled(session, job_id, before)


def test_cancel_a_job_ready_to_swap(session, spark):
    create(session)
    done = sql(session, ALTER + ' PROPERTIES ("postpone_swap" = "true")')
    job_id = int(done.split("job ")[1].split()[0])
    assert job(session, job_id).state == "READY_TO_SWAP"
    sql(session, "INSERT INTO t VALUES (21, '21')")
    before = origin_state(session, "t")
    sql(session, "CANCEL ALTER TABLE COLUMN FROM t")
    assert_cancelled(session, job_id, before, ROWS + ((21, "21"),))
    assert "FINISHED" in sql(session, "ALTER TABLE t ADD COLUMN x INT")
