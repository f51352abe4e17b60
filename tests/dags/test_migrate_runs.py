"""`dag.test()` runs of alterflow_migrate with real tasks on a migrations directory: a rewrite that
the rules say needs approval waits in Airflow's human-in-the-loop step until a person answers
through Airflow's REST API (served by Airflow's own app, `tests.support.airflow_rest`): approved, it
is applied and its tables' asset events are emitted; rejected, nothing is applied and the run ends.
A directory without an `approve` finding is applied without asking; a lint error fails the run
before anything is asked or applied."""

from __future__ import annotations

import threading
import time
import urllib.parse

import pytest

from alterflow.engine.session import Session
from alterflow.migrate.apply import MigrationApply
from alterflow.migrate.status import migration_status
from tests.support.airflow_rest import airflow_rest_api
from tests.support.dags import alterflow_env, asset_events, jobs, load_dag, run_dag, sql, versions

MIGRATE = "alterflow_migrate"
V1 = "CREATE TABLE orders (id INT NOT NULL, amount STRING, PRIMARY KEY (id));\nINSERT INTO orders VALUES (1, '10'), (2, '25'), (3, '-7');\n"
V2_HEAVY = "ALTER TABLE orders ADD COLUMN note STRING;\n\nALTER TABLE orders MODIFY COLUMN amount INT;\n"
V2_LIGHT = "ALTER TABLE orders ADD COLUMN note STRING DEFAULT 'none';\n"
ORDERS = "alterflow://default/orders"


@pytest.fixture(scope="module")
def rest(airflow_db):
    """Airflow's REST API, signed in as alice (admin), shared by the tests of this module."""
    with airflow_rest_api("alice") as api:
        yield api


@pytest.fixture
def project(monkeypatch, tmp_path, airflow_db):
    """An alterflow under tmp_path and a project whose pyproject.toml asks approval for a rewrite."""
    session = Session(alterflow_env(monkeypatch, tmp_path))
    (tmp_path / "project" / "migrations").mkdir(parents=True)
    (tmp_path / "project" / "pyproject.toml").write_text('[tool.alterflow.lint]\nrewrite = "approve"\ndrop_column = "warning"\n')
    return session, tmp_path / "project" / "migrations"


def write(directory, **files) -> None:
    for name, text in files.items():
        (directory / f"{name}.sql").write_text(text)


def states(session: Session, directory) -> dict[str, str]:
    return {s.script: s.state for s in migration_status(session.catalog, directory).states}


class Approver(threading.Thread):
    """Waits, through the REST API, for a run of alterflow_migrate whose approval task awaits input,
    reads its human-in-the-loop detail, calls `meanwhile()`, then answers `option` (as a person
    does on the Required Actions page, which calls the same endpoint). If anything goes wrong
    before it answered, it rejects, so that the run in the main thread ends."""

    def __init__(self, rest, option: str, meanwhile=None, timeout: float = 300):
        super().__init__(name=f"approver-{option}", daemon=True)
        self.rest, self.option, self.meanwhile, self.timeout = rest, option, meanwhile, timeout
        self.seen: dict = {}

    def _waiting_run(self) -> str | None:
        """The id (quoted for a path) of a running run whose approval awaits input."""
        runs = self.rest.get(f"/api/v2/dags/{MIGRATE}/dagRuns", params={"state": "running"})
        if runs.status_code == 404:  # the DAG is not in the database yet: dag.test() adds it
            return None
        assert runs.status_code == 200, f"{runs.status_code} {runs.text}"
        for run in runs.json()["dag_runs"]:
            run_id = urllib.parse.quote(run["dag_run_id"], safe="")
            task = self.rest.get(f"/api/v2/dags/{MIGRATE}/dagRuns/{run_id}/taskInstances/approval")
            if task.status_code == 200 and task.json()["state"] == "awaiting_input":
                return run_id
        return None

    def _path(self, run_id: str) -> str:
        return f"/api/v2/dags/{MIGRATE}/dagRuns/{run_id}/taskInstances/approval/-1/hitlDetails"

    def _wait(self, timeout: float) -> str:
        deadline = time.monotonic() + timeout
        while True:
            run_id = self._waiting_run()
            if run_id is not None:
                return run_id
            assert time.monotonic() < deadline, f"no run of {MIGRATE} waited for approval within {timeout} s"
            time.sleep(0.5)

    def run(self) -> None:
        try:
            run_id = self._wait(self.timeout)
            detail = self.rest.get(self._path(run_id))
            self.seen["detail"] = (detail.status_code, detail.json())
            if self.meanwhile is not None:
                self.seen["meanwhile"] = self.meanwhile()
            answer = self.rest.patch(self._path(run_id), json={"chosen_options": [self.option], "params_input": {}})
            self.seen["answer"] = (answer.status_code, answer.json())
        except BaseException as exc:
            self.seen["error"] = repr(exc)
            if "answer" not in self.seen:  # never leave the run in the main thread waiting
                self.rest.patch(self._path(self._wait(self.timeout)), json={"chosen_options": ["Reject"], "params_input": {}})
            raise


def apply_v1(session: Session, directory) -> None:
    MigrationApply(session, directory, who="setup", on_line=lambda _line: None).run(to="1")


def test_a_rewrite_waits_for_approval_granted_through_the_rest_api_then_is_applied(project, rest):
    session, directory = project
    write(directory, V1__orders=V1)
    apply_v1(session, directory)
    write(directory, V2__amount_to_int=V2_HEAVY)
    events_before = asset_events(ORDERS)

    approver = Approver(rest, "Approve", meanwhile=lambda: (states(session, directory), versions(session, "orders")))
    approver.start()
    state, tasks, run = run_dag(load_dag(MIGRATE), {"migrations_dir": str(directory)})
    approver.join(30)
    assert "error" not in approver.seen, approver.seen

    # While the run waited, nothing was applied, and the approval showed the lint and the analysis.
    assert approver.seen["meanwhile"] == ({"V1__orders.sql": "APPLIED", "V2__amount_to_int.sql": "PENDING"}, [1])
    code, detail = approver.seen["detail"]
    assert code == 200 and detail["options"] == ["Approve", "Reject"], detail
    assert detail["subject"] == f"Apply 2 pending migration statement(s) of {directory}?"
    body = detail["body"]
    assert "**1 to approve**, 0 error(s)" in body, body
    assert "#### `V2__amount_to_int.sql` line 3: HEAVY (approve)" in body, body
    assert "ALTER TABLE orders MODIFY COLUMN amount INT" in body and "STRING -> INT can fail and needs a rewrite; 3 rows of orders" in body
    assert "**Analysis on today's data:** every value converts; about " in body, body
    assert "- **approve** rewrite: rewrites the data of orders (3 rows today) into a new index" in body, body
    assert "#### The other statements\n- `V2__amount_to_int.sql` line 1: LIGHT `ALTER TABLE orders ADD COLUMN note STRING`" in body, body
    code, answer = approver.seen["answer"]
    assert code == 200 and answer["chosen_options"] == ["Approve"] and answer["responded_by"]["name"] == "alice", answer

    assert state == "success", tasks
    assert tasks == {"lint": "success", "needs_approval": "success", "approval": "success", "apply": "success"}
    assert states(session, directory) == {"V1__orders.sql": "APPLIED", "V2__amount_to_int.sql": "APPLIED"}
    [v2] = [s for s in migration_status(session.catalog, directory).states if s.version == "2"]
    assert v2.installed_by == "dag_test (approved by alice)" and v2.statements_done == 2
    assert versions(session, "orders") == [1, 2, 3]
    assert [(j.kind, j.state) for j in jobs(session, "orders")] == [("LIGHT", "FINISHED"), ("HEAVY", "FINISHED")]
    described = {row[0]: row[1] for row in sql(session, "DESCRIBE orders")}
    assert described == {"id": "INT", "amount": "INT", "note": "STRING"}, described

    # Each ALTER emitted its table's asset event, as the schema-change DAG's `done` does, naming the file.
    light, heavy = jobs(session, "orders")
    migration = {"migration": "V2__amount_to_int.sql", "migration_version": "2"}
    assert asset_events(ORDERS)[len(events_before) :] == [
        (
            {
                "event": "schema_change",
                "from_version": 1,
                "to_version": 2,
                "statement": "ALTER TABLE orders ADD COLUMN note STRING",
                "kind": "LIGHT",
                "job_id": light.id,
            }
            | migration,
            run.run_id,
        ),
        (
            {
                "event": "schema_change",
                "from_version": 2,
                "to_version": 3,
                "statement": "ALTER TABLE orders MODIFY COLUMN amount INT",
                "kind": "HEAVY",
                "job_id": heavy.id,
            }
            | migration,
            run.run_id,
        ),
    ]
    applied = run.get_task_instance("apply").xcom_pull(task_ids="apply")
    assert (applied["applied"], applied["statements"], applied["tables"]) == (["V2__amount_to_int.sql"], 2, ["orders"])
    report = run.get_task_instance("lint").xcom_pull(task_ids="lint", key="report")
    assert [(s["kind"], s["failed_casts"]) for s in report["statements"]] == [("LIGHT", None), ("HEAVY", 0)]


def test_a_rejected_approval_applies_nothing_and_ends_the_run(project, rest):
    session, directory = project
    write(directory, V1__orders=V1)
    apply_v1(session, directory)
    write(directory, V2__amount_to_int=V2_HEAVY)
    events_before = asset_events(ORDERS)

    approver = Approver(rest, "Reject")
    approver.start()
    state, tasks, _run = run_dag(load_dag(MIGRATE), {"migrations_dir": str(directory), "to": 2})
    approver.join(30)
    assert "error" not in approver.seen, approver.seen
    code, answer = approver.seen["answer"]
    assert code == 200 and answer["chosen_options"] == ["Reject"], answer

    assert state == "success", tasks  # a person's answer, not a failure: the run ends with apply skipped
    assert tasks == {"lint": "success", "needs_approval": "success", "approval": "success", "apply": "skipped"}
    assert states(session, directory) == {"V1__orders.sql": "APPLIED", "V2__amount_to_int.sql": "PENDING"}
    assert versions(session, "orders") == [1] and jobs(session, "orders") == []
    assert asset_events(ORDERS) == events_before


def test_without_an_approve_finding_the_run_applies_without_asking(project):
    session, directory = project
    write(directory, V1__orders=V1, V2__note=V2_LIGHT)
    events_before = asset_events(ORDERS)

    state, tasks, run = run_dag(load_dag(MIGRATE), {"migrations_dir": str(directory)})
    assert state == "success", tasks
    assert tasks == {"lint": "success", "needs_approval": "success", "approval": "skipped", "apply": "success"}
    assert states(session, directory) == {"V1__orders.sql": "APPLIED", "V2__note.sql": "APPLIED"}
    described = {row[0]: (row[1], row[4]) for row in sql(session, "DESCRIBE orders")}
    assert described == {"id": ("INT", None), "amount": ("STRING", None), "note": ("STRING", "none")}, described
    assert session.catalog.table_stats(session.catalog.table("orders").id)[0] == 3  # V1's rows
    [light] = jobs(session, "orders")
    created = {"event": "schema_change", "from_version": None, "to_version": 1, "kind": "CREATE", "job_id": None}
    assert asset_events(ORDERS)[len(events_before) :] == [
        (
            {**created, "statement": V1.split(";")[0], "migration": "V1__orders.sql", "migration_version": "1"},
            run.run_id,
        ),
        (
            {
                "event": "schema_change",
                "from_version": 1,
                "to_version": 2,
                "statement": "ALTER TABLE orders ADD COLUMN note STRING DEFAULT 'none'",
                "kind": "LIGHT",
                "job_id": light.id,
                "migration": "V2__note.sql",
                "migration_version": "2",
            },
            run.run_id,
        ),
    ]
    assert [s.installed_by for s in migration_status(session.catalog, directory).states] == ["dag_test", "dag_test"]


def test_a_lint_error_fails_the_run_before_anything_is_asked_or_applied(project):
    session, directory = project
    write(directory, V1__orders=V1)
    apply_v1(session, directory)
    sql(session, "INSERT INTO orders VALUES (4, 'not a number')")
    write(directory, V2__amount_to_int=V2_HEAVY)

    state, tasks, run = run_dag(load_dag(MIGRATE), {"migrations_dir": str(directory)})
    assert state == "failed", tasks
    assert tasks == {"lint": "failed", "needs_approval": "upstream_failed", "approval": "upstream_failed", "apply": "upstream_failed"}
    report = run.get_task_instance("lint").xcom_pull(task_ids="lint", key="report")
    assert report["errors"] == 1 and report["approvals"] == 1, report
    [failed] = [f for s in report["statements"] for f in s["findings"] if f["level"] == "error"]
    assert failed["rule"] == "failed_casts" and '"value": "not a number"' in failed["message"], failed
    assert states(session, directory) == {"V1__orders.sql": "APPLIED", "V2__amount_to_int.sql": "PENDING"}
    assert versions(session, "orders") == [1] and jobs(session, "orders") == []
