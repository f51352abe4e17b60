"""VALIDATING (docs/heavyweight.md, "The steps"): every expectation of the suite, made to fail. A failed expectation
cancels the job, Msg says what failed in the user's words (counts from the data, sample values
with their keys, never an expectation's name), and the origin keeps serving untouched. Failures
correct code cannot produce (row counts, key uniqueness, sort order) are provoked by tampering
with the conversion's record or its output."""

from __future__ import annotations

import dataclasses

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from alterflow.catalog.heavy_jobs import HeavyJobs
from alterflow.engine.session import StatementError
from alterflow.store.layout import absolute
from alterflow.workflow.heavy_steps import JobCancelled
from tests.support.gc import delete_dropped_files
from tests.support.heavy_jobs import (
    check,
    index_state,
    job,
    one_line,
    origin_state,
    parquet_files,
    shadow_dir,
    show_job,
    sql,
    start,
    to_validating,
    version_state,
    versions,
)

pytestmark = pytest.mark.spark


def assert_origin_serves(session, job_id: int, before: tuple, rows: tuple, table: str = "t") -> None:
    j = job(session, job_id)
    assert j.state == "CANCELLED" and j.msg.startswith("validation failed: ")
    assert "expect" not in j.msg and "alterflow_" not in j.msg, j.msg  # no expectation's or suite's name
    assert show_job(session, table, job_id)["Msg"] == j.msg
    assert version_state(session, j.table_id, j.to_version) is None
    assert index_state(session, j.shadow_index_id) == "DROPPED"
    delete_dropped_files(session)  # deferred: GC deletes the shadow's files after the retention
    assert parquet_files(shadow_dir(session, j)) == []
    assert origin_state(session, table) == before and versions(session, table) == [1]
    assert sql(session, f"SELECT * FROM {table} ORDER BY 1") == rows
    # ... and takes loads again, without dual write.
    assert HeavyJobs(session.catalog).dual_write_target(j.table_id) is None


def converted_files(session, job_id: int) -> list:
    j = job(session, job_id)
    txns = {t.txn_id for t in HeavyJobs(session.catalog).converted(job_id).values()}
    files = session.catalog.index_snapshot(j.table_id, j.shadow_index_id, j.to_version).files
    return [f for f in files if f.txn_id in txns]


def rewrite(session, relative: str, change) -> None:
    """Replace a converted file's rows by change(rows), keeping its schema (field ids)."""
    path = absolute(session.warehouse, relative)
    data = pq.read_table(path)
    pq.write_table(change(data).cast(data.schema), path)


def test_a_failed_cast_cancels_the_job_naming_the_column_and_value(session, spark):
    sql(session, "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id))")
    sql(session, "INSERT INTO t VALUES (1, '10'), (2, 'twenty'), (3, '30')")
    before = origin_state(session, "t")
    with pytest.raises(StatementError) as err:
        sql(session, "ALTER TABLE t MODIFY COLUMN v INT")
    message = one_line(err.value)
    job_id = session.catalog.jobs(session.catalog.table("t").id)[-1].id
    msg = job(session, job_id).msg
    assert msg in message
    assert msg == "validation failed: 1 of 3 values of v do not convert to INT, e.g. 'twenty' (id=2)", msg
    assert_origin_serves(session, job_id, before, ((1, "10"), (2, "twenty"), (3, "30")))


def test_null_to_not_null_with_a_null_present_names_a_sample_key(session, spark):
    sql(session, "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id))")
    sql(session, "INSERT INTO t VALUES (1, 'a'), (2, NULL), (3, 'c')")
    before = origin_state(session, "t")
    with pytest.raises(StatementError) as err:
        sql(session, "ALTER TABLE t MODIFY COLUMN v STRING NOT NULL")
    job_id = session.catalog.jobs(session.catalog.table("t").id)[-1].id
    msg = job(session, job_id).msg
    assert msg in one_line(err.value)
    assert msg == "validation failed: 1 of 3 rows would hold NULL in NOT NULL column v, e.g. (id=2)", msg
    assert_origin_serves(session, job_id, before, ((1, "a"), (2, None), (3, "c")))


def test_on_cast_error_null_succeeds_and_reports_how_many_became_null(session, spark):
    sql(session, "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 2")
    sql(session, "INSERT INTO t VALUES (1, '10'), (2, 'twenty'), (3, 'x'), (4, '40')")
    done = sql(session, 'ALTER TABLE t MODIFY COLUMN v INT PROPERTIES ("on_cast_error" = "null")')
    assert "FINISHED" in done, done
    j = session.catalog.jobs(session.catalog.table("t").id)[-1]
    assert j.msg.endswith("; 2 values that could not be converted became NULL"), j.msg
    assert sql(session, "SELECT id, v FROM t ORDER BY id") == ((1, 10), (2, None), (3, None), (4, 40))


def test_a_row_count_mismatch_cancels_the_job(session, spark, monkeypatch):
    sql(session, "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id))")
    sql(session, "INSERT INTO t VALUES (1, '1'), (2, '2')")
    before = origin_state(session, "t")
    job_id = start(session, "ALTER TABLE t MODIFY COLUMN v INT")
    real = HeavyJobs.record_converted

    def one_row_too_many(self, s, job_id_, tablet, **kwargs):
        return real(self, s, job_id_, dataclasses.replace(tablet, rows_out=tablet.rows_out + 1), **kwargs)

    monkeypatch.setattr(HeavyJobs, "record_converted", one_row_too_many)
    to_validating(session, spark, job_id)
    with pytest.raises(JobCancelled) as err:
        check(session, spark, job_id)
    msg = job(session, job_id).msg
    assert msg in one_line(err.value)
    assert msg == "validation failed: 1 of 1 origin tablets did not write or quarantine exactly the rows they read", msg
    assert_origin_serves(session, job_id, before, ((1, "1"), (2, "2")))


def test_a_duplicate_primary_key_in_the_converted_rows_cancels_the_job(session, spark):
    sql(session, "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id))")
    sql(session, "INSERT INTO t VALUES (1, '1'), (2, '2'), (3, '3')")
    before = origin_state(session, "t")
    job_id = start(session, "ALTER TABLE t MODIFY COLUMN v INT")
    to_validating(session, spark, job_id)
    target = next(f for f in converted_files(session, job_id) if f.row_count)
    rewrite(session, target.path, lambda data: pa.concat_tables([data, data.slice(0, 1)]))
    with pytest.raises(JobCancelled):
        check(session, spark, job_id)
    msg = job(session, job_id).msg
    assert msg.startswith("validation failed: 2 of 4 converted rows share their primary key (id) with another row, e.g. (id=1)"), msg
    assert_origin_serves(session, job_id, before, ((1, "1"), (2, "2"), (3, "3")))


def test_a_converted_file_out_of_sort_order_cancels_the_job(session, spark):
    sql(session, "CREATE TABLE t (id INT NOT NULL, v INT) ORDER BY (id)")
    sql(session, "INSERT INTO t VALUES " + ", ".join(f"({k}, {(k * 7) % 11})" for k in range(1, 11)))
    before = origin_state(session, "t")
    job_id = start(session, "ALTER TABLE t ORDER BY (v)")
    to_validating(session, spark, job_id)
    files = converted_files(session, job_id)
    for f in files:  # the conversion itself sorted every file
        values = pq.read_table(absolute(session.warehouse, f.path)).column("v").to_pylist()
        assert values == sorted(values)
    target = max(files, key=lambda f: f.row_count)
    assert target.row_count >= 2
    rewrite(session, target.path, lambda data: data.take(pa.array(range(data.num_rows - 1, -1, -1))))
    with pytest.raises(JobCancelled):
        check(session, spark, job_id)
    msg = job(session, job_id).msg
    assert msg.startswith("validation failed: 1 of ") and " converted files are not in (v) order, e.g. " + target.path in msg, msg
    assert_origin_serves(session, job_id, before, tuple((k, (k * 7) % 11) for k in range(1, 11)))
