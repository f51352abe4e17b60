"""The DAG readers of `alterflow migrate lint`'s backward_incompatible finding, asked of a real
Airflow: Airflow's API app (`airflow.api_fastapi.app.create_app`, as `airflow api-server` serves it)
served over HTTP by uvicorn in this process, on the test run's metadata database, with a team's DAG
folder synced to it as the dag-processor would. The CLI finds it through ALTERFLOW_AIRFLOW_URL, as
a user's does. (No scheduler: lint only reads which DAGs are scheduled on a table's asset.)"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import threading
import time

import pytest

from tests.migrate.conftest import ORDERS
from tests.migrate.test_lint_controls import Project, Run, by_line, rules_of
from tests.support.dags import add_bundles, sync_dags_to_airflow
from tests.support.ports import free_port

ALTERFLOW = pathlib.Path(sys.executable).parent / "alterflow"
PASSWORD = "lint-readers-password"
TEAM_DAGS = """
import pendulum
from airflow.sdk import DAG, Asset, task

ORDERS = Asset("alterflow://default/orders")
START = pendulum.datetime(2025, 1, 1, tz="UTC")

with DAG("orders_report", schedule=[ORDERS], start_date=START, catchup=False):
    @task
    def report():
        return 1

    report()

with DAG("orders_audit", schedule=None, start_date=START, catchup=False):
    @task(inlets=[ORDERS])
    def audit():
        return 1

    audit()

with DAG("events_report", schedule=[Asset("alterflow://default/events")], start_date=START, catchup=False):
    @task
    def count():
        return 1

    count()
"""


@pytest.fixture(scope="module")
def airflow_url(airflow_db, tmp_path_factory):
    """The URL of Airflow's API app served by uvicorn in a thread, the team's DAGs synced to it
    (once for the module: both catalogs' runs ask the same Airflow)."""
    import uvicorn

    dags = tmp_path_factory.mktemp("team-dags")
    (dags / "orders_readers.py").write_text(TEAM_DAGS, encoding="utf-8")
    passwords = dags.parent / f"{dags.name}-passwords.json"
    passwords.write_text(json.dumps({"admin": PASSWORD}), encoding="utf-8")
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv("AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE", str(passwords))
        add_bundles(monkeypatch, lint_readers=dags)
        sync_dags_to_airflow()
        from airflow.api_fastapi.app import create_app

        port = free_port()
        server = uvicorn.Server(uvicorn.Config(create_app("core"), host="127.0.0.1", port=port, log_level="warning"))
        thread = threading.Thread(target=server.run, name="airflow-api", daemon=True)
        thread.start()
        deadline = time.monotonic() + 60
        while not server.started:  # uvicorn's own flag: the socket is bound and the app's startup done
            assert thread.is_alive() and time.monotonic() < deadline, "Airflow's API app did not start"
            time.sleep(0.02)
        try:
            yield f"http://127.0.0.1:{port}"
        finally:
            server.should_exit = True
            thread.join(timeout=30)


@pytest.fixture
def project(tmp_path, catalog_url, monkeypatch, capsys) -> Project:
    return Project(tmp_path / "project", catalog_url, monkeypatch, capsys)


def lint(project: Project, *args: str) -> Run:
    """`alterflow migrate lint ARGS` in a process of its own (this one's output holds the served
    app's log lines), with the project's environment."""
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable}
    done = subprocess.run(
        [str(ALTERFLOW), "migrate", "lint", *args], env=env, cwd=project.root, capture_output=True, text=True, timeout=300
    )
    return Run(done.returncode, done.stdout, done.stderr)


def test_the_finding_names_the_dags_scheduled_on_or_reading_the_tables_asset(project, airflow_url):
    project.write(
        "V1__tables.sql",
        ORDERS
        + "CREATE VIEW notes AS SELECT id, note FROM orders;\n"
        + "CREATE TABLE events (id INT NOT NULL, kind STRING, PRIMARY KEY (id));\n"
        + "CREATE TABLE quiet (id INT NOT NULL, v STRING, w STRING, PRIMARY KEY (id));\n",
    )
    project.applied()
    project.write(
        "V2__breaking.sql",
        "ALTER TABLE orders RENAME COLUMN note TO remark;\n"
        "ALTER TABLE orders DROP COLUMN amount;\n"
        "ALTER TABLE events DROP COLUMN kind;\n"
        "ALTER TABLE quiet DROP COLUMN v;\n"  # no DAG reads quiet: a drop, nothing incompatible known
        "ALTER TABLE quiet RENAME COLUMN w TO x;\n",
    )
    monkeypatch = project.monkeypatch
    monkeypatch.setenv("ALTERFLOW_AIRFLOW_URL", airflow_url)
    monkeypatch.setenv("ALTERFLOW_AIRFLOW_USERNAME", "admin")
    monkeypatch.setenv("ALTERFLOW_AIRFLOW_PASSWORD", PASSWORD)
    linted = lint(project, "--format", "json")
    assert linted.code == 0 and linted.err == "", linted
    report = linted.report
    assert report["airflow_warning"] is None
    found = by_line(report)
    orders_asset = "alterflow://default/orders"
    rename = found[("V2__breaking.sql", 1)]["findings"][0]
    # The run's Airflow is shared with other tests, whose DAGs may also read alterflow://default/orders:
    # every one of them is a reader, so the team's two must be among those named, in name order.
    dags = rename["readers"]["dags"]
    assert {"orders_audit", "orders_report"} <= set(dags) and dags == sorted(dags), dags
    assert rename["readers"] == {"views": ["notes"], "dags": dags, "asset": orders_asset}
    assert rename["message"] == (
        "renames column note to remark of orders: readers alterflow knows: view notes (pinned to the old name: re-create "
        f"to read the new one); DAGs {', '.join(dags)} (scheduled on or reading the asset {orders_asset})"
    )
    drop = found[("V2__breaking.sql", 2)]
    assert rules_of(drop) == [("drop_column", "warning"), ("backward_incompatible", "warning")]
    assert drop["findings"][1]["message"].startswith(f"drops column amount of orders: readers alterflow knows: DAGs {', '.join(dags)}")
    events = found[("V2__breaking.sql", 3)]["findings"][1]
    assert "events_report" in events["readers"]["dags"] and events["readers"]["views"] == [], events
    assert events["readers"]["asset"] == "alterflow://default/events"
    assert rules_of(found[("V2__breaking.sql", 4)]) == [("drop_column", "warning")]
    quiet = found[("V2__breaking.sql", 5)]["findings"][0]
    assert quiet["message"].endswith("alterflow knows none: no view uses it, no DAG is scheduled on alterflow://default/quiet")
    github = lint(project, "--format", "github")
    assert "line=2,title=backward_incompatible::drops column amount of orders: readers alterflow knows: DAGs orders_audit" in github.out

    # Credentials Airflow refuses: one warning line, and the same findings without DAGs.
    monkeypatch.setenv("ALTERFLOW_AIRFLOW_PASSWORD", "wrong")
    refused = lint(project)
    assert refused.code == 0 and refused.err == ""
    warned = [line for line in refused.out.splitlines() if line.startswith("warning  ")]
    assert len(warned) == 1 and "refused the credentials of user 'admin'" in warned[0], refused.out
    assert "DAGs orders_audit" not in refused.out and "view notes" in refused.out
