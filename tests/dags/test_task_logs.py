"""A heavyweight run's task logs tell the job's story in alterflow's words (the job, its boundary,
the engine and tablets, the progress, the validation, the swap) without Great Expectations'
registration chatter; a run whose values all fail to convert ends with one line in the user's
words, in the log and as the run's note. Each `dag.test()` runs in a fresh process
(`tests.support.dag_test_process`), so Great Expectations is imported there for the first time,
as in a worker."""

from __future__ import annotations

import pytest

from alterflow.engine.session import Session
from tests.dags.test_schema_change_bad_input import results_of, start_runs
from tests.support.dags import alterflow_env, jobs, note_of, sql


@pytest.fixture
def alterflow(monkeypatch, tmp_path):
    session = Session(alterflow_env(monkeypatch, tmp_path))
    sql(session, "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id))")
    sql(session, "INSERT INTO t VALUES (1, '10'), (2, '20'), (3, '30')")
    sql(session, "CREATE TABLE bad (id INT NOT NULL, customer STRING, PRIMARY KEY (id))")
    sql(session, "INSERT INTO bad VALUES (1, 'cust1'), (2, 'cust2')")
    return session


def test_a_heavy_runs_log_tells_the_jobs_story_and_a_failure_is_one_line_in_the_users_words(alterflow, airflow_db, tmp_path):
    confs = [
        {"statement": "ALTER TABLE t MODIFY COLUMN v INT", "engine": "local"},
        {"statement": "ALTER TABLE bad MODIFY COLUMN customer BIGINT", "engine": "local"},
    ]
    (done, done_log), (failed, failed_log) = results_of(*start_runs(confs, tmp_path / "runs"))

    assert done["state"] == "success", done
    [job] = jobs(alterflow, "t")
    for story in (
        f"job {job.id} started: ALTER TABLE t MODIFY COLUMN v INT: version 1 -> 2, shadow index {job.shadow_index_id}, "
        f"boundary transaction {job.boundary_txn}",
        f"job {job.id}: every transaction below boundary {job.boundary_txn} has ended: RUNNING",
        f"job {job.id} converts 1 of 1 tablets (3 rows below boundary {job.boundary_txn}) on the local engine",
        f"job {job.id}: tablets 1/1, rows 3/3",
        f"job {job.id} validated on pandas: ",
        f"job {job.id} swapped: version 2 of t is current (FINISHED)",
    ):
        assert story in done_log, f"{story!r} not in the task logs:\n{done_log[-4000:]}"
    for chatter in ("Skipping registering function", "great_expectations"):
        found = [line for line in (done_log + failed_log).splitlines() if chatter in line]
        assert not found, found[:5]

    line = "validation failed: 2 of 2 values of customer do not convert to BIGINT, e.g. 'cust1' (id=1), 'cust2' (id=2)"
    assert failed["state"] == "failed" and failed["tasks"]["validate"] == "failed", failed
    [cancelled] = jobs(alterflow, "bad")
    assert cancelled.state == "CANCELLED" and cancelled.msg == line
    assert line in failed_log
    assert note_of(failed["run_id"]) == f"ALTER TABLE bad: job {cancelled.id} was cancelled: {line}"
