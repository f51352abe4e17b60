"""Airflow resumes orphaned jobs (docs/heavyweight.md): the `alterflow_gc` DAG aborts expired loads and starts
one `alterflow_schema_change` run per orphaned job, whose conf is the job's own statement; that
run takes the job over and drives it to the end (dag.test() of both DAGs, real tasks)."""

from __future__ import annotations

import time

import pytest

from alterflow.catalog.heavy_jobs import HeavyJobs
from alterflow.catalog.job_leases import JobLeases
from alterflow.engine.session import Session
from alterflow.held_leases import airflow_run_group
from alterflow.workflow import alter_steps, heavy_steps
from alterflow.workflow.request import AlterRequest
from tests.support.catalog_rows import txn_state
from tests.support.dags import SCHEMA_CHANGE, alterflow_env, jobs, load_dag, run_dag, sql, sync_dags_to_airflow, versions

pytestmark = pytest.mark.spark

LEASE_S = "1"
STATEMENT = "ALTER TABLE t MODIFY COLUMN v INT"


WAITING_RUN = "manual__waiting_for_a_slot"


@pytest.fixture(params=["a dead runner"])
def orphan(request, monkeypatch, tmp_path, airflow_db, spark):
    """A job whose runner died in RUNNING (its lease ran out), and a load that died in PREPARE.
    The runner's lease group is the fixture's param (a process's, or an Airflow run's)."""
    monkeypatch.setenv("ALTERFLOW_LEASE_S", LEASE_S)
    session = Session(alterflow_env(monkeypatch, tmp_path))
    sql(session, "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 2")
    sql(session, "INSERT INTO t VALUES (1, '10'), (2, '20'), (3, '30')")
    alter = AlterRequest("t", STATEMENT)
    dead = {"group": request.param, "lease_s": session.settings.lease_s}
    job_id = heavy_steps.start(session.catalog, alter, alter_steps.validate(session.catalog, alter), **dead).job_id
    assert heavy_steps.wait_for_boundary(session.catalog, session.warehouse, job_id, heavy_steps.StepDriver(**dead)).done
    dead_load = session.catalog.begin_transaction(session.catalog.table("t").id, "load that died", 3600, lease_s=1.0, holder="x:1:y")
    deadline = time.monotonic() + 30  # an Airflow run's hand-off grace is four leases
    while not [j for j in JobLeases(session.catalog).orphaned() if j.id == job_id] and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(1.0)  # the load's lease (1 s) too
    assert [j.id for j in JobLeases(session.catalog).orphaned()] == [job_id]
    return session, job_id, dead_load


def test_the_gc_dag_starts_one_schema_change_run_per_orphan_and_that_run_takes_it_over(orphan):
    from airflow.models import DagRun

    session, job_id, dead_load = orphan
    assert HeavyJobs(session.catalog).job(job_id).state == "RUNNING"

    state, states, run = run_dag(load_dag("alterflow_gc"), None)
    assert state == "success", states
    assert txn_state(session, dead_load) == "ABORTED"
    found = run.get_task_instance("find_orphaned_jobs").xcom_pull(task_ids="find_orphaned_jobs")
    assert [o["conf"] for o in found] == [{"table": "t", "statement": STATEMENT, "properties": {}, "resume_job_id": job_id}]
    run_id = found[0]["trigger_run_id"]
    assert run_id.startswith(f"resume_job_{job_id}_")
    triggered = DagRun.find(dag_id=SCHEMA_CHANGE, run_id=run_id)
    assert len(triggered) == 1 and triggered[0].conf == found[0]["conf"]

    # The run that GC started, as a worker would run it: it takes the job over and finishes it.
    state, states, run = run_dag(load_dag(SCHEMA_CHANGE), found[0]["conf"])
    assert state == "success", states
    assert states["validate"] == "success" and states["rewrite_in_worker"] == "skipped", states  # 3 rows: in validate
    [job] = jobs(session, "t")  # no second job
    assert job.id == job_id and job.state == "FINISHED"
    assert run.get_task_instance("validate").xcom_pull(task_ids="validate", key="job")["id"] == job_id
    assert versions(session, "t") == [1, 2]
    assert sql(session, "SELECT id, v FROM t ORDER BY id") == ((1, 10), (2, 20), (3, 30))

    # A takeover run that starts after its job is over (a second click, a late queue) runs nothing.
    state, states, _run = run_dag(load_dag(SCHEMA_CHANGE), found[0]["conf"])
    assert state == "failed" and states["validate"] == "success" and states["plan"] == "failed", states
    assert len(jobs(session, "t")) == 1 and versions(session, "t") == [1, 2]


def test_a_catalog_behind_its_warehouse_takes_no_orphaned_job_over(orphan):
    """A restored or copied catalog (here: the warehouse holds a file of a transaction this catalog
    never began, as a newer copy's commit leaves) starts no takeover run: `find_orphaned_jobs`
    fails for good with the line `alterflow gc` gives, and nothing is written."""
    import uuid

    from airflow.exceptions import AirflowFailException

    from alterflow.airflow.gc_tasks import orphan_runs

    session, job_id, _dead_load = orphan
    tablet = next(session.warehouse.rglob("*.parquet")).parent
    (tablet / f"999-{0:024d}-{uuid.uuid4().hex}.parquet").write_bytes(b"a newer catalog's file")
    before = sorted(str(p) for p in session.warehouse.rglob("*"))
    with pytest.raises(AirflowFailException) as refused:
        orphan_runs()
    assert " is behind warehouse " in str(refused.value) and "GC deletes nothing" in str(refused.value), refused.value
    assert sorted(str(p) for p in session.warehouse.rglob("*")) == before
    assert HeavyJobs(session.catalog).job(job_id).state == "RUNNING"


@pytest.mark.parametrize("orphan", [airflow_run_group(WAITING_RUN)], indirect=True)
def test_a_job_whose_airflow_run_is_still_alive_is_left_to_that_run(orphan):
    """A job whose lease ran out while its own alterflow_schema_change run still waits (its next
    task queued for a worker slot, a retry pending) is not taken over: that run takes the lease
    back when its task starts. Once the run has failed, GC takes the job over."""
    from airflow.api.common.trigger_dag import trigger_dag
    from airflow.models import DagRun
    from airflow.utils.session import create_session
    from airflow.utils.state import DagRunState
    from airflow.utils.types import DagRunTriggeredByType

    session, job_id, _dead_load = orphan
    sync_dags_to_airflow()
    trigger_dag(SCHEMA_CHANGE, run_id=WAITING_RUN, conf={"table": "t", "statement": STATEMENT}, triggered_by=DagRunTriggeredByType.TEST)

    state, states, run = run_dag(load_dag("alterflow_gc"), None)
    assert state == "success", states
    assert run.get_task_instance("find_orphaned_jobs").xcom_pull(task_ids="find_orphaned_jobs") == []
    assert states["resume_orphaned_jobs"] == "skipped", states
    assert HeavyJobs(session.catalog).job(job_id).state == "RUNNING"

    with create_session() as db:
        db.query(DagRun).filter(DagRun.run_id == WAITING_RUN).update({DagRun.state: DagRunState.FAILED})
    state, states, run = run_dag(load_dag("alterflow_gc"), None)
    assert state == "success", states
    found = run.get_task_instance("find_orphaned_jobs").xcom_pull(task_ids="find_orphaned_jobs")
    assert [o["conf"]["resume_job_id"] for o in found] == [job_id]
