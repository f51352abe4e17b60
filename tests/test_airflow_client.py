"""The CLI's REST trigger (`alterflow.airflow_client`) against Airflow's real API app, served
in-process (Starlette's TestClient over `airflow.api_fastapi.app.create_app`, the test run's
metadata database): token, DAG checks, the run it creates. And its bad cases: an unreachable or
invalid URL, wrong credentials, an unknown or paused DAG: one clear line, nothing submitted, the
table untouched. (The live test with a real api-server and scheduler runs the whole ALTER.)"""

from __future__ import annotations

import json
import socket

import pytest

from alterflow.airflow_client import DAG_ID, AirflowClient, AirflowRequestError, new_run_id, submit_alter
from alterflow.session import Session, StatementError
from alterflow.settings import Settings
from alterflow.workflow.request import AlterRequest

PASSWORD = "right-password"
TABLE = "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id))"
ALTER = "ALTER TABLE t ADD COLUMN n INT"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def session(tmp_path):
    session = Session(Settings.from_env({"ALTERFLOW_HOME": str(tmp_path / "home")}))
    list(session.run(TABLE))
    return session


def untouched(session: Session):
    info = session.catalog.table("t")
    return info.current_version, session.catalog.jobs(info.id)


@pytest.fixture(scope="module")
def airflow_api(airflow_db, tmp_path_factory):
    """Airflow's API app in this process, with user admin / PASSWORD and the project's DAGs synced
    to the metadata database (as the DAG processor would)."""
    import os

    from starlette.testclient import TestClient

    passwords = tmp_path_factory.mktemp("auth") / "passwords.json"
    passwords.write_text(json.dumps({"admin": PASSWORD}))
    saved = {k: os.environ.get(k) for k in ("AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE",)}
    os.environ["AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE"] = str(passwords)
    _sync_dags()
    from airflow.api_fastapi.app import create_app

    with TestClient(create_app("core"), base_url="http://airflow.test") as http:
        yield http
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


def _sync_dags() -> None:
    from airflow.dag_processing.bundles.manager import DagBundlesManager
    from airflow.dag_processing.dagbag import BundleDagBag, sync_bag_to_db
    from airflow.utils.session import create_session

    manager = DagBundlesManager()
    with create_session() as s:
        manager.sync_bundles_to_db(session=s)
    for bundle in manager.get_all_dag_bundles():
        if not bundle.is_initialized:
            bundle.initialize()
        bag = BundleDagBag(dag_folder=bundle.path, bundle_path=bundle.path, bundle_name=bundle.name)
        assert not bag.import_errors, bag.import_errors
        sync_bag_to_db(bag, bundle.name, bundle.version)


def client(http, password=PASSWORD) -> AirflowClient:
    return AirflowClient("http://airflow.test", username="admin", password=password, http=http)


def set_paused(http, paused: bool) -> None:
    admin = client(http)
    response = admin._api("PATCH", f"/dags/{DAG_ID}", json={"is_paused": paused})
    assert response.status_code == 200, response.text


def runs(http) -> list[str]:
    response = client(http)._api("GET", f"/dags/{DAG_ID}/dagRuns")
    assert response.status_code == 200, response.text
    return [r["dag_run_id"] for r in response.json()["dag_runs"]]


def one_line(exc: BaseException) -> str:
    text = str(exc)
    assert text and "\n" not in text, text
    return text


# -- without an Airflow --------------------------------------------------------------------------
def test_unreachable_airflow_is_one_line_and_changes_nothing(session, monkeypatch):
    monkeypatch.setenv("ALTERFLOW_AIRFLOW_URL", f"http://127.0.0.1:{free_port()}")
    session = Session(Settings.from_env(), session.catalog)
    before = untouched(session)
    with pytest.raises(StatementError) as raised:
        list(session.run(ALTER))
    assert one_line(raised.value).startswith("cannot reach Airflow at http://127.0.0.1:")
    assert untouched(session) == before


@pytest.mark.parametrize("url", ["nonsense", "ftp://host/", "http://"])
def test_an_invalid_url_is_one_line_and_changes_nothing(session, url):
    before = untouched(session)
    with pytest.raises(AirflowRequestError) as raised:
        submit_alter(AirflowClient(url), session.catalog, AlterRequest("t", ALTER, request_id=new_run_id()))
    assert one_line(raised.value).startswith(f"ALTERFLOW_AIRFLOW_URL {url!r} is not")
    assert untouched(session) == before


def test_a_rejected_statement_is_refused_before_anything_is_sent(session, monkeypatch):
    monkeypatch.setenv("ALTERFLOW_AIRFLOW_URL", f"http://127.0.0.1:{free_port()}")  # never contacted
    session = Session(Settings.from_env(), session.catalog)
    before = untouched(session)
    with pytest.raises(StatementError) as raised:
        list(session.run("ALTER TABLE t DROP COLUMN id"))
    assert "cannot reach" not in one_line(raised.value) and "ALTER TABLE t" in str(raised.value)
    assert untouched(session) == before


def test_credentials_come_from_the_environment():
    c = AirflowClient.from_env("http://a:8080/", {"ALTERFLOW_AIRFLOW_USERNAME": "bob", "ALTERFLOW_AIRFLOW_PASSWORD": "pw"})
    assert (c.base, c.username, c.password) == ("http://a:8080", "bob", "pw")
    c = AirflowClient.from_env("http://a:8080", {})
    assert (c.username, c.password) == ("admin", "")


# -- against Airflow's API app -------------------------------------------------------------------
def test_wrong_password_is_one_line_and_submits_nothing(session, airflow_api):
    before_runs = runs(airflow_api)
    before = untouched(session)
    request = AlterRequest("t", ALTER, request_id=new_run_id())
    with pytest.raises(AirflowRequestError) as raised:
        submit_alter(client(airflow_api, password="wrong"), session.catalog, request)
    assert "refused the credentials of user 'admin'" in one_line(raised.value)
    assert runs(airflow_api) == before_runs and untouched(session) == before


def test_a_paused_dag_is_one_line_and_submits_nothing(session, airflow_api):
    set_paused(airflow_api, True)
    before_runs = runs(airflow_api)
    with pytest.raises(AirflowRequestError) as raised:
        submit_alter(client(airflow_api), session.catalog, AlterRequest("t", ALTER, request_id=new_run_id()))
    assert f"DAG {DAG_ID} is paused" in one_line(raised.value)
    assert runs(airflow_api) == before_runs


def test_trigger_creates_the_run_with_the_chosen_id_and_conf(airflow_api):
    set_paused(airflow_api, False)
    c = client(airflow_api)
    c.check_dag()
    request = AlterRequest("t", ALTER, {"timeout": "60"}, request_id=new_run_id())
    created = c.trigger(request)
    assert created["dag_run_id"] == request.request_id and created["logical_date"] is None
    assert created["conf"] == {"table": "t", "statement": ALTER, "properties": {"timeout": "60"}}
    assert c.run(request.request_id)["state"] in ("queued", "running")
    with pytest.raises(AirflowRequestError) as raised:  # the same id twice: refused, one line
        c.trigger(request)
    assert "Airflow refused the run" in one_line(raised.value)


def test_waiting_for_a_run_nobody_schedules_gives_up_after_the_wait_timeout(airflow_api):
    set_paused(airflow_api, False)
    c = client(airflow_api)
    c.poll_seconds, c.wait_timeout_s = 0.2, 1.0
    request = AlterRequest("t", ALTER, request_id=new_run_id())
    c.trigger(request)  # no scheduler here: the run stays queued
    with pytest.raises(AirflowRequestError) as raised:
        c.wait(request.request_id)
    assert f"Airflow run {request.request_id} of {DAG_ID} is still queued" in one_line(raised.value)
