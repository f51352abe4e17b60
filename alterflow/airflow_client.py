"""Airflow's REST API, as the `alterflow_schema_change` DAG's runs need it (docs/airflow.md): plain JSON in
and out over HTTP with httpx, no Airflow import, and nothing of the catalog or the workflow (an
ALTER submitted this way, planned and waited for: `alterflow.workflow.airflow_submission`).

    token   POST {url}/auth/token  {"username": ..., "password": ...}  -> {"access_token": ...}
    check   GET  {url}/api/v2/dags/alterflow_schema_change             (exists, not paused)
    trigger POST {url}/api/v2/dags/alterflow_schema_change/dagRuns
            {"dag_run_id": <the caller's>, "logical_date": null, "conf": {table, statement, properties}}
    wait    GET  {url}/api/v2/dags/alterflow_schema_change/dagRuns/{run_id} until it ends (or the
            caller has what it waits for)

Credentials come from ALTERFLOW_AIRFLOW_USERNAME (default `admin`) and ALTERFLOW_AIRFLOW_PASSWORD
(default empty, which only an Airflow with `simple_auth_manager_all_admins` accepts). Every
failure is one line.

A server error (500, 502, 503, 504: Airflow's SQLite metadata database busy, a proxy in front of a
restarting api-server) or no answer within the read timeout (70 s: longer than the 60 s that
`make airflow`'s SQLite metadata database waits for its lock) is retried a few times before it
counts. Every call may be repeated: the GETs change nothing, and a trigger carries its run id, so a
repeat that finds the run already there (its first attempt went through, the answer was lost)
takes that run if its conf is ours. A refused connection is not retried: Airflow is not there.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

import httpx

from alterflow.errors import UserError, shown
from alterflow.settings import DEFAULT_AIRFLOW_USERNAME, Settings

DAG_ID = "alterflow_schema_change"
RUN_ENDED = ("success", "failed")
RETRY_STATUSES = frozenset({500, 502, 503, 504})
RETRY_DELAYS_S = (1.0, 2.0, 4.0, 8.0)  # 15 s in all, then the server's answer stands
READ_TIMEOUT_S = 70.0  # above the 60 s SQLite lock wait of `make airflow` (alterflow/airflow/metadata_db.py)
CONNECT_TIMEOUT_S = 10.0


class AirflowRequestError(UserError):
    """Airflow could not be reached, refused us, or the run failed; the message is one line."""


def send_repeating(send: Callable[[], httpx.Response], delays_s=RETRY_DELAYS_S) -> tuple[httpx.Response, bool]:
    """`send()`'s response and whether it was sent more than once: a server error (RETRY_STATUSES)
    or no answer in time is repeated after each of `delays_s`, then the last outcome stands (the
    last timeout is raised). Any other failure, such as a refused connection, is raised at once."""
    delays = iter(delays_s)
    repeated = False
    while True:
        try:
            response = send()
        except httpx.TimeoutException:
            delay = next(delays, None)
            if delay is None:
                raise
        else:
            delay = next(delays, None) if response.status_code in RETRY_STATUSES else None
            if delay is None:
                return response, repeated
        repeated = True
        time.sleep(delay)


def new_run_id() -> str:
    return f"alterflow__{uuid.uuid4().hex}"


def _detail(response: httpx.Response) -> str:
    """The one-line reason of an error response (FastAPI's `detail`, or the status line)."""
    try:
        detail = response.json().get("detail")
    except ValueError:
        detail = None
    if isinstance(detail, list):  # request validation errors: [{"loc": [...], "msg": ...}, ...]
        detail = "; ".join(str(d.get("msg", d)) if isinstance(d, dict) else str(d) for d in detail)
    text = str(detail) if detail else f"HTTP {response.status_code} {response.reason_phrase}"
    return " ".join(text.split())


@dataclass
class AirflowClient:
    url: str
    username: str = DEFAULT_AIRFLOW_USERNAME
    password: str = ""
    timeout_s: float = READ_TIMEOUT_S  # for an answer; connecting gives up after CONNECT_TIMEOUT_S
    poll_seconds: float = 0.5  # a GET of the run: cheap, and the CLI answers within half a second of the run's end
    wait_timeout_s: float | None = None  # give up waiting for a run after this long (None: wait)
    retry_delays_s: tuple[float, ...] = RETRY_DELAYS_S  # pauses before repeating a call after a server error
    http: httpx.Client | None = None  # an httpx client to send with (e.g. one bound to an in-process app)
    _token: str | None = field(default=None, init=False, repr=False)
    _own_http: httpx.Client | None = field(default=None, init=False, repr=False)

    @classmethod
    def from_settings(cls, settings: Settings) -> AirflowClient:
        """The client of the settings' Airflow (ALTERFLOW_AIRFLOW_URL) with their credentials."""
        return cls(url=settings.airflow_url, username=settings.airflow_username, password=settings.airflow_password)

    # -- HTTP -----------------------------------------------------------------------------
    @property
    def base(self) -> str:
        return self.url.rstrip("/")

    def _client(self) -> httpx.Client:
        if self.http is not None:
            return self.http
        if self._own_http is None:
            try:
                url = httpx.URL(self.base)
            except httpx.InvalidURL as exc:
                raise AirflowRequestError(f"ALTERFLOW_AIRFLOW_URL {shown(self.url)} is not a valid URL: {exc}") from None
            if url.scheme not in ("http", "https") or not url.host:
                raise AirflowRequestError(f"ALTERFLOW_AIRFLOW_URL {shown(self.url)} is not an http:// or https:// URL")
            self._own_http = httpx.Client(
                base_url=self.base, timeout=httpx.Timeout(self.timeout_s, connect=min(CONNECT_TIMEOUT_S, self.timeout_s))
            )
        return self._own_http

    def close(self) -> None:
        if self._own_http is not None:
            self._own_http.close()
            self._own_http = None

    def __enter__(self) -> AirflowClient:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def _send(self, method: str, path: str, **kwargs) -> tuple[httpx.Response, bool]:
        """The response and whether the request was sent more than once (`send_repeating`)."""
        try:
            return send_repeating(lambda: self._client().request(method, path, **kwargs), self.retry_delays_s)
        except httpx.InvalidURL as exc:
            raise AirflowRequestError(f"ALTERFLOW_AIRFLOW_URL {shown(self.url)} is not a valid URL: {exc}") from None
        except httpx.HTTPError as exc:
            reason = " ".join(str(exc).split()) or type(exc).__name__
            raise AirflowRequestError(f"cannot reach Airflow at {self.base} (ALTERFLOW_AIRFLOW_URL): {reason}") from None

    def token(self) -> str:
        response, _ = self._send("POST", "/auth/token", json={"username": self.username, "password": self.password})
        if response.status_code in (400, 401, 403):
            raise AirflowRequestError(
                f"Airflow at {self.base} refused the credentials of user {shown(self.username)} "
                f"(ALTERFLOW_AIRFLOW_USERNAME / ALTERFLOW_AIRFLOW_PASSWORD): {_detail(response)}"
            )
        if response.status_code == 404:
            raise AirflowRequestError(f"{self.base} has no Airflow 3 API (POST /auth/token: HTTP 404); check ALTERFLOW_AIRFLOW_URL")
        if response.status_code >= 300:
            raise AirflowRequestError(f"Airflow at {self.base}: POST /auth/token failed: {_detail(response)}")
        try:
            self._token = response.json()["access_token"]
        except (ValueError, KeyError, TypeError):
            raise AirflowRequestError(
                f"{self.base} answered POST /auth/token without an access token; check ALTERFLOW_AIRFLOW_URL"
            ) from None
        return self._token

    def _api(self, method: str, path: str, **kwargs) -> httpx.Response:
        return self._call(method, path, **kwargs)[0]

    def _call(self, method: str, path: str, **kwargs) -> tuple[httpx.Response, bool]:
        """An authenticated /api/v2 call (repeated as `_send` says) and whether it was sent more
        than once; a token that expired meanwhile is renewed once."""
        if self._token is None:
            self.token()
        response, repeated = self._send(method, f"/api/v2{path}", headers={"Authorization": f"Bearer {self._token}"}, **kwargs)
        if response.status_code == 401:  # refused before anything happened: only the repeat counts
            self.token()
            response, repeated = self._send(method, f"/api/v2{path}", headers={"Authorization": f"Bearer {self._token}"}, **kwargs)
        return response, repeated

    # -- the DAG ----------------------------------------------------------------------------
    def check_dag(self) -> None:
        response = self._api("GET", f"/dags/{DAG_ID}")
        if response.status_code == 404:
            raise AirflowRequestError(f"Airflow at {self.base} has no DAG {DAG_ID}; deploy dags/ and plugins/ to it")
        if response.status_code >= 300:
            raise AirflowRequestError(f"Airflow at {self.base}: GET DAG {DAG_ID} failed: {_detail(response)}")
        if response.json().get("is_paused"):
            raise AirflowRequestError(f"DAG {DAG_ID} is paused in Airflow at {self.base}; unpause it (airflow dags unpause {DAG_ID})")

    def trigger(self, run_id: str, conf: dict) -> dict:
        """Create the DAG run `run_id` with `conf` (`table`, `statement`, `properties`...); returns
        the run as Airflow shows it."""
        body = {"dag_run_id": run_id, "logical_date": None, "conf": conf}
        response, repeated = self._call("POST", f"/dags/{DAG_ID}/dagRuns", json=body)
        if response.status_code == 409 and repeated:
            existing = self._api("GET", f"/dags/{DAG_ID}/dagRuns/{run_id}")
            if existing.status_code == 200 and existing.json().get("conf") == conf:
                return existing.json()
        if response.status_code >= 300:
            raise AirflowRequestError(f"ALTER TABLE {conf['table']}: Airflow refused the run: {_detail(response)}")
        return response.json()

    def run(self, run_id: str) -> dict:
        response = self._api("GET", f"/dags/{DAG_ID}/dagRuns/{run_id}")
        if response.status_code >= 300:
            raise AirflowRequestError(f"Airflow at {self.base}: GET run {run_id} failed: {_detail(response)}")
        return response.json()

    def run_is_alive(self, run_id: str) -> bool:
        """Whether Airflow still queues or runs the schema-change run `run_id` (False: it ended, or
        Airflow has no such run). `alterflow gc` asks it before it takes an orphaned job over."""
        response = self._api("GET", f"/dags/{DAG_ID}/dagRuns/{run_id}")
        if response.status_code == 404:
            return False
        if response.status_code >= 300:
            raise AirflowRequestError(f"Airflow at {self.base}: GET run {run_id} failed: {_detail(response)}")
        return response.json().get("state") in ("queued", "running")

    def failed_tasks(self, run_id: str) -> list[str]:
        response = self._api("GET", f"/dags/{DAG_ID}/dagRuns/{run_id}/taskInstances", params={"state": "failed"})
        if response.status_code >= 300:
            return []
        return [ti["task_id"] for ti in response.json().get("task_instances", [])]

    # -- assets -----------------------------------------------------------------------------
    def dags_reading_asset(self, uri: str) -> list[str]:
        """The DAGs scheduled on the asset `uri` or reading it as a task's inlet, sorted: Airflow 3's
        GET /api/v2/assets?uri_pattern=URI (a substring search, so only the asset whose URI is
        `uri` counts), its `scheduled_dags` and `consuming_tasks`, page by page."""
        dags: set[str] = set()
        offset = 0
        while True:
            response = self._api("GET", "/assets", params={"uri_pattern": uri, "limit": 100, "offset": offset})
            if response.status_code >= 300:
                raise AirflowRequestError(f"Airflow at {self.base}: GET /api/v2/assets failed: {_detail(response)}")
            try:
                body = response.json()
                assets = body["assets"]
                for asset in assets:
                    if asset["uri"] == uri:
                        dags.update(ref["dag_id"] for ref in [*asset["scheduled_dags"], *asset["consuming_tasks"]])
                total = int(body["total_entries"])
            except (ValueError, KeyError, TypeError):
                raise AirflowRequestError(
                    f"{self.base} answered GET /api/v2/assets with no Airflow 3 asset list; check ALTERFLOW_AIRFLOW_URL"
                ) from None
            offset += len(assets)
            if not assets or offset >= total:
                return sorted(dags)

    def wait(self, run_id: str, stop: Callable[[], bool] = lambda: False) -> str:
        """Poll the run until it ends (its state) or `stop()` says the caller has what it needs."""
        started = time.monotonic()
        while True:
            state = self.run(run_id)["state"]
            if state in RUN_ENDED:
                return state
            if stop():
                return state
            if self.wait_timeout_s is not None and time.monotonic() - started > self.wait_timeout_s:
                raise AirflowRequestError(
                    f"Airflow run {run_id} of {DAG_ID} is still {state} after {self.wait_timeout_s:g} s; "
                    f"it goes on in Airflow (is its scheduler running?)"
                )
            time.sleep(self.poll_seconds)
