"""WAITING_TXN (docs/heavyweight.md, "The steps"): a job waits for every transaction below its boundary; Msg names them;
a transaction past its timeout is aborted so no job waits forever. The catalog-only cases run on
SQLite and PostgreSQL."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest

import alterflow.load.local_load as load_module
from alterflow.catalog.catalog import NewFile
from alterflow.engine.session import Session
from alterflow.store.layout import absolute, data_file_path
from alterflow.workflow import heavy_steps
from tests.support.gc import delete_dropped_files
from tests.support.heavy_jobs import check, convert, job, show_job, sql, start, swap, txn_state, wait

TABLE = "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 2"
ALTER = "ALTER TABLE t MODIFY COLUMN v INT"


@pytest.fixture
def any_session(settings):
    """A session on the parametrised catalog (SQLite, PostgreSQL); these tests never start Spark."""
    s = Session(settings)
    sql(s, TABLE)
    sql(s, "INSERT INTO t VALUES (1, '1'), (2, '2')")
    return s


def look(session, job_id, now=None):
    return heavy_steps.wait_for_boundary(session.catalog, session.warehouse, job_id, now=now)


def test_an_open_transaction_below_the_boundary_keeps_the_job_waiting_until_it_aborts(any_session):
    s = any_session
    info = s.catalog.table("t")
    held = s.catalog.begin_transaction(info.id, "a slow load", 3600)
    other = s.catalog.begin_transaction(info.id, "another slow load", 3600)
    job_id = start(s, ALTER)
    boundary = job(s, job_id).boundary_txn
    assert held < other < boundary

    for _ in range(2):  # every look says the same, and changes nothing else
        assert look(s, job_id) == heavy_steps.BoundaryWait(done=False, blocking=(held, other))
        j = job(s, job_id)
        assert j.state == "WAITING_TXN"
        assert str(held) in j.msg and str(other) in j.msg and str(boundary) in j.msg, j.msg
        assert j.steps == ("validate", "start")
    shown = show_job(s, "t", job_id)
    assert shown["State"] == "WAITING_TXN" and str(held) in shown["Msg"]

    s.catalog.commit_transaction(other)  # no files: commits at once
    assert look(s, job_id) == heavy_steps.BoundaryWait(done=False, blocking=(held,))
    assert str(other) not in job(s, job_id).msg.split("(")[0]

    s.catalog.abort_transaction(held, "given up")
    assert look(s, job_id) == heavy_steps.BOUNDARY_REACHED
    j = job(s, job_id)
    assert (j.state, j.msg) == ("RUNNING", "") and j.steps[-1] == "wait_for_boundary"
    # A transaction begun after the boundary never blocks.
    later = s.catalog.begin_transaction(info.id, "after the boundary", 3600)
    assert later > boundary and look(s, job_id) == heavy_steps.BOUNDARY_REACHED


def test_a_transaction_past_its_timeout_is_aborted_so_the_job_does_not_wait_forever(any_session):
    s = any_session
    info = s.catalog.table("t")
    stuck = s.catalog.begin_transaction(info.id, "a crashed load", 60)
    # The crashed load had registered and written a file; after the abort GC deletes it.
    tablet = s.catalog.ensure_tablets(info.current_index_id, [("[]", 0)])[("[]", 0)]
    relative = data_file_path(info.id, info.current_index_id, tablet, stuck)
    s.catalog.register_files(stuck, [NewFile(tablet, 1, relative, 1, 0)])
    path = absolute(s.warehouse, relative)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"not really parquet")

    job_id = start(s, ALTER)
    (open_txn,) = s.catalog.blocking_transactions(info.id, job(s, job_id).boundary_txn)
    # The clock is moved instead of waited out: a second before its timeout the transaction blocks...
    assert look(s, job_id, now=open_txn.timeout_at - timedelta(seconds=1)).blocking == (stuck,)
    assert job(s, job_id).state == "WAITING_TXN" and txn_state(s, stuck) == "PREPARE" and path.exists()
    # ... and the first look past it aborts it.
    assert look(s, job_id, now=open_txn.timeout_at + timedelta(seconds=1)) == heavy_steps.BOUNDARY_REACHED
    assert txn_state(s, stuck) == "ABORTED"
    assert path.exists(), "deferred: GC deletes it after the retention"
    delete_dropped_files(s)
    assert not path.exists()
    assert job(s, job_id).state == "RUNNING"


@pytest.mark.spark
def test_a_load_that_began_before_the_job_is_waited_for_and_converted(session, spark, monkeypatch):
    """A real load, paused between registering its files and writing them, began below the
    boundary: the job waits for it (naming it), and its rows are part of the converted history."""
    sql(session, TABLE)
    sql(session, "INSERT INTO t VALUES (1, '1'), (2, '2')")
    paused, release = threading.Event(), threading.Event()
    real_write = load_module.write_parquet

    def slow_write(warehouse, relative, data):
        # The slow load's first file (its writer threads write them; no other load runs meanwhile).
        if not paused.is_set():
            paused.set()
            assert release.wait(60)
        return real_write(warehouse, relative, data)

    monkeypatch.setattr(load_module, "write_parquet", slow_write)
    errors = []

    def slow_load():
        try:
            sql(session, "INSERT INTO t VALUES (3, '3'), (4, '4')")
        except BaseException as exc:  # reported below
            errors.append(exc)

    loader = threading.Thread(target=slow_load, name="slow-load")
    loader.start()
    try:
        assert paused.wait(60)
        job_id = start(session, ALTER)
        result = look(session, job_id)
        assert result.done is False and len(result.blocking) == 1
        slow_txn = result.blocking[0]
        assert str(slow_txn) in job(session, job_id).msg
        assert txn_state(session, slow_txn) == "PREPARE"
    finally:
        release.set()
        loader.join(60)
    assert not errors, errors
    assert txn_state(session, slow_txn) == "COMMITTED"
    wait(session, job_id)
    assert convert(session, spark, job_id).rows == 4
    check(session, spark, job_id)
    assert swap(session, job_id).state == "FINISHED"
    assert sql(session, "SELECT id, v FROM t ORDER BY id") == ((1, 1), (2, 2), (3, 3), (4, 4))
