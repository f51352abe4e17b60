"""The plugin's JSON API on a real catalog (SQLite and PostgreSQL), real Airflow JWTs and real
ALTERs: a light one, a heavy one with `postpone_swap` resumed through the API, a heavy one
cancelled through the API. Cancel and resume run the same core code as CANCEL / RESUME ALTER."""

from __future__ import annotations

import re

import pytest

from alterflow.catalog.heavy_jobs import HeavyJobs
from alterflow.engine.session import StatementError
from alterflow.workflow import alter_steps, heavy_steps
from alterflow.workflow.request import AlterRequest
from tests.support.gc import delete_dropped_files
from tests.support.plugin_api import ACTION_HEADER, act, audit_rows, bearer, last_log_id
from tests.support.statements import sql

JOB_FIELDS = {
    "job_id",
    "request_id",
    "table",
    "table_id",
    "kind",
    "state",
    "statement",
    "from_version",
    "schema_version",
    "boundary_txn",
    "msg",
    "progress",
    "tablets",
    "steps",
    "properties",
    "timeout_s",
    "created_at",
    "finished_at",
    "duration_s",
    "actions",
    "runner",
    "orphaned",
    "lease_holder",
    "lease_expires_at",
    "quarantine",
    "waiting_for_swap_since",
    "swap_wait_s",
}
UTC = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")


def show_alter(session, table: str) -> dict[int, tuple]:
    return {row[0]: row for row in sql(session, f"SHOW ALTER TABLE COLUMN FROM {table}")}


def call(client, method: str, path: str, headers: dict | None = None):
    """A GET, or a POST the page's way (JSON and the request header)."""
    return act(client, path, headers) if method == "post" else client.get(path, headers=headers)


def start_heavy(session, statement: str) -> int:
    """validate + start of a heavyweight ALTER, as a DAG run's first tasks do: the job is PENDING."""
    request = AlterRequest(statement.split()[2], statement, {})
    validated = alter_steps.validate(session.catalog, request)
    assert validated.kind == "HEAVY"
    return heavy_steps.start(session.catalog, request, validated).job_id


@pytest.mark.spark
def test_light_and_postponed_heavy_jobs_are_listed_and_resumed_through_the_api(plugin_session, spark, client, mint):
    s = plugin_session
    token = mint("alice", "admin")
    sql(s, "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 2")
    sql(s, "INSERT INTO t VALUES (1, '10'), (2, '20'), (3, '30')")
    sql(s, "ALTER TABLE t ADD COLUMN note VARCHAR(20) DEFAULT 'none'")
    done = sql(s, 'ALTER TABLE t MODIFY COLUMN v INT PROPERTIES ("postpone_swap" = "true")')
    heavy_id = int(re.fullmatch(r"ALTER TABLE t: job (\d+) READY_TO_SWAP, schema version 3", done).group(1))

    answer = client.get("/alterflow/api/jobs", headers=bearer(token))
    assert answer.status_code == 200, answer.text
    jobs = answer.json()["jobs"]
    assert answer.json()["total"] == 2 and [j["job_id"] for j in jobs] == [heavy_id, heavy_id - 1]  # newest first
    heavy, light = jobs
    assert set(heavy) == JOB_FIELDS and set(light) == JOB_FIELDS
    assert (light["table"], light["kind"], light["state"], light["schema_version"], light["boundary_txn"]) == (
        "t",
        "LIGHT",
        "FINISHED",
        2,
        None,
    )
    assert light["actions"] == [] and UTC.fullmatch(light["finished_at"]) and light["duration_s"] >= 0
    job = HeavyJobs(s.catalog).job(heavy_id)
    assert (heavy["kind"], heavy["state"], heavy["from_version"], heavy["schema_version"]) == ("HEAVY", "READY_TO_SWAP", 2, 3)
    assert heavy["boundary_txn"] == job.boundary_txn and heavy["msg"] == job.msg and heavy["progress"] == job.progress
    assert heavy["tablets"]["done"] == heavy["tablets"]["total"] >= 1
    assert heavy["finished_at"] is None and UTC.fullmatch(heavy["created_at"])
    # Postponed: it waits for a person, says since when, and its duration stops at the wait.
    assert heavy["waiting_for_swap_since"] == job.ready_to_swap_at.isoformat(timespec="seconds") + "Z"
    assert heavy["msg"].endswith("waiting for someone to swap it: RESUME ALTER TABLE COLUMN FROM t, or Resume on the Schema changes page")
    assert heavy["lease_holder"] is None and heavy["lease_expires_at"] is None and heavy["runner"] == ""  # nobody drives it
    assert heavy["duration_s"] <= (job.ready_to_swap_at - job.created_at).total_seconds() + 0.01
    assert heavy["actions"] == ["cancel", "resume", "analyze"] and heavy["properties"]["postpone_swap"] is True
    assert heavy["statement"].startswith("ALTER TABLE t MODIFY COLUMN v INT")
    # The same numbers as SHOW ALTER TABLE COLUMN.
    shown = show_alter(s, "t")[heavy_id]
    assert (shown[4], shown[5], shown[6], shown[7], shown[8], shown[9]) == (
        heavy["kind"],
        heavy["schema_version"],
        heavy["boundary_txn"],
        heavy["state"],
        heavy["msg"],
        heavy["progress"],
    )
    assert client.get(f"/alterflow/api/jobs/{heavy_id}", headers=bearer(token)).json() == {
        **heavy,
        "duration_s": pytest.approx(heavy["duration_s"], abs=30),
        "swap_wait_s": pytest.approx(heavy["swap_wait_s"], abs=30),  # it still waits: a moment later, a little more
    }
    assert client.get("/alterflow/api/jobs?table=T", headers=bearer(token)).json()["total"] == 2

    # Resume through the API: the same swap as RESUME ALTER TABLE COLUMN, in Airflow's audit log.
    logged = last_log_id()
    answer = act(client, f"/alterflow/api/jobs/{heavy_id}/resume", bearer(token))
    assert answer.status_code == 200, answer.text
    assert audit_rows(logged) == [
        {
            "event": "alterflow_resume_job",
            "owner": "alice",
            "dag_id": "alterflow_schema_change",
            "run_id": None,  # a postponed swap starts no run
            "extra": {"table": "t", "job_id": heavy_id, "state": "READY_TO_SWAP", "method": "POST"},
        }
    ]
    assert (answer.json()["state"], answer.json()["actions"]) == ("FINISHED", [])
    assert answer.json()["finished_at"] is not None and answer.json()["waiting_for_swap_since"] is None
    swapped = HeavyJobs(s.catalog).job(heavy_id)
    assert answer.json()["swap_wait_s"] == pytest.approx(swapped.swap_wait_s, abs=0.001) and swapped.swap_wait_s > 0
    took = (swapped.finished_at - swapped.created_at).total_seconds()
    assert answer.json()["duration_s"] == pytest.approx(took - swapped.swap_wait_s, abs=0.01)  # the wait left out
    assert show_alter(s, "t")[heavy_id][7] == "FINISHED"
    assert {r[0]: r[1] for r in sql(s, "DESCRIBE t")} == {"id": "INT", "v": "INT", "note": "VARCHAR(20)"}
    assert sql(s, "SELECT id, v, note FROM t ORDER BY id") == ((1, 10, "none"), (2, 20, "none"), (3, 30, "none"))

    # A finished job: resume and cancel are refused with one line (409), nothing changes.
    for action in ("resume", "cancel"):
        answer = act(client, f"/alterflow/api/jobs/{heavy_id}/{action}", bearer(token))
        assert answer.status_code == 409
        detail = answer.json()["detail"]
        assert detail.startswith(f"job {heavy_id} is FINISHED; only ") and "\n" not in detail
    assert s.catalog.table("t").current_version == 3 and HeavyJobs(s.catalog).job(heavy_id).state == "FINISHED"

    # Tables and their schema history with columns.
    tables = client.get("/alterflow/api/tables", headers=bearer(token)).json()
    assert [(t["table"], t["current_version"], t["unfinished_job_id"]) for t in tables["tables"]] == [("t", 3, None)]
    history = client.get("/alterflow/api/tables/t/versions", headers=bearer(token)).json()
    assert [v["version"] for v in history["versions"]] == [1, 2, 3]
    assert [v["current"] for v in history["versions"]] == [False, False, True]
    v1, v2, v3 = history["versions"]
    assert [c["name"] for c in v1["columns"]] == ["id", "v"]
    assert v2["columns"][2] == {
        "id": 3,
        "name": "note",
        "type": "VARCHAR(20)",
        "nullable": True,
        "key": False,
        "roles": [],
        "default": "none",
        "initial_default": "none",
        "comment": None,
    }
    assert v3["columns"][0]["key"] is True and v3["columns"][0]["roles"] == ["primary key", "distribution"]
    assert v3["columns"][0]["nullable"] is False
    assert [c["type"] for c in v3["columns"]] == ["INT", "INT", "VARCHAR(20)"]
    assert (v3["primary_key"], v3["distributed_by"], v3["buckets"]) == (["id"], ["id"], 2)
    assert v3["statement"].startswith("ALTER TABLE t MODIFY COLUMN v INT") and UTC.fullmatch(v3["created_at"])


def test_cancel_through_the_api_drops_the_shadow_and_keeps_the_origin(plugin_session, client, mint):
    s = plugin_session
    token = mint("bob", "user")
    sql(s, "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id))")
    sql(s, "INSERT INTO t VALUES (1, '1'), (2, '2')")
    job_id = start_heavy(s, "ALTER TABLE t MODIFY COLUMN v INT")
    sql(s, "INSERT INTO t VALUES (3, '3')")  # dual-written into the shadow index
    job = HeavyJobs(s.catalog).job(job_id)
    shadow_files = s.catalog.index_snapshot(job.table_id, job.shadow_index_id, job.to_version).files
    assert shadow_files
    before = (s.catalog.table("t"), sorted(f.path for f in s.catalog.snapshot("t").files), sql(s, "DESCRIBE t"))

    listed = client.get("/alterflow/api/jobs?table=t", headers=bearer(token)).json()["jobs"]
    assert [(j["job_id"], j["state"], j["actions"]) for j in listed] == [(job_id, "PENDING", ["cancel", "analyze"])]
    logged = last_log_id()
    answer = act(client, f"/alterflow/api/jobs/{job_id}/resume", bearer(token))
    # Its runner (this process, which started it) holds its lease: not an orphan, nothing to resume.
    assert answer.status_code == 409
    assert answer.json()["detail"].startswith(f"job {job_id} is being driven by ") and "its lease expires in" in answer.json()["detail"]
    assert HeavyJobs(s.catalog).job(job_id).state == "PENDING"

    answer = act(client, f"/alterflow/api/jobs/{job_id}/cancel", bearer(token))
    assert answer.status_code == 200, answer.text
    assert (answer.json()["state"], answer.json()["msg"]) == ("CANCELLED", "cancelled by bob on the Schema changes page")
    # Nobody drives a cancelled job, and it has no progress bar.
    assert (answer.json()["lease_holder"], answer.json()["lease_expires_at"], answer.json()["tablets"]) == (None, None, None)
    job = HeavyJobs(s.catalog).job(job_id)
    assert job.state == "CANCELLED" and job.finished_at is not None
    assert s.catalog.index_snapshot(job.table_id, job.shadow_index_id, job.from_version).files == ()
    assert all((s.warehouse / f.path).exists() for f in shadow_files), "deferred: GC deletes them after the retention"
    delete_dropped_files(s)
    for f in shadow_files:
        assert not (s.warehouse / f.path).exists(), f"shadow file left behind: {f.path}"
    assert (s.catalog.table("t"), sorted(f.path for f in s.catalog.snapshot("t").files), sql(s, "DESCRIBE t")) == before
    assert [v[0] for v in sql(s, "SHOW SCHEMA VERSIONS FROM t")] == [1]
    assert show_alter(s, "t")[job_id][7:9] == ("CANCELLED", "cancelled by bob on the Schema changes page")

    # Cancelled: the API refuses again (409), and SQL agrees there is nothing left to cancel.
    answer = act(client, f"/alterflow/api/jobs/{job_id}/cancel", bearer(token))
    assert (answer.status_code, answer.json()["detail"]) == (409, f"job {job_id} is CANCELLED; only an unfinished job can be cancelled")
    with pytest.raises(StatementError, match="no unfinished alter job on t"):
        sql(s, "CANCEL ALTER TABLE COLUMN FROM t")
    # Airflow's audit log has every attempt, as its own API's action_logging records them: the, the cancel and the refused second cancel.
    # refused resume (with the run it would have started, as Airflow logs a refused trigger), the
    # cancel and the refused second cancel.
    extra = {"table": "t", "job_id": job_id, "method": "POST"}
    resume, *cancels = audit_rows(logged)
    assert resume["run_id"].startswith(f"resume_job_{job_id}_")
    assert (resume["event"], resume["owner"], resume["dag_id"], resume["extra"]) == (
        "alterflow_resume_job",
        "bob",
        "alterflow_schema_change",
        {**extra, "state": "PENDING", "dag_run_id": resume["run_id"]},
    )
    assert [(r["event"], r["owner"], r["dag_id"], r["run_id"], r["extra"]) for r in cancels] == 2 * [
        ("alterflow_cancel_job", "bob", "alterflow_schema_change", None, extra)
    ]
    # A new ALTER runs, and gets version 2 again.
    assert sql(s, "ALTER TABLE t ADD COLUMN x INT").endswith("FINISHED, schema version 2")


def test_unauthenticated_calls_bad_ids_and_forbidden_actions_change_nothing(plugin_session, client, mint, auth_manager):
    s = plugin_session
    sql(s, "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id))")
    sql(s, "INSERT INTO t VALUES (1, '1')")
    job_id = start_heavy(s, "ALTER TABLE t MODIFY COLUMN v INT")

    def unchanged():
        job = HeavyJobs(s.catalog).job(job_id)
        assert (job.state, job.msg, job.finished_at) == ("PENDING", "", None)
        assert s.catalog.table("t").current_version == 1

    calls = [
        ("get", "/alterflow/api/jobs"),
        ("get", "/alterflow/api/jobs?table=t"),
        ("get", f"/alterflow/api/jobs/{job_id}"),
        ("post", f"/alterflow/api/jobs/{job_id}/cancel"),
        ("post", f"/alterflow/api/jobs/{job_id}/resume"),
        ("get", "/alterflow/api/tables"),
        ("get", "/alterflow/api/tables/t/versions"),
        ("post", "/alterflow/api/jobs/abc/cancel"),  # not even the id is looked at before the user
    ]
    for method, path in calls:
        for headers in ({}, ACTION_HEADER):  # the user comes first, with or without the request header
            answer = getattr(client, method)(path, headers=headers)
            assert (answer.status_code, answer.json()) == (401, {"detail": "Not authenticated"}), path
        # A token that Airflow did not sign is refused too (Airflow's own answer: 403).
        answer = call(client, method, path, bearer(mint() + "x"))
        assert answer.status_code in (401, 403) and set(answer.json()) == {"detail"}, path
    # An expired token.
    from airflow.api_fastapi.auth.managers.simple.user import SimpleAuthManagerUser

    old = auth_manager.generate_jwt(SimpleAuthManagerUser(username="alice", role="admin"), expiration_time_in_seconds=-60)
    assert act(client, f"/alterflow/api/jobs/{job_id}/cancel", bearer(old)).status_code in (401, 403)
    unchanged()

    token = mint("alice", "admin")
    for bad in ("abc", "0", "-1", "1.5", "01", "1e3", "9" * 19, "%20"):
        for method, path in (
            ("get", f"/alterflow/api/jobs/{bad}"),
            ("post", f"/alterflow/api/jobs/{bad}/cancel"),
            ("post", f"/alterflow/api/jobs/{bad}/resume"),
        ):
            answer = call(client, method, path, bearer(token))
            assert answer.status_code == 422, (path, answer.text)
            detail = answer.json()["detail"]
            assert detail.startswith("malformed job id ") and detail.endswith("a job id is a positive integer")
            assert "\n" not in detail
    for bad in ("1x", "a-b", "x" * 129, "t;drop", "y" * 5000, "%1B%5B2J"):
        for path in (f"/alterflow/api/tables/{bad}/versions", f"/alterflow/api/jobs?table={bad}"):
            answer = client.get(path, headers=bearer(token))
            assert answer.status_code == 422, (path, answer.text)
            detail = answer.json()["detail"]
            assert detail.startswith("malformed table name ")
            # One short line (docs/semantics.md, "Bad input"): a huge name shortened with its length, ESC escaped.
            assert len(detail) <= 300 and detail.isprintable(), detail
    assert "(5000 characters)" in client.get("/alterflow/api/jobs?table=" + "y" * 5000, headers=bearer(token)).json()["detail"]
    assert "'\\x1b[2J'" in client.get("/alterflow/api/jobs?table=%1B%5B2J", headers=bearer(token)).json()["detail"]
    unknown = job_id + 1000
    for method, path in (
        ("get", f"/alterflow/api/jobs/{unknown}"),
        ("post", f"/alterflow/api/jobs/{unknown}/cancel"),
        ("post", f"/alterflow/api/jobs/{unknown}/resume"),
    ):
        answer = call(client, method, path, bearer(token))
        assert (answer.status_code, answer.json()) == (404, {"detail": f"unknown alter job {unknown}"}), path
    for path in ("/alterflow/api/tables/nope/versions", "/alterflow/api/jobs?table=nope"):
        answer = client.get(path, headers=bearer(token))
        assert (answer.status_code, answer.json()) == (404, {"detail": "unknown table nope"}), path
    unchanged()

    # A viewer sees everything but may not cancel or resume: 403 with one line, nothing audited.
    viewer = mint("val", "viewer")
    assert client.get(f"/alterflow/api/jobs/{job_id}", headers=bearer(viewer)).json()["state"] == "PENDING"
    logged = last_log_id()
    for action, needs in (("cancel", "edit"), ("resume", "create")):
        answer = act(client, f"/alterflow/api/jobs/{job_id}/{action}", bearer(viewer))
        assert (answer.status_code, answer.json()) == (
            403,
            {"detail": f"user val may not {action} alter jobs: that needs {needs} access to runs of the DAG alterflow_schema_change"},
        )
    unchanged()
    assert audit_rows(logged) == []


@pytest.mark.parametrize("catalog_url", ["sqlite"], indirect=True)
def test_an_unreachable_catalog_is_one_line_503(client, mint, monkeypatch):
    monkeypatch.setenv("ALTERFLOW_CATALOG_URL", "postgresql+psycopg://nobody@127.0.0.1:1/nothing")
    for path in ("/alterflow/api/jobs", "/alterflow/api/tables", "/alterflow/api/jobs/1"):
        answer = client.get(path, headers=bearer(mint()))
        assert answer.status_code == 503, answer.text
        detail = answer.json()["detail"]
        # no server there (CatalogLost): its reason, once, after the words
        assert detail.startswith("the alterflow catalog cannot be reached: connection failed: ") and "\n" not in detail
        assert "cannot open" not in detail and "stopped answering" not in detail, detail
    assert client.get("/alterflow/api/jobs").status_code == 401  # still nothing for anonymous callers


def test_analyze_a_job_through_the_api_is_explain_analyze_of_its_conversion(plugin_session, client, mint):
    s = plugin_session
    viewer = bearer(mint("victor", "viewer"))  # read-only: a viewer may analyse
    sql(s, "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id))")
    sql(s, "INSERT INTO t VALUES (1, '1'), (2, 'two'), (3, NULL), (5, 'five')")
    job_id = start_heavy(s, "ALTER TABLE t MODIFY COLUMN v INT")
    sql(s, "INSERT INTO t VALUES (4, '4'), (5, '5')")  # the table as it is now: id 5's 'five' is replaced
    before = (s.catalog.table("t"), sorted(f.path for f in s.catalog.snapshot("t").files))

    logged = last_log_id()
    answer = client.get(f"/alterflow/api/jobs/{job_id}/analysis", headers=viewer)
    assert answer.status_code == 200, answer.text
    # It shows the table's values: written to Airflow's audit log like an action.
    assert [(r["event"], r["owner"], r["extra"]) for r in audit_rows(logged)] == [
        ("alterflow_analyze_job", "victor", {"table": "t", "job_id": job_id, "method": "GET"})
    ]
    found = answer.json()
    assert (found["job_id"], found["table"], found["rows"], found["failed_casts"]) == (job_id, "t", 5, 1)
    assert found["columns"]["v"]["samples"] == [{"key": {"id": "2"}, "value": "two"}]
    # the checks of the job's validation those rows fail (on_cast_error = fail: the failed cast)
    assert [(c["check"], c["count"]) for c in found["validation"]] == [("failed_casts", 1)]
    assert found["est_seconds"] >= 0
    assert (s.catalog.table("t"), sorted(f.path for f in s.catalog.snapshot("t").files)) == before
    assert 'data-action="analyze"' in client.get("/alterflow/", headers=viewer).text

    act(client, f"/alterflow/api/jobs/{job_id}/cancel", bearer(mint("bob", "user")))
    refused = client.get(f"/alterflow/api/jobs/{job_id}/analysis", headers=viewer)
    assert (refused.status_code, refused.json()["detail"]) == (
        409,
        f"job {job_id} is CANCELLED: only an unfinished heavyweight job can be analysed",
    )
    assert client.get("/alterflow/api/jobs/99/analysis", headers=viewer).status_code == 404


def test_a_quarantining_job_shows_its_count_and_links_the_quarantine_table(plugin_session, client, mint):
    s = plugin_session
    viewer = bearer(mint("victor", "viewer"))
    sql(s, "CREATE TABLE t (id INT NOT NULL, v STRING)")
    sql(s, "INSERT INTO t VALUES (1, '1'), (2, 'two'), (3, 'three')")
    sql(s, 'ALTER TABLE t MODIFY COLUMN v INT PROPERTIES ("on_cast_error" = "quarantine", "engine" = "local")')
    sql(s, "ALTER TABLE t ADD COLUMN w INT")  # a job that does not quarantine shows none
    jobs = {j["statement"].split()[3]: j for j in client.get("/alterflow/api/jobs?table=t", headers=viewer).json()["jobs"]}
    assert jobs["MODIFY"]["quarantine"] == {"table": "t__quarantine", "rows": 2}
    assert jobs["ADD"]["quarantine"] is None
    one = client.get(f"/alterflow/api/jobs/{jobs['MODIFY']['job_id']}", headers=viewer).json()
    assert one["quarantine"] == {"table": "t__quarantine", "rows": 2}
    html = client.get("/alterflow/", headers=viewer).text
    assert '<a class="quarantine" href="/alterflow/?table=t__quarantine"' in html, html
    assert "2 rows quarantined in t__quarantine" in html


@pytest.fixture
def edit_not_create(auth_manager, monkeypatch):
    """Airflow's auth manager, but user `ed` (role user) may edit runs without creating them: no
    role of the simple auth manager says so, so the test narrows its `is_authorized_dag`. Every
    question the plugin asks is recorded."""
    asked = []
    allow = auth_manager.is_authorized_dag

    def is_authorized_dag(*, method, user, access_entity=None, details=None):
        asked.append((user.get_name(), method, access_entity, details.id, details.team_name))
        if user.get_name() == "ed" and method == "POST":
            return False
        return allow(method=method, user=user, access_entity=access_entity, details=details)

    monkeypatch.setattr(auth_manager, "is_authorized_dag", is_authorized_dag)
    return asked


def test_cancel_needs_edit_and_resume_and_revert_need_create_access_to_runs(plugin_session, client, mint, edit_not_create):
    from airflow.api_fastapi.auth.managers.models.resource_details import DagAccessEntity
    from airflow.models import DagRun

    s = plugin_session
    ed = bearer(mint("ed", "user"))
    sql(s, "CREATE TABLE u (id INT)")
    sql(s, "ALTER TABLE u ADD COLUMN w INT")
    sql(s, "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id))")
    job_id = start_heavy(s, "ALTER TABLE t MODIFY COLUMN v INT")
    runs, logged = len(DagRun.find(dag_id="alterflow_schema_change")), last_log_id()

    # Resume and revert may start a DAG run: create access, exactly what Airflow's POST dagRuns asks.
    edit_not_create.clear()
    answer = act(client, f"/alterflow/api/jobs/{job_id}/resume", ed)
    assert (answer.status_code, answer.json()["detail"]) == (
        403,
        "user ed may not resume alter jobs: that needs create access to runs of the DAG alterflow_schema_change",
    )
    assert edit_not_create == [("ed", "POST", DagAccessEntity.RUN, "alterflow_schema_change", None)]  # no team: none asked
    answer = act(client, "/alterflow/api/tables/u/versions/1/revert", ed)
    assert (answer.status_code, answer.json()["detail"]) == (
        403,
        "user ed may not revert tables: that needs create access to runs of the DAG alterflow_schema_change",
    )
    assert HeavyJobs(s.catalog).job(job_id).state == "PENDING" and s.catalog.table("u").current_version == 2
    assert len(DagRun.find(dag_id="alterflow_schema_change")) == runs and audit_rows(logged) == []

    # The page shows ed Cancel, but no Revert; an admin sees Revert too.
    html = client.get("/alterflow/", headers=ed).text
    assert f'data-action="cancel" data-job-id="{job_id}"' in html and 'data-action="revert"' not in html
    assert 'data-action="revert"' in client.get("/alterflow/", headers=bearer(mint("alice", "admin"))).text

    # Cancel only edits the run: ed may, and Airflow's audit log says who, what and which table.
    edit_not_create.clear()
    answer = act(client, f"/alterflow/api/jobs/{job_id}/cancel", ed)
    assert answer.status_code == 200, answer.text
    assert edit_not_create == [("ed", "PUT", DagAccessEntity.RUN, "alterflow_schema_change", None)]
    assert (answer.json()["state"], HeavyJobs(s.catalog).job(job_id).state) == ("CANCELLED", "CANCELLED")
    assert audit_rows(logged) == [
        {
            "event": "alterflow_cancel_job",
            "owner": "ed",
            "dag_id": "alterflow_schema_change",
            "run_id": None,
            "extra": {"table": "t", "job_id": job_id, "method": "POST"},
        }
    ]


def test_without_read_access_to_the_dag_nothing_is_shown(plugin_session, client, mint):
    s = plugin_session
    sql(s, "CREATE TABLE secret_table (id INT NOT NULL, v STRING, PRIMARY KEY (id))")
    sql(s, "INSERT INTO secret_table VALUES (1, 'one')")
    job_id = start_heavy(s, "ALTER TABLE secret_table MODIFY COLUMN v INT")
    nobody = bearer(mint("nora", None))  # signed in, but no role: Airflow grants her nothing
    logged = last_log_id()
    for path in (
        "/alterflow/api/jobs",
        "/alterflow/api/jobs?table=secret_table",
        f"/alterflow/api/jobs/{job_id}",
        f"/alterflow/api/jobs/{job_id}/analysis",
        "/alterflow/api/tables",
        "/alterflow/api/tables/secret_table/versions",
        "/alterflow/api/jobs/abc",  # nor what is malformed or unknown
        "/alterflow/api/tables/nope/versions",
    ):
        answer = client.get(path, headers=nobody)
        assert (answer.status_code, answer.json()) == (
            403,
            {"detail": "user nora may not see alter jobs or schema versions: that needs read access to the DAG alterflow_schema_change"},
        ), path
    page = client.get("/alterflow/", headers=nobody)
    assert page.status_code == 403 and "secret_table" not in page.text
    assert "user nora may not see schema changes: that needs read access to the DAG alterflow_schema_change" in page.text
    for path in (
        f"/alterflow/api/jobs/{job_id}/cancel",
        f"/alterflow/api/jobs/{job_id}/resume",
        "/alterflow/api/tables/secret_table/versions/1/revert",
    ):
        assert act(client, path, nobody).status_code == 403, path
    assert HeavyJobs(s.catalog).job(job_id).state == "PENDING" and audit_rows(logged) == []


def test_posts_a_cross_site_form_can_make_are_refused_and_change_nothing(plugin_session, client, mint):
    from airflow.models import DagRun

    s = plugin_session
    admin = bearer(mint("alice", "admin"))
    sql(s, "CREATE TABLE u (id INT)")
    sql(s, "ALTER TABLE u ADD COLUMN w INT")
    sql(s, "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id))")
    job_id = start_heavy(s, "ALTER TABLE t MODIFY COLUMN v INT")
    runs, logged = len(DagRun.find(dag_id="alterflow_schema_change")), last_log_id()
    no_header = "a POST to this API needs the header X-Alterflow-Request: 1 (and a JSON body, Content-Type: application/json)"
    for path in (
        f"/alterflow/api/jobs/{job_id}/cancel",
        f"/alterflow/api/jobs/{job_id}/resume",
        "/alterflow/api/tables/u/versions/1/revert",
    ):
        # What a form of another site can send: urlencoded, multipart or text/plain, no custom header.
        for sent in ({"data": {"x": "1"}}, {"files": {"f": b"x"}}, {"content": b"{}", "headers": {"Content-Type": "text/plain"}}):
            answer = client.post(path, **{**sent, "headers": {**admin, **sent.get("headers", {})}})
            assert (answer.status_code, answer.json()) == (403, {"detail": no_header}), (path, sent)
        # JSON without the header (a script of another origin would need CORS for the header).
        answer = client.post(path, headers=admin, json={})
        assert (answer.status_code, answer.json()) == (403, {"detail": no_header}), path
        # The header but not JSON: 415.
        answer = client.post(path, headers={**admin, **ACTION_HEADER}, data={"x": "1"})
        assert (answer.status_code, answer.json()) == (
            415,
            {"detail": "a POST to this API is JSON (Content-Type: application/json); this one is 'application/x-www-form-urlencoded'"},
        ), path
        answer = client.post(path, headers={**admin, **ACTION_HEADER})
        assert answer.status_code == 415 and answer.json()["detail"].endswith("this one is without a Content-Type"), path
        # JSON, but not the empty object this API takes: 422.
        for body in (b"[1]", b"{", b'{"force": true}'):
            answer = client.post(path, headers={**admin, **ACTION_HEADER, "Content-Type": "application/json"}, content=body)
            assert (answer.status_code, answer.json()) == (422, {"detail": "the body of this POST is an empty JSON object, {}"}), (
                path,
                body,
            )
    assert HeavyJobs(s.catalog).job(job_id).state == "PENDING" and s.catalog.table("u").current_version == 2
    assert len(DagRun.find(dag_id="alterflow_schema_change")) == runs and audit_rows(logged) == []
    # The page's way (no body at all is JSON's "nothing" too): accepted.
    answer = client.post(f"/alterflow/api/jobs/{job_id}/cancel", headers={**admin, **ACTION_HEADER, "Content-Type": "application/json"})
    assert answer.status_code == 200 and answer.json()["state"] == "CANCELLED"


@pytest.fixture
def dag_of_a_team(airflow_db):
    """The DAG alterflow_schema_change in Airflow's database, its bundle owned by team `schema`
    (as Airflow's multi-team set-up maps bundles to teams); undone afterwards."""
    from airflow.models import dag as dag_module
    from airflow.models.dag import DagModel
    from airflow.models.dagbundle import DagBundleModel
    from airflow.models.team import Team
    from airflow.utils.session import create_session

    from tests.support.dags import sync_dags_to_airflow

    sync_dags_to_airflow()
    with create_session() as session:
        bundle = session.get(DagBundleModel, session.get(DagModel, "alterflow_schema_change").bundle_name)
        team = session.get(Team, "schema") or Team(name="schema")
        bundle.teams.append(team)
    dag_module._team_name_cache.clear()  # Airflow caches a DAG's team for 30 s
    yield "schema"
    with create_session() as session:
        session.delete(session.get(Team, "schema"))
    dag_module._team_name_cache.clear()


def test_a_dag_of_a_team_is_read_and_changed_by_that_team_only(plugin_session, client, mint, dag_of_a_team):
    s = plugin_session
    sql(s, "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id))")
    job_id = start_heavy(s, "ALTER TABLE t MODIFY COLUMN v INT")
    outsider, member = bearer(mint("otto", "user", ["other"])), bearer(mint("mia", "user", ["schema"]))
    logged = last_log_id()
    answer = client.get("/alterflow/api/jobs", headers=outsider)
    assert (answer.status_code, answer.json()["detail"]) == (
        403,
        "user otto may not see alter jobs or schema versions: that needs read access to the DAG alterflow_schema_change",
    )
    assert client.get("/alterflow/", headers=outsider).status_code == 403
    answer = act(client, f"/alterflow/api/jobs/{job_id}/cancel", outsider)
    assert answer.status_code == 403 and "needs edit access to runs of the DAG" in answer.json()["detail"]
    assert HeavyJobs(s.catalog).job(job_id).state == "PENDING" and audit_rows(logged) == []

    assert [j["job_id"] for j in client.get("/alterflow/api/jobs", headers=member).json()["jobs"]] == [job_id]
    assert f'data-action="cancel" data-job-id="{job_id}"' in client.get("/alterflow/", headers=member).text
    answer = act(client, f"/alterflow/api/jobs/{job_id}/cancel", member)
    assert answer.status_code == 200 and HeavyJobs(s.catalog).job(job_id).state == "CANCELLED"
    assert [(r["event"], r["owner"]) for r in audit_rows(logged)] == [("alterflow_cancel_job", "mia")]
