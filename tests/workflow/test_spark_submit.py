"""The RUNNING step as its own Spark application (`spark_jobs/convert_history.py` through
spark-submit, the way the Airflow DAG runs it): on a standalone cluster (a master and a worker
started from the pyspark installation) and on local[2]. The embedded process then validates and
swaps: the result is the same as the in-process conversion."""

from __future__ import annotations

import json
import subprocess

import pytest

from alterflow.catalog.heavy_jobs import HeavyJobs
from tests.support.heavy_jobs import check, job, sql, start, swap, wait
from tests.support.spark_standalone import standalone_cluster
from tests.support.spark_submit import submit_conversion

pytestmark = pytest.mark.spark

SUBMIT_TIMEOUT = 600


@pytest.fixture(scope="module")
def standalone(tmp_path_factory):
    """A Spark standalone master and one worker (1 core, 1g) on 127.0.0.1; both process groups
    are killed at the end."""
    yield from standalone_cluster(tmp_path_factory.mktemp("standalone"))


def started_job(session) -> int:
    sql(session, "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 4")
    sql(session, "INSERT INTO t VALUES " + ", ".join(f"({k}, '{k}')" for k in range(1, 101)))
    sql(session, "INSERT INTO t VALUES (1, '1001'), (2, '1002')")  # upserts
    job_id = start(session, "ALTER TABLE t MODIFY COLUMN v BIGINT", engine="spark")  # the application converts with Spark
    sql(session, "INSERT INTO t VALUES (3, '1003'), (101, '101')")  # dual-written
    wait(session, job_id)
    return job_id


def expected_rows():
    rows = {k: k for k in range(1, 102)}
    rows.update({1: 1001, 2: 1002, 3: 1003})
    return tuple(sorted(rows.items()))


def assert_converted_and_swap(session, spark, job_id: int, completed: subprocess.CompletedProcess) -> None:
    assert completed.returncode == 0
    result = json.loads(completed.stdout.strip().splitlines()[-1])
    tablets = len(session.catalog.tablets(job(session, job_id).origin_index_id))
    assert result == {"tablets_total": tablets, "tablets_done": tablets, "rows": 100, "failed_casts": 0}
    j = job(session, job_id)
    # Progress counts the stored rows the conversion reads (100 + 2 upserts), as its total did
    # from the first moment of RUNNING; the result counts the 100 rows they merge into.
    assert j.state == "VALIDATING" and j.progress.startswith(f"tablets {tablets}/{tablets}, rows 102/102, "), j.progress
    assert set(HeavyJobs(session.catalog).converted(job_id)) == set(session.catalog.tablets(j.origin_index_id))
    check(session, spark, job_id)
    assert swap(session, job_id).state == "FINISHED"
    assert sql(session, "SELECT id, v FROM t ORDER BY id") == expected_rows()


def test_conversion_on_a_standalone_cluster(session, spark, standalone):
    job_id = started_job(session)
    completed = submit_conversion(session.settings, job_id, master=standalone["master"], timeout_s=SUBMIT_TIMEOUT)
    master_log = standalone["logs"]["master"].read_text(errors="replace")
    assert f"alterflow-convert-job-{job_id}" in master_log, master_log[-3000:]  # it ran on the cluster
    assert_converted_and_swap(session, spark, job_id, completed)


def test_conversion_through_spark_submit_on_local_2(session, spark):
    job_id = started_job(session)
    completed = submit_conversion(session.settings, job_id, master="local[2]", timeout_s=SUBMIT_TIMEOUT)
    assert_converted_and_swap(session, spark, job_id, completed)
