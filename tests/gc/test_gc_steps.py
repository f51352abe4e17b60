"""GC's orphaned-job step and Airflow: a job whose last driver is an `alterflow_schema_change` run
that Airflow still queues or runs is left to that run (`alterflow gc` asks Airflow through
ALTERFLOW_AIRFLOW_URL, the GC DAG through its task's supervisor); any other orphan is taken over."""

from __future__ import annotations

from datetime import UTC, datetime

from alterflow.catalog.heavy_jobs import HeavyJobs
from alterflow.engine.session import Session
from alterflow.gc.gc_steps import OrphanedJob, left_to_their_runs, resume_orphaned_jobs
from alterflow.held_leases import airflow_run_group
from tests.support.heavy_jobs import orphan_of_an_airflow_run

SINCE = datetime(2026, 1, 1, tzinfo=UTC)


def orphan(job_id: int, driver: str | None) -> OrphanedJob:
    return OrphanedJob(job_id, "t", "ALTER TABLE t MODIFY COLUMN v INT", "RUNNING", SINCE, driver)


def test_only_the_jobs_of_live_airflow_runs_are_left_to_them():
    jobs = [
        orphan(1, airflow_run_group("alive")),
        orphan(2, airflow_run_group("ended")),
        orphan(3, "process:4242:h"),
        orphan(4, None),
    ]
    asked = []

    def alive(run_id: str) -> bool:
        asked.append(run_id)
        return run_id == "alive"

    assert left_to_their_runs(jobs, alive) == [jobs[0]]
    assert asked == ["alive", "ended"]  # only Airflow runs are asked about
    assert left_to_their_runs(jobs, None) == []  # nobody to ask (no ALTERFLOW_AIRFLOW_URL): every orphan is taken over


def test_resume_reports_a_job_its_live_run_still_drives_and_leaves_it(settings, monkeypatch):
    monkeypatch.setenv("ALTERFLOW_LEASE_S", "1")
    session = Session(settings)
    list(session.run("CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 2"))
    list(session.run("INSERT INTO t VALUES (1, '10'), (2, '20')"))
    job_id = orphan_of_an_airflow_run(session, "ALTER TABLE t MODIFY COLUMN v INT", "manual__waiting", lease_s=1.0)
    before = HeavyJobs(session.catalog).job(job_id)

    def no_spark():
        raise AssertionError("a job left to its run is not driven here")

    resumed = resume_orphaned_jobs(session.catalog, session.warehouse, no_spark, 1.0, run_is_alive=lambda run_id: True)
    [only] = resumed.jobs
    assert only.job.job_id == job_id
    assert only.outcome == "left to its Airflow run manual__waiting, which Airflow still queues or runs"
    after = HeavyJobs(session.catalog).job(job_id)
    assert (after.state, after.lease_holder, after.lease_group) == (before.state, before.lease_holder, before.lease_group)
