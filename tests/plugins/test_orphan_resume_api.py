"""The Schema changes page and its API on orphaned jobs (SPEC §4): who holds each job's lease, or
`no runner since ...`; Resume of an orphan starts an `alterflow_schema_change` run with the job's own
statement (the same permission as Cancel); Resume of a job a live runner holds is one line, 409."""

from __future__ import annotations

import time

from alterflow.catalog.heavy_jobs import HeavyJobs
from alterflow.workflow import heavy_steps, steps
from alterflow.workflow.request import AlterRequest
from tests.support.statements import sql

STATEMENT = "ALTER TABLE t MODIFY COLUMN v INT"


def bearer(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}


def sync_dags_to_airflow() -> None:
    """The project's DAGs into the test Airflow's metadata database, as its dag-processor would."""
    from airflow.dag_processing.bundles.manager import DagBundlesManager
    from airflow.dag_processing.dagbag import BundleDagBag, sync_bag_to_db

    manager = DagBundlesManager()
    manager.sync_bundles_to_db()
    for bundle in manager.get_all_dag_bundles():
        if not bundle.is_initialized:
            bundle.initialize()
        bag = BundleDagBag(dag_folder=bundle.path, bundle_path=bundle.path, bundle_name=bundle.name)
        sync_bag_to_db(bag, bundle.name, bundle.version)


def start(session, group: str) -> int:
    request = AlterRequest("t", STATEMENT)
    return heavy_steps.start(session.catalog, request, steps.validate(session.catalog, request), group=group)["job_id"]


def test_the_page_names_the_runner_and_resume_of_an_orphan_starts_a_dag_run(plugin_session, client, mint, monkeypatch):
    from airflow.models import DagRun

    s = plugin_session
    monkeypatch.setenv("ALTERFLOW_LEASE_S", "1")
    sync_dags_to_airflow()
    sql(s, "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 2")
    sql(s, "INSERT INTO t VALUES (1, '10')")
    job_id = start(s, "a runner elsewhere")
    admin, viewer = bearer(mint("alice", "admin")), bearer(mint("victor", "viewer"))

    # A live runner: the API and the page name it; Resume is refused in one line and changes nothing.
    shown = client.get(f"/alterflow/api/jobs/{job_id}", headers=admin).json()
    assert shown["runner"].startswith("driven by ") and not shown["orphaned"] and "resume" not in shown["actions"]
    refused = client.post(f"/alterflow/api/jobs/{job_id}/resume", headers=admin)
    assert refused.status_code == 409 and refused.json()["detail"].startswith(f"job {job_id} is being driven by ")
    assert HeavyJobs(s.catalog).job(job_id).state == "PENDING"

    time.sleep(1.5)  # the runner is gone: its lease runs out
    shown = client.get(f"/alterflow/api/jobs/{job_id}", headers=admin).json()
    assert shown["runner"].startswith("no runner since ") and shown["orphaned"] and "resume" in shown["actions"]
    page = client.get("/alterflow/", headers=admin).text
    assert "no runner since" in page and 'data-action="resume"' in page and 'data-orphaned="true"' in page
    row = {r[0]: r for r in sql(s, "SHOW ALTER TABLE COLUMN FROM t")}[job_id]
    assert row[8].startswith("no runner since ")

    forbidden = client.post(f"/alterflow/api/jobs/{job_id}/resume", headers=viewer)
    assert forbidden.status_code == 403
    resumed = client.post(f"/alterflow/api/jobs/{job_id}/resume", headers=admin)
    assert resumed.status_code == 200, resumed.text
    run_id = resumed.json()["dag_run_id"]
    assert run_id.startswith(f"resume_job_{job_id}_")
    [run] = DagRun.find(dag_id="alterflow_schema_change", run_id=run_id)
    assert run.conf == {"table": "t", "statement": STATEMENT, "properties": {}, "resume_job_id": job_id}
    assert len(s.catalog.jobs()) == 1  # the run takes the job over; no second job
