"""Airflow's own REST API (`airflow.api_fastapi.app.create_app("core")`: `/api/v2`, `/auth`, the UI's
routes) served by uvicorn on a free port in this process, on the test run's Airflow metadata
database, so a test can answer what a `dag.test()` run in the main thread waits for (a
human-in-the-loop task) over HTTP with a JWT from Airflow's auth manager, as a person or a bot would.
`dag.test()` parks such a task in `awaiting_input` until a response recorded through this API
schedules it again."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator

import httpx

from tests.support.ports import free_port


class AirflowRest:
    def __init__(self, url: str, token: str):
        self.url = url
        self.headers = {"Authorization": f"Bearer {token}"}

    def get(self, path: str, **kwargs) -> httpx.Response:
        return httpx.get(f"{self.url}{path}", headers=self.headers, timeout=60, **kwargs)

    def patch(self, path: str, **kwargs) -> httpx.Response:
        return httpx.patch(f"{self.url}{path}", headers=self.headers, timeout=60, **kwargs)


def mint_token(username: str = "alice", role: str = "admin") -> str:
    """A JWT signed by the configured auth manager (SimpleAuthManager) for that user."""
    from airflow.api_fastapi.app import init_auth_manager
    from airflow.api_fastapi.auth.managers.simple.user import SimpleAuthManagerUser

    return init_auth_manager().generate_jwt(SimpleAuthManagerUser(username=username, role=role))


@contextlib.contextmanager
def airflow_rest_api(username: str = "alice") -> Iterator[AirflowRest]:
    """Airflow's core API on http://127.0.0.1:<free port>, signed in as `username` (admin)."""
    import uvicorn
    from airflow.api_fastapi.app import create_app

    app = create_app("core")
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, name="airflow-rest-api", daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "Airflow's API did not start"
        time.sleep(0.05)
    try:
        yield AirflowRest(f"http://127.0.0.1:{port}", mint_token(username))
    finally:
        server.should_exit = True
        thread.join(15)
