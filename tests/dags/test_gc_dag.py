"""`dag.test()` of alterflow_gc: its tasks are the steps of `alterflow.gc.gc_steps.GC_STEPS`, in that
order, and a run compacts files written under an old version and collects that version."""

from __future__ import annotations

import pytest

from alterflow.airflow import gc_tasks
from alterflow.airflow.gc_tasks import DAG_TASKS, RUN_STEPS, STEP_ORDER
from alterflow.engine.session import Session
from alterflow.gc import gc_steps
from alterflow.gc.gc_steps import GC_STEPS
from tests.support.dags import alterflow_env, load_dag, run_dag, sql, versions
from tests.support.niceness import NicenessNotes, thread_niceness

pytestmark = pytest.mark.spark


def test_the_dag_runs_the_gc_steps_in_their_order():
    assert STEP_ORDER == GC_STEPS
    dag = load_dag("alterflow_gc")
    assert [t.task_id for t in dag.topological_sort()] == list(DAG_TASKS)


def test_a_gc_run_compacts_old_files_and_collects_their_version(monkeypatch, tmp_path, airflow_db, spark):
    session = Session(alterflow_env(monkeypatch, tmp_path))
    monkeypatch.setenv("ALTERFLOW_GC_RETENTION", "0")
    sql(session, "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id))")
    sql(session, "INSERT INTO t VALUES (1, 'a'), (2, 'b')")
    sql(session, "ALTER TABLE t ADD COLUMN n INT DEFAULT 5")
    sql(session, "INSERT INTO t VALUES (3, 'c', 6)")
    assert versions(session, "t") == [1, 2]
    niceness = NicenessNotes()
    for name in RUN_STEPS:
        monkeypatch.setattr(gc_steps, name, niceness.noting(getattr(gc_steps, name)))
    own_niceness = thread_niceness()

    state, states, run = run_dag(load_dag("alterflow_gc"), None)
    assert state == "success", states
    assert states.pop("resume_orphaned_jobs") == "skipped", states  # mapped over no orphaned job
    assert all(s == "success" for s in states.values()), states
    compacted = run.get_task_instance("compact").xcom_pull(task_ids="compact")
    assert compacted["tablets_compacted"] >= 1, compacted
    assert versions(session, "t") == [2]
    assert sql(session, "SELECT id, v, n FROM t ORDER BY id") == ((1, "a", 5), (2, "b", 5), (3, "c", 6))
    # GC is background work: each step ran niced (ALTERFLOW_BACKGROUND_NICE's default), the test's thread kept its niceness
    assert niceness == dict.fromkeys(RUN_STEPS, max(own_niceness, 10)), niceness
    assert thread_niceness() == own_niceness


def test_a_step_the_tasks_do_not_run_is_refused_by_name(monkeypatch, tmp_path):
    alterflow_env(monkeypatch, tmp_path)
    with pytest.raises(ValueError, match="unknown GC step 'resume_orphaned_jobs'; the steps a task runs are abort_expired_loads, drop"):
        gc_tasks.run_step("resume_orphaned_jobs")
