"""A DAG run of alterflow_schema_change whose tasks run in a `python -c` process without the Spark
Connect dependencies the project pins (issue 35): `dag.test()` runs every task in that process, and
its worker task validates with Great Expectations, whose import of Spark Connect used to
`sys.exit(0)` there (pyspark takes a `-c` main module for its doctests). The run ends in success
and the job FINISHED."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from alterflow.engine.session import Session
from tests.support import child_pythonpath
from tests.support.dags import SCHEMA_CHANGE, alterflow_env, jobs, sql, versions

# `runpy.run_module` keeps the `-c` module as __main__, as Airflow's own entry points would not.
PROGRAM = """
import runpy, sys
sys.modules["zstandard"] = None  # as if it were not installed
sys.argv = ["dag_test_process", sys.argv[1], sys.argv[2]]
runpy.run_module("tests.support.dag_test_process", run_name="__main__")
"""


def test_a_small_tables_heavy_change_runs_in_a_python_c_worker_without_the_pinned_extras(monkeypatch, tmp_path, airflow_db):
    session = Session(alterflow_env(monkeypatch, tmp_path))
    sql(session, "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 2")
    sql(session, "INSERT INTO t VALUES (1, '10'), (2, '20'), (3, '30')")
    conf = {"table": "t", "statement": "ALTER TABLE t MODIFY COLUMN v INT"}
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, SCHEMA_CHANGE, json.dumps(conf)],
        env={**os.environ, "PYTHONPATH": child_pythonpath()},
        capture_output=True,
        text=True,
        timeout=600,
    )
    results = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert done.returncode == 0 and results, done.stdout[-3000:] + done.stderr[-3000:]
    result = json.loads(results[-1].removeprefix("RESULT "))
    assert result["state"] == "success" and result["tasks"]["validate"] == "success", result  # a small rewrite: in validate
    assert result["tasks"]["rewrite_in_worker"] == "skipped", result
    [job] = jobs(session, "t")
    assert job.state == "FINISHED" and versions(session, "t") == [1, 2]
    assert sql(session, "SELECT id, v FROM t ORDER BY id") == ((1, 10), (2, 20), (3, 30))
