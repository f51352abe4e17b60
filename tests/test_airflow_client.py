"""The CLI's REST trigger (`alterflow.airflow_client`) against Airflow's real API app, served
in-process (Starlette's TestClient over `airflow.api_fastapi.app.create_app`, the test run's
metadata database): token, DAG checks, the run it creates. And its bad cases: an unreachable or
invalid URL, wrong credentials, an unknown or paused DAG: one clear line, nothing submitted, the
table untouched. (The live test with a real api-server and scheduler runs the whole ALTER.)"""

from __future__ import annotations

import json
import socket

import httpx
import pytest

from alterflow.airflow_client import DAG_ID, AirflowClient, AirflowRequestError, new_run_id
from alterflow.engine.session import Session, StatementError
from alterflow.settings import Settings
from alterflow.workflow.airflow_submission import submit_alter
from alterflow.workflow.request import AlterRequest
from tests.support.ports import free_port

PASSWORD = "right-password"
TABLE = "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id))"
ALTER = "ALTER TABLE t ADD COLUMN n INT"


@pytest.fixture
def session_with_table(tmp_path):
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
def test_unreachable_airflow_is_one_line_and_changes_nothing(session_with_table, monkeypatch):
    monkeypatch.setenv("ALTERFLOW_AIRFLOW_URL", f"http://127.0.0.1:{free_port()}")
    session = Session(Settings.from_env(), session_with_table.catalog)
    before = untouched(session)
    with pytest.raises(StatementError) as raised:
        list(session.run(ALTER))
    assert one_line(raised.value).startswith("cannot reach Airflow at http://127.0.0.1:")
    assert untouched(session) == before


@pytest.mark.parametrize("url", ["nonsense", "ftp://host/", "http://"])
def test_an_invalid_url_is_one_line_and_changes_nothing(session_with_table, url):
    before = untouched(session_with_table)
    with pytest.raises(AirflowRequestError) as raised:
        submit_alter(AirflowClient(url), session_with_table.catalog, AlterRequest("t", ALTER, request_id=new_run_id()))
    assert one_line(raised.value).startswith(f"ALTERFLOW_AIRFLOW_URL {url!r} is not")
    assert untouched(session_with_table) == before


def test_a_rejected_statement_is_refused_before_anything_is_sent(session_with_table, monkeypatch):
    monkeypatch.setenv("ALTERFLOW_AIRFLOW_URL", f"http://127.0.0.1:{free_port()}")  # never contacted
    session = Session(Settings.from_env(), session_with_table.catalog)
    before = untouched(session)
    with pytest.raises(StatementError) as raised:
        list(session.run("ALTER TABLE t DROP COLUMN id"))
    assert "cannot reach" not in one_line(raised.value) and "ALTER TABLE t" in str(raised.value)
    assert untouched(session) == before


def test_credentials_come_from_the_environment():
    env = {"ALTERFLOW_AIRFLOW_URL": "http://a:8080/", "ALTERFLOW_AIRFLOW_USERNAME": "bob", "ALTERFLOW_AIRFLOW_PASSWORD": "pw"}
    c = AirflowClient.from_settings(Settings.from_env(env))
    assert (c.base, c.username, c.password) == ("http://a:8080", "bob", "pw")
    c = AirflowClient.from_settings(Settings.from_env({"ALTERFLOW_AIRFLOW_URL": "http://a:8080"}))
    assert (c.username, c.password) == ("admin", "")


# -- against Airflow's API app -------------------------------------------------------------------
def test_wrong_password_is_one_line_and_submits_nothing(session_with_table, airflow_api):
    before_runs = runs(airflow_api)
    before = untouched(session_with_table)
    request = AlterRequest("t", ALTER, request_id=new_run_id())
    with pytest.raises(AirflowRequestError) as raised:
        submit_alter(client(airflow_api, password="wrong"), session_with_table.catalog, request)
    assert "refused the credentials of user 'admin'" in one_line(raised.value)
    assert runs(airflow_api) == before_runs and untouched(session_with_table) == before


def test_a_paused_dag_is_one_line_and_submits_nothing(session_with_table, airflow_api):
    set_paused(airflow_api, True)
    before_runs = runs(airflow_api)
    with pytest.raises(AirflowRequestError) as raised:
        submit_alter(client(airflow_api), session_with_table.catalog, AlterRequest("t", ALTER, request_id=new_run_id()))
    assert f"DAG {DAG_ID} is paused" in one_line(raised.value)
    assert runs(airflow_api) == before_runs


def test_trigger_creates_the_run_with_the_chosen_id_and_conf(airflow_api):
    set_paused(airflow_api, False)
    c = client(airflow_api)
    c.check_dag()
    request = AlterRequest("t", ALTER, {"timeout": "60"}, request_id=new_run_id())
    created = c.trigger(request.request_id, request.run_conf())
    assert created["dag_run_id"] == request.request_id and created["logical_date"] is None
    assert created["conf"] == {"table": "t", "statement": ALTER, "properties": {"timeout": "60"}}
    assert c.run(request.request_id)["state"] in ("queued", "running")
    with pytest.raises(AirflowRequestError) as raised:  # the same id twice: refused, one line
        c.trigger(request.request_id, request.run_conf())
    assert "Airflow refused the run" in one_line(raised.value)


def test_waiting_for_a_run_nobody_schedules_gives_up_after_the_wait_timeout(airflow_api):
    set_paused(airflow_api, False)
    c = client(airflow_api)
    c.poll_seconds, c.wait_timeout_s = 0.2, 1.0
    request = AlterRequest("t", ALTER, request_id=new_run_id())
    c.trigger(request.request_id, request.run_conf())  # no scheduler here: the run stays queued
    with pytest.raises(AirflowRequestError) as raised:
        c.wait(request.request_id)
    assert f"Airflow run {request.request_id} of {DAG_ID} is still queued" in one_line(raised.value)


# -- server errors: retried, and a repeated trigger never makes a second run ----------------------
class ServerErrors:
    """An ASGI layer in front of Airflow's real app for POSTs to the DAG's runs: the first `refuse`
    are answered 503 without reaching Airflow (a proxy whose api-server restarts); the next `lose`
    reach Airflow, which creates the run, but their answer is replaced by a 500 (an answer lost)."""

    def __init__(self, app, refuse: int = 0, lose: int = 0):
        self.app, self.refuse, self.lose, self.posts = app, refuse, lose, 0

    async def __call__(self, scope, receive, send):
        from starlette.responses import JSONResponse

        if scope["type"] != "http" or scope["method"] != "POST" or not scope["path"].endswith("/dagRuns"):
            return await self.app(scope, receive, send)
        self.posts += 1
        if self.refuse > 0:
            self.refuse -= 1
            return await JSONResponse({"detail": "upstream restarting"}, 503)(scope, receive, send)
        if self.lose > 0:
            self.lose -= 1

            async def dropped(message):
                return None

            await self.app(scope, receive, dropped)
            return await JSONResponse({"detail": "Database error"}, 500)(scope, receive, send)
        return await self.app(scope, receive, send)


def flaky_client(airflow_api, **errors) -> tuple[AirflowClient, ServerErrors]:
    from starlette.testclient import TestClient

    layer = ServerErrors(airflow_api.app, **errors)  # the app is started by the airflow_api fixture
    c = client(TestClient(layer, base_url="http://airflow.test"))
    c.retry_delays_s = (0.01, 0.01, 0.01)
    return c, layer


def test_server_errors_are_retried_and_the_run_is_created_once(airflow_api):
    set_paused(airflow_api, False)
    c, layer = flaky_client(airflow_api, refuse=2)
    request = AlterRequest("t", ALTER, request_id=new_run_id())
    before = runs(airflow_api)
    assert c.trigger(request.request_id, request.run_conf())["dag_run_id"] == request.request_id
    assert layer.posts == 3
    assert sorted(runs(airflow_api)) == sorted([*before, request.request_id])


def test_a_lost_answer_then_a_repeat_takes_the_run_the_first_attempt_made(airflow_api):
    set_paused(airflow_api, False)
    c, layer = flaky_client(airflow_api, lose=1)
    request = AlterRequest("t", ALTER, {"timeout": "90"}, request_id=new_run_id())
    before = runs(airflow_api)
    created = c.trigger(request.request_id, request.run_conf())
    assert layer.posts == 2  # the second POST found the run (409) and took it: its conf is ours
    assert (created["dag_run_id"], created["conf"]["properties"]) == (request.request_id, {"timeout": "90"})
    assert sorted(runs(airflow_api)) == sorted([*before, request.request_id])


def test_server_errors_past_the_retries_are_one_line_and_make_no_run(airflow_api):
    set_paused(airflow_api, False)
    c, layer = flaky_client(airflow_api, refuse=10)
    request = AlterRequest("t", ALTER, request_id=new_run_id())
    before = runs(airflow_api)
    with pytest.raises(AirflowRequestError) as raised:
        c.trigger(request.request_id, request.run_conf())
    assert one_line(raised.value) == "ALTER TABLE t: Airflow refused the run: upstream restarting"
    assert layer.posts == 1 + len(c.retry_delays_s)
    assert runs(airflow_api) == before


# -- no answer in time: retried like a server error ------------------------------------------------
class LostAnswers(httpx.BaseTransport):
    """A transport in front of Airflow's real app whose first `lose` POSTs to the DAG's runs reach
    Airflow (which creates the run) but time out before their answer comes back."""

    def __init__(self, app_client, lose: int):
        self.app_client, self.lose, self.posts = app_client, lose, 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        answer = self.app_client.send(request)
        if request.method == "POST" and request.url.path.endswith("/dagRuns"):
            self.posts += 1
            if self.lose > 0:
                self.lose -= 1
                raise httpx.ReadTimeout("timed out", request=request)
        headers = {k: v for k, v in answer.headers.items() if k.lower() not in ("content-encoding", "content-length")}
        return httpx.Response(answer.status_code, headers=headers, content=answer.content)


def test_an_answer_that_times_out_is_retried_and_the_run_is_created_once(airflow_api):
    set_paused(airflow_api, False)
    layer = LostAnswers(airflow_api, lose=2)
    c = client(httpx.Client(transport=layer, base_url="http://airflow.test"))
    c.retry_delays_s = (0.01, 0.01, 0.01)
    request = AlterRequest("t", ALTER, request_id=new_run_id())
    before = runs(airflow_api)
    created = c.trigger(request.request_id, request.run_conf())
    assert layer.posts == 3  # two timed out after Airflow made the run; the third found it (409) and took it
    assert created["dag_run_id"] == request.request_id
    assert sorted(runs(airflow_api)) == sorted([*before, request.request_id])


def test_a_server_that_never_answers_is_one_line_after_the_retries(session_with_table, monkeypatch):
    """A real socket that accepts and reads requests but never answers: each call times out, is
    repeated after each delay, then fails with one line; the table is untouched."""
    import threading

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    requests: list[bytes] = []
    held: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            held.append(conn)
            requests.append(conn.recv(65536).split(b"\r\n", 1)[0])

    threading.Thread(target=accept, daemon=True).start()
    url = f"http://127.0.0.1:{listener.getsockname()[1]}"
    try:
        c = AirflowClient(url, username="admin", password=PASSWORD, timeout_s=0.3, retry_delays_s=(0.01, 0.01))
        before = untouched(session_with_table)
        with pytest.raises(AirflowRequestError) as raised:
            submit_alter(c, session_with_table.catalog, AlterRequest("t", ALTER, request_id=new_run_id()))
        assert one_line(raised.value) == f"cannot reach Airflow at {url} (ALTERFLOW_AIRFLOW_URL): timed out"
        assert requests == [b"POST /auth/token HTTP/1.1"] * 3
        assert untouched(session_with_table) == before
    finally:
        listener.close()
        for conn in held:
            conn.close()


def test_a_run_is_alive_while_airflow_queues_or_runs_it(airflow_api):
    """What `alterflow gc` asks before it takes an orphaned job over: a run Airflow queues (just
    triggered) is alive; one that ended (marked failed) and one Airflow never had are not."""
    set_paused(airflow_api, False)
    c = client(airflow_api)
    request = AlterRequest("t", ALTER, {}, request_id=new_run_id())
    c.trigger(request.request_id, request.run_conf())
    assert c.run_is_alive(request.request_id)
    marked = c._api("PATCH", f"/dags/{DAG_ID}/dagRuns/{request.request_id}", json={"state": "failed"})
    assert marked.status_code == 200, marked.text
    assert not c.run_is_alive(request.request_id)
    assert not c.run_is_alive(new_run_id())  # Airflow has no such run
