"""The Schema changes page and its API on orphaned jobs (docs/heavyweight.md): who holds each job's lease, or
`no runner since ...`; Resume of an orphan starts an `alterflow_schema_change` run with the job's own
statement (create access to the DAG's runs); Resume of a job a live runner holds is one line, 409.
Both write Airflow's audit log."""

from __future__ import annotations

import time

from alterflow.catalog.heavy_jobs import HeavyJobs
from alterflow.workflow import alter_steps, heavy_steps
from alterflow.workflow.request import AlterRequest
from tests.support.dags import sync_dags_to_airflow
from tests.support.plugin_api import act, audit_rows, bearer, last_log_id
from tests.support.statements import sql

STATEMENT = "ALTER TABLE t MODIFY COLUMN v INT"


def start(session, group: str, lease_s: float) -> int:
    request = AlterRequest("t", STATEMENT)
    validated = alter_steps.validate(session.catalog, request)
    return heavy_steps.start(session.catalog, request, validated, group=group, lease_s=lease_s).job_id


LIVE_LEASE_S = 4.0


def orphaned_within(client, job_id: int, headers: dict, timeout_s: float) -> dict:
    """The job as the API shows it, once its runner's lease has run out."""
    deadline = time.monotonic() + timeout_s
    while True:
        shown = client.get(f"/alterflow/api/jobs/{job_id}", headers=headers).json()
        if shown["orphaned"] or time.monotonic() > deadline:
            return shown
        time.sleep(0.5)


def test_the_page_names_the_runner_and_resume_of_an_orphan_starts_a_dag_run(plugin_session, client, mint, monkeypatch):
    from airflow.models import DagRun

    s = plugin_session
    monkeypatch.setenv("ALTERFLOW_LEASE_S", "1")
    sync_dags_to_airflow()
    sql(s, "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 2")
    sql(s, "INSERT INTO t VALUES (1, '10')")
    # A lease long enough to be seen live on a busy machine (1 s ran out before the first request
    # under two test processes), short enough to wait out.
    job_id = start(s, "a runner elsewhere", lease_s=LIVE_LEASE_S)
    admin, viewer = bearer(mint("alice", "admin")), bearer(mint("victor", "viewer"))

    # A live runner: the API and the page name it; Resume is refused in one line and changes nothing.
    shown = client.get(f"/alterflow/api/jobs/{job_id}", headers=admin).json()
    assert shown["runner"].startswith("driven by ") and not shown["orphaned"] and "resume" not in shown["actions"]
    refused = act(client, f"/alterflow/api/jobs/{job_id}/resume", admin)
    assert refused.status_code == 409 and refused.json()["detail"].startswith(f"job {job_id} is being driven by ")
    assert HeavyJobs(s.catalog).job(job_id).state == "PENDING"

    shown = orphaned_within(client, job_id, admin, LIVE_LEASE_S + 10)  # the runner is gone: its lease runs out
    assert shown["runner"].startswith("no runner since ") and shown["orphaned"] and "resume" in shown["actions"]
    page = client.get("/alterflow/", headers=admin).text
    assert "no runner since" in page and 'data-action="resume"' in page and 'data-orphaned="true"' in page
    row = {r[0]: r for r in sql(s, "SHOW ALTER TABLE COLUMN FROM t")}[job_id]
    assert row[8].startswith("no runner since ")

    forbidden = act(client, f"/alterflow/api/jobs/{job_id}/resume", viewer)
    assert forbidden.status_code == 403
    logged = last_log_id()
    resumed = act(client, f"/alterflow/api/jobs/{job_id}/resume", admin)
    assert resumed.status_code == 200, resumed.text
    run_id = resumed.json()["dag_run_id"]
    assert run_id.startswith(f"resume_job_{job_id}_")
    assert audit_rows(logged) == [
        {
            "event": "alterflow_resume_job",
            "owner": "alice",
            "dag_id": "alterflow_schema_change",
            "run_id": run_id,
            "extra": {"table": "t", "job_id": job_id, "state": "PENDING", "dag_run_id": run_id, "method": "POST"},
        }
    ]
    [run] = DagRun.find(dag_id="alterflow_schema_change", run_id=run_id)
    assert run.conf == {"table": "t", "statement": STATEMENT, "properties": {}, "resume_job_id": job_id}
    assert len(s.catalog.jobs()) == 1  # the run takes the job over; no second job


def test_revert_to_a_version_through_the_api_starts_a_run_after_planning_it(plugin_session, client, mint):
    from airflow.models import DagRun

    s = plugin_session
    sync_dags_to_airflow()
    sql(s, "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id))")
    sql(s, "ALTER TABLE t DROP COLUMN v")
    admin, viewer = bearer(mint("alice", "admin")), bearer(mint("victor", "viewer"))
    page = client.get("/alterflow/", headers=admin).text
    assert 'data-action="revert"' in page and 'data-version="1"' in page
    assert 'data-action="revert"' not in client.get("/alterflow/", headers=viewer).text

    runs_before = len(DagRun.find(dag_id="alterflow_schema_change"))  # the Airflow database is the module's
    assert act(client, "/alterflow/api/tables/t/versions/1/revert", viewer).status_code == 403
    refusals = {
        "/alterflow/api/tables/t/versions/2/revert": (409, "ALTER TABLE t: cannot revert to version 2: it is the current version"),
        "/alterflow/api/tables/t/versions/7/revert": (409, "ALTER TABLE t: cannot revert to version 7: the table's newest version is 2"),
        "/alterflow/api/tables/t/versions/x/revert": (422, "malformed version 'x': expected a positive integer"),
        "/alterflow/api/tables/t/versions/²/revert": (422, "malformed version '²': expected a positive integer"),
        "/alterflow/api/tables/nope/versions/1/revert": (404, "unknown table nope"),
    }
    for path, (code, detail) in refusals.items():
        answer = act(client, path, admin)
        assert (answer.status_code, answer.json()["detail"]) == (code, detail), path
    assert len(DagRun.find(dag_id="alterflow_schema_change")) == runs_before and s.catalog.table("t").current_version == 2

    logged = last_log_id()
    started = act(client, "/alterflow/api/tables/t/versions/1/revert", admin)
    assert started.status_code == 200, started.text
    answer = started.json()
    # Airflow's audit log: the run names the job to be (the run makes it).
    assert audit_rows(logged) == [
        {
            "event": "alterflow_revert_table",
            "owner": "alice",
            "dag_id": "alterflow_schema_change",
            "run_id": answer["dag_run_id"],
            "extra": {"table": "t", "job_id": None, "version": 1, "dag_run_id": answer["dag_run_id"], "method": "POST"},
        }
    ]
    assert (answer["statement"], answer["kind"]) == ("ALTER TABLE t REVERT TO VERSION 1", "LIGHT")
    [run] = DagRun.find(dag_id="alterflow_schema_change", run_id=answer["dag_run_id"])
    assert run.conf == {"table": "t", "statement": "ALTER TABLE t REVERT TO VERSION 1", "properties": {}}
