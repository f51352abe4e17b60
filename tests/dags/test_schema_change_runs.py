"""`dag.test()` runs of alterflow_schema_change with real tasks: a light change commits, a heavy
change runs every step (spark-submit of the conversion, Great Expectations, swap), and a small
table's heavy change converts in the worker, with no spark-submit and no SparkSession."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time

import pytest

from alterflow.airflow import tasks as task_bodies
from alterflow.airflow.operators import ConvertHistoryOperator
from alterflow.catalog.alter_turns import AlterTurns
from alterflow.engine.session import Session
from tests.support import child_pythonpath
from tests.support.dags import SCHEMA_CHANGE, LoadAbortedOnceWaitedFor, alterflow_env, jobs, load_dag, run_dag, sql, versions
from tests.support.niceness import NicenessNotes, thread_niceness

pytestmark = pytest.mark.spark

TABLE = "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 2"
ROWS = "INSERT INTO t VALUES (1, '10'), (2, '20'), (3, '30')"


@pytest.fixture
def alterflow(monkeypatch, tmp_path, airflow_db, spark):
    settings = alterflow_env(monkeypatch, tmp_path)
    session = Session(settings)
    sql(session, TABLE)
    sql(session, ROWS)
    return session


def test_light_change_commits_in_the_first_task_and_the_rest_is_skipped(alterflow):
    dag = load_dag(SCHEMA_CHANGE)
    state, tasks, run = run_dag(dag, {"table": "t", "statement": "ALTER TABLE t ADD COLUMN n INT DEFAULT 7"})
    assert state == "success", tasks
    assert tasks["validate"] == "success", tasks
    assert all(state == "skipped" for task_id, state in tasks.items() if task_id != "validate"), tasks
    assert versions(alterflow, "t") == [1, 2]
    [job] = jobs(alterflow, "t")
    assert job.kind == "LIGHT" and job.state == "FINISHED" and job.request_id == run.run_id
    validate = run.get_task_instance("validate")
    assert validate.xcom_pull(task_ids="validate")["request_id"] == run.run_id
    assert validate.xcom_pull(task_ids="validate", key="job")["id"] == job.id
    assert sql(alterflow, "SELECT id, v, n FROM t ORDER BY id") == ((1, "10", 7), (2, "20", 7), (3, "30", 7))


def test_heavy_change_waits_deferred_for_an_open_load_then_runs_every_step_and_swaps(alterflow, monkeypatch):
    """A load still open below the boundary: wait_for_boundary defers (its trigger polls the job)
    until the load aborts; then spark-submit on the spark_default connection's master converts,
    Great Expectations checks, and the swap makes version 2 current. spark-submit starts from a
    niced thread (its driver inherits the niceness)."""
    from airflow.providers.apache.spark.hooks.spark_submit import SparkSubmitHook

    monkeypatch.setenv("AIRFLOW_CONN_SPARK_DEFAULT", '{"conn_type": "spark", "host": "local[2]"}')
    submitted_at, submit = [], SparkSubmitHook.submit

    def noting_niceness(hook, *args, **kwargs):
        submitted_at.append(thread_niceness())
        return submit(hook, *args, **kwargs)

    monkeypatch.setattr(SparkSubmitHook, "submit", noting_niceness)
    catalog = alterflow.catalog
    held = catalog.begin_transaction(catalog.table("t").id, "a slow load", 3600)
    with LoadAbortedOnceWaitedFor(catalog, catalog.table("t").id, held, within_s=600) as watcher:
        state, tasks, run = run_dag(
            load_dag(SCHEMA_CHANGE),
            {"table": "t", "statement": "ALTER TABLE t MODIFY COLUMN v INT", "properties": {"engine": "spark"}},
        )
    assert state == "success", tasks
    assert "waiting for transactions" in watcher.msg, watcher.msg
    for task_id in ("validate", "plan", "branch", "start", "wait_for_boundary", "convert", "check", "swap", "done"):
        assert tasks[task_id] == "success", tasks
    assert tasks["commit"] == "skipped" and tasks["rewrite_in_worker"] == "skipped"
    assert submitted_at == [max(10, os.getpriority(os.PRIO_PROCESS, 0))], submitted_at
    [job] = jobs(alterflow, "t")
    assert job.kind == "HEAVY" and job.state == "FINISHED" and job.request_id == run.run_id
    assert versions(alterflow, "t") == [1, 2]
    assert sql(alterflow, "SELECT id, v FROM t ORDER BY id") == ((1, 10), (2, 20), (3, 30))
    done = run.get_task_instance("done").xcom_pull(task_ids="done")
    assert done["id"] == job.id and done["state"] == "FINISHED"

    # A retried task resumes: each heavy task's body, run again for this run, finds the job by the
    # run id and changes nothing (the conversion is not even submitted).
    request = run.get_task_instance("validate").xcom_pull(task_ids="validate")
    validated = run.get_task_instance("plan").xcom_pull(task_ids="plan")
    assert request["request_id"] == run.run_id
    assert task_bodies.plan(request)["kind"] == "HEAVY"
    assert task_bodies.start(request, validated) == {"job_id": job.id, "boundary": job.boundary_txn}
    assert task_bodies.wait_for_boundary(job.id, run.run_id) == {"done": True, "blocking": []}
    assert ConvertHistoryOperator(task_id="convert_again", job_id=str(job.id)).execute({}) == {"skipped": "FINISHED"}
    assert task_bodies.check(job.id, run.run_id) == {"skipped": "FINISHED"}
    assert task_bodies.swap(job.id, run.run_id) == {"state": "FINISHED"}
    assert len(jobs(alterflow, "t")) == 1 and versions(alterflow, "t") == [1, 2]


def run_in_process(conf: dict) -> dict:
    """A second dag.test() run, in a process of its own (it needs a main thread)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = child_pythonpath()
    done = subprocess.run(
        [sys.executable, "-m", "tests.support.dag_test_process", SCHEMA_CHANGE, json.dumps(conf)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert lines, done.stdout[-3000:] + done.stderr[-3000:]
    return json.loads(lines[-1][len("RESULT ") :])


def test_postponed_swap_waits_deferred_for_resume_and_a_second_run_waits_its_turn(alterflow, monkeypatch):
    """Without a spark_default connection the conversion runs on local[*]. The run stops in
    READY_TO_SWAP (its swap task deferred to a ResumeTrigger); meanwhile a second run on the same
    table waits for its turn, deferred at validate (one job per table: it makes no job while
    the first is unfinished); RESUME ALTER TABLE COLUMN swaps, the first run ends in success and
    the second commits its change on the version the swap made."""
    monkeypatch.delenv("AIRFLOW_CONN_SPARK_DEFAULT", raising=False)
    seen = {}

    def second_run():
        seen["second"] = run_in_process({"table": "t", "statement": "ALTER TABLE t ADD COLUMN n INT"})

    def meanwhile():
        deadline = time.monotonic() + 600
        try:
            while not any(j.state == "READY_TO_SWAP" for j in jobs(alterflow, "t")):
                if time.monotonic() > deadline or any(j.state == "CANCELLED" for j in jobs(alterflow, "t")):
                    return
                time.sleep(1)
            seen["versions_before_resume"] = versions(alterflow, "t")
            second = threading.Thread(target=second_run, name="second-run")
            second.start()
            line = AlterTurns(alterflow.catalog)
            while not line.line(alterflow.catalog.table("t").id) and second.is_alive() and time.monotonic() < deadline:
                time.sleep(0.5)
            time.sleep(3)  # a few of its trigger's looks: it keeps waiting
            seen["jobs_while_second_waits"] = len(jobs(alterflow, "t"))
            seen["second_waited"] = second.is_alive()
            seen["resume"] = sql(alterflow, "RESUME ALTER TABLE COLUMN FROM t")
            second.join(600)
        finally:
            if "resume" not in seen:  # never leave the run below waiting for a RESUME
                active = [j for j in jobs(alterflow, "t") if j.state not in ("FINISHED", "CANCELLED")]
                if active:
                    sql(alterflow, "CANCEL ALTER TABLE COLUMN FROM t")

    helper = threading.Thread(target=meanwhile, name="meanwhile")
    helper.start()
    state, states, run = run_dag(
        load_dag(SCHEMA_CHANGE),
        {"table": "t", "statement": "ALTER TABLE t MODIFY COLUMN v BIGINT", "properties": {"postpone_swap": "true", "engine": "spark"}},
    )
    helper.join(600)
    assert seen.get("versions_before_resume") == [1], seen
    assert seen["second_waited"] and seen["jobs_while_second_waits"] == 1, seen
    assert "FINISHED" in seen["resume"]
    assert state == "success" and states["swap"] == "success" and states["done"] == "success", states
    second = seen["second"]
    # the light ALTER committed by its validate
    assert second["state"] == "success" and (second["tasks"]["validate"], second["tasks"]["commit"]) == ("success", "skipped"), second
    heavy, light = jobs(alterflow, "t")
    assert heavy.state == "FINISHED" and heavy.request_id == run.run_id
    assert (light.kind, light.from_version, light.to_version) == ("LIGHT", 2, 3)
    assert versions(alterflow, "t") == [1, 2, 3]
    assert sql(alterflow, "SELECT id, v, n FROM t ORDER BY id") == ((1, 10, None), (2, 20, None), (3, 30, None))
    assert AlterTurns(alterflow.catalog).line(alterflow.catalog.table("t").id) == []


def test_a_small_tables_heavy_change_runs_in_one_worker_task_without_spark(alterflow, monkeypatch):
    """`"engine" = "auto"` on 3 rows: `validate` starts the job, waits for the boundary (deferred
    while a load below it is open), converts on the local engine, validates on pandas and swaps
    (deferred again until RESUME: `postpone_swap`), in one task, and skips every later task; nothing
    submits to Spark or asks for a SparkSession. The conversion and the check run niced, in a thread
    of their own; the task's process keeps its niceness."""
    from airflow.providers.apache.spark.hooks.spark_submit import SparkSubmitHook

    import alterflow.spark_session as spark_session
    from alterflow.workflow import heavy_steps

    def refuse(*_args, **_kwargs):
        raise AssertionError("a local-engine job reached Spark")

    niceness = NicenessNotes()
    own_niceness = thread_niceness()
    with monkeypatch.context() as patched:  # for the run only: the SELECT below reads with Spark
        patched.setattr(SparkSubmitHook, "submit", refuse)
        patched.setattr(spark_session, "get_spark", refuse)
        patched.setattr(heavy_steps, "convert", niceness.noting(heavy_steps.convert))
        patched.setattr(heavy_steps, "check", niceness.noting(heavy_steps.check))
        catalog = alterflow.catalog
        held = catalog.begin_transaction(catalog.table("t").id, "a slow load", 3600)

        seen = {}

        def meanwhile():  # the load below the boundary ends; then RESUME the postponed swap
            deadline = time.monotonic() + 300
            while time.monotonic() < deadline and not any(j.state == "WAITING_TXN" for j in jobs(alterflow, "t")):
                time.sleep(0.2)
            catalog.abort_transaction(held, "given up by the test")
            while time.monotonic() < deadline and not any(j.state == "READY_TO_SWAP" for j in jobs(alterflow, "t")):
                time.sleep(0.2)
            seen["versions_before_resume"] = versions(alterflow, "t")
            seen["resume"] = sql(alterflow, "RESUME ALTER TABLE COLUMN FROM t")

        helper = threading.Thread(target=meanwhile, name="meanwhile")
        helper.start()
        state, tasks, run = run_dag(
            load_dag(SCHEMA_CHANGE),
            {"table": "t", "statement": "ALTER TABLE t MODIFY COLUMN v INT", "properties": {"postpone_swap": "true"}},
        )
        helper.join(60)
    assert seen.get("versions_before_resume") == [1] and "FINISHED" in seen.get("resume", ""), seen
    assert state == "success", tasks
    assert tasks["validate"] == "success" and all(
        tasks[t] == "skipped"
        for t in ("plan", "branch", "commit", "start", "wait_for_boundary", "convert", "check", "swap", "rewrite_in_worker", "done")
    ), tasks
    [job] = jobs(alterflow, "t")
    assert run.get_task_instance("validate").xcom_pull(task_ids="validate", key="job")["id"] == job.id
    assert job.state == "FINISHED" and versions(alterflow, "t") == [1, 2]
    assert job.steps == ("validate", "start", "wait_for_boundary", "convert", "check", "swap"), job.steps
    assert sql(alterflow, "SELECT id, v FROM t ORDER BY id") == ((1, 10), (2, 20), (3, 30))
    background = max(own_niceness, 10)  # ALTERFLOW_BACKGROUND_NICE's default
    assert niceness == {"convert": background, "check": background}, niceness
    assert thread_niceness() == own_niceness


@pytest.fixture
def a_task_waiting_for_a_slot(alterflow):
    """Another run of the DAG whose `validate` waits for a worker slot (state scheduled), as on a
    busy fleet; the run is deleted afterwards (the test run's Airflow database is shared)."""
    from airflow.api.common.trigger_dag import trigger_dag
    from airflow.models import DagRun
    from airflow.models.dag_version import DagVersion
    from airflow.models.dagbag import DBDagBag
    from airflow.utils.session import create_session
    from airflow.utils.state import TaskInstanceState
    from airflow.utils.types import DagRunTriggeredByType

    from tests.support.dags import sync_dags_to_airflow

    sync_dags_to_airflow()
    conf = {"table": "t", "statement": "ALTER TABLE t ADD COLUMN w INT"}
    trigger_dag(SCHEMA_CHANGE, run_id="manual__waiting", conf=conf, triggered_by=DagRunTriggeredByType.TEST)
    with create_session() as db:
        [run] = DagRun.find(dag_id=SCHEMA_CHANGE, run_id="manual__waiting", session=db)
        run.dag = DBDagBag().get_dag_for_run(run, session=db)
        run.verify_integrity(session=db, dag_version_id=DagVersion.get_latest_version(SCHEMA_CHANGE, session=db).id)
        db.flush()
        run.get_task_instance("validate", session=db).state = TaskInstanceState.SCHEDULED
    yield
    with create_session() as db:
        for run in DagRun.find(dag_id=SCHEMA_CHANGE, run_id="manual__waiting", session=db):
            db.delete(run)


def test_a_small_rewrite_leaves_the_slots_to_waiting_tasks_and_goes_on_in_rewrite_in_worker(alterflow, a_task_waiting_for_a_slot):
    """While a task of the DAG waits for a worker slot, `validate` starts a small table's rewrite
    but does not convert it: plan, branch and start find the job, and `rewrite_in_worker` (a low
    priority weight: the waiting short steps go first) drives it to its swap."""
    state, tasks, run = run_dag(load_dag(SCHEMA_CHANGE), {"table": "t", "statement": "ALTER TABLE t MODIFY COLUMN v INT"})
    assert state == "success", tasks
    assert all(tasks[t] == "success" for t in ("validate", "plan", "branch", "start", "rewrite_in_worker", "done")), tasks
    assert all(tasks[t] == "skipped" for t in ("commit", "wait_for_boundary", "convert", "check", "swap")), tasks
    [job] = jobs(alterflow, "t")
    assert job.state == "FINISHED" and versions(alterflow, "t") == [1, 2]
    assert run.get_task_instance("start").xcom_pull(task_ids="start", key="job")["job_id"] == job.id
    assert sql(alterflow, "SELECT id, v FROM t ORDER BY id") == ((1, 10), (2, 20), (3, 30))


def test_a_dry_run_stops_after_the_plan_with_explain_analyze_in_its_xcom_and_log(alterflow, capsys):
    sql(alterflow, "INSERT INTO t VALUES (4, 'four'), (5, NULL)")
    before = versions(alterflow, "t")
    statement = "ALTER TABLE t MODIFY COLUMN v INT"
    state, tasks, run = run_dag(load_dag(SCHEMA_CHANGE), {"table": "t", "statement": statement, "dry_run": True})
    assert state == "success", tasks
    assert tasks["plan"] == "success" and tasks["branch"] == "success"
    assert all(tasks[t] == "skipped" for t in ("commit", "start", "wait_for_boundary", "convert", "rewrite_in_worker", "done")), tasks
    analysis = run.get_task_instance("plan").xcom_pull(task_ids="plan")
    assert analysis["kind"] == "DRY_RUN"
    rows = {row[0]: dict(zip(analysis["columns"], row)) for row in analysis["rows"]}
    assert rows["(statement)"]["FailedCasts"] == 1
    assert json.loads(rows["MODIFY COLUMN v INT"]["Samples"]) == [{"key": {"id": "4"}, "value": "four"}]
    assert f"EXPLAIN ANALYZE {statement}" in capsys.readouterr().out
    assert versions(alterflow, "t") == before and jobs(alterflow, "t") == []


def test_a_dry_run_param_that_is_not_a_boolean_fails_validate_in_one_line(alterflow):
    from alterflow.airflow.conf import BadRunConf, dry_run

    with pytest.raises(BadRunConf, match=r"^param dry_run: expected true or false, got 'yes'$"):
        dry_run({"dry_run": "yes"})
    assert dry_run({}) is False and dry_run({"dry_run": None}) is False and dry_run({"dry_run": True}) is True


def test_a_revert_runs_as_a_dag_run_like_any_alter(alterflow):
    sql(alterflow, "ALTER TABLE t DROP COLUMN v")
    sql(alterflow, "INSERT INTO t VALUES (4)")
    state, tasks, _run = run_dag(load_dag(SCHEMA_CHANGE), {"table": "t", "statement": "ALTER TABLE t REVERT TO VERSION 1"})
    assert state == "success" and (tasks["validate"], tasks["commit"]) == ("success", "skipped"), tasks  # light: in validate
    assert versions(alterflow, "t") == [1, 2, 3]
    assert sql(alterflow, "SELECT id, v FROM t ORDER BY id") == ((1, "10"), (2, "20"), (3, "30"), (4, None))


def test_a_quarantining_run_keeps_the_bad_rows_in_the_quarantine_table(alterflow):
    """Through the DAG (its worker path; the Spark conversion's quarantine is in tests/workflow/test_quarantine.py):
    the run succeeds, its bad row is in t__quarantine, Msg counts it."""
    sql(alterflow, "INSERT INTO t VALUES (4, 'four')")
    conf = {
        "table": "t",
        "statement": "ALTER TABLE t MODIFY COLUMN v INT",
        "properties": {"on_cast_error": "quarantine", "engine": "local"},
    }
    state, tasks, _run = run_dag(load_dag(SCHEMA_CHANGE), conf)
    assert state == "success" and tasks["validate"] == "success" and tasks["rewrite_in_worker"] == "skipped", tasks  # in validate
    assert sql(alterflow, "SELECT id, v FROM t ORDER BY id") == ((1, 10), (2, 20), (3, 30))
    [job] = jobs(alterflow, "t")
    assert sql(alterflow, "SELECT id, v, _job_id, _column FROM t__quarantine") == (("4", "four", job.id, "v"),)
    assert "1 row that could not be converted was quarantined in t__quarantine" in job.msg, job.msg


def test_a_heavy_change_on_a_bucket_warehouse_converts_in_spark_submit_and_swaps(monkeypatch, tmp_path, airflow_db, spark, s3_bucket):
    """The warehouse in a bucket (moto's S3 server): the convert task's spark-submit reaches it with
    the worker's AWS variables and the warehouse URI the task passes on, converts through pyarrow in
    its Python workers, and the run validates and swaps."""
    alterflow_env(monkeypatch, tmp_path)
    monkeypatch.setenv("ALTERFLOW_WAREHOUSE", f"s3://{s3_bucket}/wh")
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_DEFAULT", '{"conn_type": "spark", "host": "local[2]"}')
    from alterflow.settings import Settings

    session = Session(Settings.from_env())
    sql(session, TABLE)
    sql(session, ROWS)
    state, tasks, run = run_dag(
        load_dag(SCHEMA_CHANGE), {"table": "t", "statement": "ALTER TABLE t MODIFY COLUMN v INT", "properties": {"engine": "spark"}}
    )
    assert state == "success", tasks
    assert tasks["convert"] == "success" and tasks["rewrite_in_worker"] == "skipped", tasks
    [job] = jobs(session, "t")
    assert job.state == "FINISHED" and versions(session, "t") == [1, 2]
    assert sql(session, "SELECT id, v FROM t ORDER BY id") == ((1, 10), (2, 20), (3, 30))
    assert not list(tmp_path.rglob("*.parquet")), "nothing written on the local disk"
