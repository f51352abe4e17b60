"""The RUNNING step as its own Spark application (`spark_jobs/convert_history.py` through
spark-submit, the way the Airflow DAG runs it): on a standalone cluster (a master and a worker
started from the pyspark installation) and on local[2]. The embedded process then validates and
swaps: the result is the same as the in-process conversion."""

from __future__ import annotations

import json
import os
import pathlib
import signal
import subprocess
import time

import pytest

from alterflow.catalog.heavy_jobs import HeavyJobs
from alterflow.rewrite.spark_submit import spark_submit_binary, submit_conversion
from tests.support.heavy_jobs import check, job, sql, start, subprocess_env, swap, wait
from tests.support.ports import free_port

pytestmark = pytest.mark.spark

SUBMIT_TIMEOUT = 600


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    proc.wait(30)


def _wait_for(path: pathlib.Path, text: str, procs, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while text not in path.read_text(errors="replace"):
        for p in procs:
            assert p.poll() is None, f"a Spark daemon exited: {path.read_text(errors='replace')[-3000:]}"
        assert time.monotonic() < deadline, f"no {text!r} in {path}: {path.read_text(errors='replace')[-3000:]}"
        time.sleep(0.2)


@pytest.fixture(scope="module")
def standalone(tmp_path_factory):
    """A Spark standalone master and one worker (1 core, 1g) on 127.0.0.1; both process groups
    are killed at the end."""
    spark_class = spark_submit_binary().with_name("spark-class")
    base = tmp_path_factory.mktemp("standalone")
    port = free_port()
    env = subprocess_env()
    env["SPARK_WORKER_DIR"] = str(base / "work")
    procs = []
    logs = {name: base / f"{name}.log" for name in ("master", "worker")}
    try:
        with open(logs["master"], "w") as log:
            procs.append(
                subprocess.Popen(
                    [
                        str(spark_class),
                        "org.apache.spark.deploy.master.Master",
                        "--host",
                        "127.0.0.1",
                        "--port",
                        str(port),
                        "--webui-port",
                        str(free_port()),
                    ],
                    env=env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            )
        _wait_for(logs["master"], "I have been elected leader", procs)
        with open(logs["worker"], "w") as log:
            procs.append(
                subprocess.Popen(
                    [
                        str(spark_class),
                        "org.apache.spark.deploy.worker.Worker",
                        f"spark://127.0.0.1:{port}",
                        "--cores",
                        "1",
                        "--memory",
                        "1g",
                        "--webui-port",
                        str(free_port()),
                        "--work-dir",
                        str(base / "work"),
                    ],
                    env=env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            )
        _wait_for(logs["master"], "Registering worker", procs)
        yield {"master": f"spark://127.0.0.1:{port}", "logs": logs}
    finally:
        for proc in reversed(procs):
            _stop(proc)


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
    assert swap(session, job_id) == {"state": "FINISHED"}
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
