"""The FastAPI app the Airflow plugin mounts at `/alterflow`: the "Schema changes" page and its
JSON API. Thin: every answer comes from the catalog (`catalog.Catalog`) and every action from the
core (`alterflow.workflow.job_control`, the same code as CANCEL / RESUME ALTER TABLE COLUMN).

Who may do what is Airflow's to say, never widened here. Every route needs an authenticated Airflow
user, the way Airflow's own API does it (`airflow.api_fastapi.core_api.security.get_user`): a
`Bearer` JWT, or the `_token` cookie the Airflow UI holds (sent with the page's iframe and its
fetches). Then each route asks Airflow's auth manager through Airflow's own check
(`requires_access_dag`, which also names the DAG's team, so team-scoped access applies) what the
same request to Airflow's REST API would need on the DAG `alterflow_schema_change`:

    GET  /                                  the page (HTML; ?table= filters)   read the DAG
    GET  /api/jobs[?table=T]                alter jobs, newest first           read the DAG
    GET  /api/jobs/{job_id}                 one job                            read the DAG
    GET  /api/jobs/{job_id}/analysis        EXPLAIN ANALYZE of its conversion  read the DAG
    GET  /api/tables                        live tables                        read the DAG
    GET  /api/tables/{table}/versions       a table's schema versions          read the DAG
    GET  /api/migrations                    the migrations directory: files,   read the DAG
                                            states, drift, the pending lint
    POST /api/jobs/{job_id}/cancel          cancel an unfinished job           edit its runs
    POST /api/jobs/{job_id}/resume          swap a READY_TO_SWAP job, or start create its runs
                                            a DAG run that takes over an orphaned job
    POST /api/tables/{table}/versions/{n}/revert   a DAG run that reverts      create its runs

A POST is JSON (`Content-Type: application/json`, body `{}` or none) and carries the header
`X-Alterflow-Request` (any non-empty value; the page sends `1`), which a cross-site form cannot
send: without the header 403, another content type 415, before anything is looked at.

Every action (cancel, resume, revert, and analyze, which reads the table's values) is written to
Airflow's audit log (`airflow.models.log.Log`: the Audit Log page, `GET /api/v2/eventLogs`) the way
Airflow's own API does it (`action_logging`): once allowed and its job or table found, before it
is carried out, so an attempt that the job's state then refuses is recorded too. Event
`alterflow_<action>`, owner the user, DAG `alterflow_schema_change`, the run it starts if any, and
extra `{"table", "job_id", ...}`.

Errors are `{"detail": "<one line>"}`: 401 not signed in, 403 not allowed (or no request header),
415 not JSON, 422 a malformed id, name or body, 404 unknown, 409 the job's state forbids it, 503
the catalog cannot be reached. None of them changes anything.
"""

from __future__ import annotations

import dataclasses
import json
import pathlib
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Annotated
from urllib.parse import quote

from airflow.api_fastapi.app import get_auth_manager
from airflow.api_fastapi.auth.managers.models.base_user import BaseUser
from airflow.api_fastapi.auth.managers.models.resource_details import DagAccessEntity
from airflow.api_fastapi.core_api.security import bearer_scheme, get_user, requires_access_dag
from fastapi import APIRouter, Depends, FastAPI, HTTPException, Request, status
from fastapi.exception_handlers import http_exception_handler
from fastapi.responses import HTMLResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from sqlalchemy.exc import OperationalError
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

from alterflow.airflow import page
from alterflow.airflow.hooks import AlterflowConnectionError, AlterflowHook
from alterflow.airflow.mount import MOUNT_PATH, UI_ROUTE
from alterflow.airflow.page_data import job_json, jobs_json, migrations_json, table_json, utc_text, version_json
from alterflow.catalog.catalog import Catalog, TableInfo, utcnow
from alterflow.catalog.catalog_errors import CatalogLost, CatalogOutdated, CatalogUnavailable, UnknownObject
from alterflow.catalog.heavy_jobs import HeavyJobs
from alterflow.catalog.states import JobState
from alterflow.errors import capped, first_line, shown
from alterflow.settings import Settings
from alterflow.sql.names import MAX_NAME, valid_name
from alterflow.workflow import job_control

SCHEMA_CHANGE_DAG = "alterflow_schema_change"
HERE = pathlib.Path(__file__).resolve().parent
_JOB_ID = re.compile(r"[1-9][0-9]{0,17}")  # below 2**63: a catalog id

app = FastAPI(
    title="alterflow: Schema changes",
    description="Alter jobs and schema history of the alterflow catalog.",
    docs_url=None,
    redoc_url=None,
    openapi_url=None,  # nothing is served to anonymous callers but the page's CSS and JS
)
app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")


@app.exception_handler(OperationalError)
async def _catalog_unreachable(_request: Request, exc: OperationalError) -> JSONResponse:
    first = first_line(exc.orig or exc)
    return JSONResponse({"detail": capped(f"the alterflow catalog cannot be reached: {first}")}, status.HTTP_503_SERVICE_UNAVAILABLE)


@app.exception_handler(CatalogUnavailable)
async def _catalog_not_opened(_request: Request, exc: CatalogUnavailable) -> JSONResponse:
    """The catalog could not be opened (no server, no driver, a bad URL) or its server went away
    (CatalogLost): its one line, as a 503."""
    reason = getattr(exc, "reason", None) or str(exc).split(": ", 1)[-1]
    return JSONResponse({"detail": capped(f"the alterflow catalog cannot be reached: {reason}")}, status.HTTP_503_SERVICE_UNAVAILABLE)


@app.exception_handler(AlterflowConnectionError)
async def _connection_unusable(_request: Request, exc: AlterflowConnectionError) -> JSONResponse:
    """The Airflow connection alterflow_default cannot be used (a bad URL, a password without a user): a 503."""
    return JSONResponse({"detail": capped(f"the alterflow catalog cannot be reached: {exc}")}, status.HTTP_503_SERVICE_UNAVAILABLE)


@app.exception_handler(CatalogOutdated)
async def _catalog_outdated(_request: Request, exc: CatalogOutdated) -> JSONResponse:
    """A PostgreSQL catalog not at this release's migration (`alterflow db upgrade`), as a 503."""
    return JSONResponse({"detail": first_line(exc)}, status.HTTP_503_SERVICE_UNAVAILABLE)


@app.exception_handler(StarletteHTTPException)
async def _one_short_line(request: Request, exc: StarletteHTTPException):
    """Every `detail` is one short line (docs/semantics.md, "Bad input"): shortened, control characters escaped."""
    if isinstance(exc.detail, str):
        exc.detail = first_line(Exception(exc.detail))
    return await http_exception_handler(request, exc)


# -- inputs ---------------------------------------------------------------------------------------
def _shown(text: str) -> str:
    return shown(text, 40)


def parse_job_id(text: str) -> int:
    if not _JOB_ID.fullmatch(text):
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, f"malformed job id {_shown(text)}: a job id is a positive integer")
    return int(text)


def check_name(text: str) -> str:
    if not valid_name(text):
        raise HTTPException(
            status.HTTP_422_UNPROCESSABLE_CONTENT,
            f"malformed table name {_shown(text)}: names match [A-Za-z_][A-Za-z0-9_]* up to {MAX_NAME} characters",
        )
    return text


# -- the catalog ----------------------------------------------------------------------------------
def open_catalog() -> tuple[Settings, Catalog]:
    """The catalog and warehouse the DAGs use: the Airflow connection `alterflow_default`, else the
    environment, as the CLI finds them (ALTERFLOW_*)."""
    hook = AlterflowHook()
    settings = hook.get_settings()
    with settings.dirs_for_catalog():
        return settings, hook.catalog(settings)


@contextmanager
def _answers() -> Iterator[None]:
    """The core's refusals as HTTP answers."""
    try:
        yield
    except UnknownObject as exc:
        raise HTTPException(status.HTTP_404_NOT_FOUND, first_line(exc)) from None
    except job_control.JobControlRefused as exc:
        raise HTTPException(status.HTTP_409_CONFLICT, first_line(exc)) from None


def _table(catalog: Catalog, name: str | None) -> TableInfo | None:
    """The table a `?table=` names (empty: no filter)."""
    if not name:
        return None
    with _answers():
        return catalog.table(check_name(name))


# -- who may do what ------------------------------------------------------------------------------
ACTION_HEADER = "X-Alterflow-Request"  # a cross-site form cannot send it; the page's fetches do


class Access:
    """What a request needs on the schema-change DAG, in the words of Airflow's auth manager."""

    READ = ("GET", None, "read access to the DAG")
    EDIT_RUNS = ("PUT", DagAccessEntity.RUN, "edit access to runs of the DAG")
    CREATE_RUNS = ("POST", DagAccessEntity.RUN, "create access to runs of the DAG")


def allowed(request: Request, user: BaseUser, access: tuple) -> bool:
    """Whether Airflow lets `user` do this on the DAG `alterflow_schema_change`: Airflow's own
    check (`requires_access_dag`), which finds the DAG's team and asks the auth manager."""
    method, entity, _what = access
    try:
        requires_access_dag(method, entity, param_dag_id=SCHEMA_CHANGE_DAG)(request, user)
    except HTTPException as exc:
        if exc.status_code != status.HTTP_403_FORBIDDEN:
            raise
        return False
    return True


SignedIn = Annotated[BaseUser, Depends(get_user)]


async def _json_request(request: Request, user: SignedIn) -> BaseUser:
    """A POST that a page of another site cannot make: the header, then a JSON body (`{}` or none)."""
    if not request.headers.get(ACTION_HEADER, "").strip():
        raise HTTPException(
            status.HTTP_403_FORBIDDEN,
            f"a POST to this API needs the header {ACTION_HEADER}: 1 (and a JSON body, Content-Type: application/json)",
        )
    media = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media != "application/json":
        raise HTTPException(
            status.HTTP_415_UNSUPPORTED_MEDIA_TYPE,
            f"a POST to this API is JSON (Content-Type: application/json); this one is {_shown(media) if media else 'without a Content-Type'}",
        )
    body = (await request.body()).strip()
    if body:
        try:
            data = json.loads(body)
        except ValueError:
            data = None
        if data != {}:
            raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, "the body of this POST is an empty JSON object, {}")
    return user


Posting = Annotated[BaseUser, Depends(_json_request)]


def _needs(access: tuple, doing: str, *, post: bool = False) -> Callable[..., BaseUser]:
    """A dependency: the signed-in user (and for a POST its form, `_json_request`), allowed `access`."""

    def check(request: Request, user: BaseUser) -> BaseUser:
        if not allowed(request, user, access):
            raise HTTPException(
                status.HTTP_403_FORBIDDEN, f"user {user.get_name()} may not {doing}: that needs {access[2]} {SCHEMA_CHANGE_DAG}"
            )
        return user

    def posting(request: Request, user: Posting) -> BaseUser:
        return check(request, user)

    def reading(request: Request, user: SignedIn) -> BaseUser:
        return check(request, user)

    return posting if post else reading


Reader = Annotated[BaseUser, Depends(_needs(Access.READ, "see alter jobs or schema versions"))]
Canceller = Annotated[BaseUser, Depends(_needs(Access.EDIT_RUNS, "cancel alter jobs", post=True))]
Resumer = Annotated[BaseUser, Depends(_needs(Access.CREATE_RUNS, "resume alter jobs", post=True))]
Reverter = Annotated[BaseUser, Depends(_needs(Access.CREATE_RUNS, "revert tables", post=True))]


def audit(event: str, user: BaseUser, request: Request, extra: dict, run_id: str | None = None) -> None:
    """One row of Airflow's audit log, written as Airflow's `action_logging` writes its API's
    (committed on its own, before the action): `extra` holds at least the table and the job."""
    from airflow.models.log import Log
    from airflow.utils.session import create_session

    with create_session() as session:
        session.add(
            Log(
                event=f"alterflow_{event}",
                owner=user.get_name(),
                owner_display_name=user.get_name(),
                extra=json.dumps({**extra, "method": request.method}),
                dag_id=SCHEMA_CHANGE_DAG,
                run_id=run_id,
            )
        )


async def _page_user(request: Request) -> BaseUser | None:
    """The signed-in user of a page request, or None (no or a bad token): Airflow's own check."""
    try:
        return await get_user(request, None, await bearer_scheme(request))
    except HTTPException:
        return None


def _base(request: Request) -> str:
    """Where this app is mounted, as the browser sees it (e.g. `/alterflow`)."""
    return request.scope.get("root_path", "").rstrip("/")


# -- the page -------------------------------------------------------------------------------------
REFRESH_HEADER = "X-Alterflow-Refresh"  # the page's live refresh: jobs and history only, no lint


@app.get("/", response_class=HTMLResponse, include_in_schema=False)
async def schema_changes_page(request: Request, table: str | None = None, migrations: str | None = None) -> HTMLResponse:
    base = _base(request)
    user = await _page_user(request)
    if user is None:
        airflow_root = base.removesuffix(MOUNT_PATH)  # Airflow's own base path ("" by default)
        login = get_auth_manager().get_url_login(next_url=f"{airflow_root}/plugin/{UI_ROUTE}")
        html = page.render_message(base, "Not signed in", "sign in to Airflow to see schema changes.", ("Sign in", login))
        return HTMLResponse(html, status.HTTP_401_UNAUTHORIZED)
    try:
        return HTMLResponse(await run_in_threadpool(_render, request, base, user, table, migrations))
    except HTTPException as exc:
        link = ("All tables", f"{base}/") if exc.status_code != status.HTTP_403_FORBIDDEN else None
        return HTMLResponse(page.render_message(base, "Cannot show this", exc.detail, link), exc.status_code)


def _render(request: Request, base: str, user: BaseUser, table: str | None, migrations: str | None = None) -> str:
    if not allowed(request, user, Access.READ):
        raise HTTPException(
            status.HTTP_403_FORBIDDEN,
            f"user {user.get_name()} may not see schema changes: that needs {Access.READ[2]} {SCHEMA_CHANGE_DAG}",
        )
    may_cancel, may_start = allowed(request, user, Access.EDIT_RUNS), allowed(request, user, Access.CREATE_RUNS)
    settings, catalog = open_catalog()
    info = _table(catalog, table)
    if request.headers.get(REFRESH_HEADER):  # a live refresh: jobs and history only
        model = page.page_model(catalog, info)
    else:
        directory, source, directories = _migrations_directory(settings, migrations)
        model = page.page_model(catalog, info, migrations=directory, warehouse=settings.warehouse, migrations_source=source)
        model["migrations"]["directories"] = directories
    _link_runs(model, base.removesuffix(MOUNT_PATH), info.name if info is not None else None)
    return page.render_page(model, base, user.get_name(), may_cancel=may_cancel, may_start=may_start)


LATEST_RUN = "the directory the latest alterflow_migrate run read"


def _migrations_directory(settings: Settings, asked: str | None) -> tuple[pathlib.Path, str, list[dict]]:
    """The Migrations section's directory and where it comes from: `asked` (one of those listed),
    else the one the latest alterflow_migrate run read, else the api-server's ALTERFLOW_MIGRATIONS;
    and every directory it may show (each run's, then the api-server's), for the section's list."""
    from alterflow.airflow import runs
    from alterflow.airflow.page_data import API_SERVER_MIGRATIONS

    read = runs.migrate_directories()
    own = str(pathlib.Path(settings.migrations).absolute())
    listed = read + ([own] if own not in read else [])
    if asked is not None and asked not in listed:
        raise HTTPException(
            status.HTTP_400_BAD_REQUEST,
            f"migrations directory {shown(asked, 200)} is neither the api-server's nor one an alterflow_migrate run read",
        )
    chosen = asked or listed[0]
    source = (
        LATEST_RUN
        if read and chosen == read[0]
        else "read by an earlier alterflow_migrate run"
        if chosen in read
        else API_SERVER_MIGRATIONS
    )
    return pathlib.Path(chosen), source, [{"path": path, "selected": path == chosen} for path in listed]


def run_url(airflow_root: str, run_id: str) -> str:
    """The Airflow UI's page of a run of alterflow_schema_change."""
    return f"{airflow_root}/dags/{SCHEMA_CHANGE_DAG}/runs/{quote(run_id, safe='')}"


def _link_runs(model: dict, airflow_root: str, table: str | None) -> None:
    """Every job an Airflow run made links to the run; the runs that failed before making a job
    are listed with their line (`alterflow.airflow.runs`)."""
    from alterflow.airflow import runs

    request_ids = [job["request_id"] for job in model["jobs"]]
    made_by_runs = runs.runs_among(request_ids)
    for job in model["jobs"]:
        job["run_url"] = run_url(airflow_root, job["request_id"]) if job["request_id"] in made_by_runs else None
    failed = runs.failed_runs_without_job(set(request_ids), table)
    model["failed_runs"] = [
        {**dataclasses.asdict(run), "failed_at": utc_text(run.failed_at), "run_url": run_url(airflow_root, run.run_id)} for run in failed
    ]


# -- the JSON API ---------------------------------------------------------------------------------
api = APIRouter(prefix="/api")


@api.get("/jobs")
def list_jobs(user: Reader, table: str | None = None) -> dict:
    _settings, catalog = open_catalog()
    info = _table(catalog, table)
    now = utcnow()
    jobs = jobs_json(catalog, list(reversed(catalog.jobs(info.id if info is not None else None))), now)
    return {"jobs": jobs, "total": len(jobs)}


@api.get("/jobs/{job_id}")
def get_job(job_id: str, user: Reader) -> dict:
    number = parse_job_id(job_id)
    _settings, catalog = open_catalog()
    with _answers():
        return jobs_json(catalog, [HeavyJobs(catalog).job(number)], utcnow())[0]


@api.get("/jobs/{job_id}/analysis")
def analyze_job(job_id: str, user: Reader, request: Request) -> dict:
    """EXPLAIN ANALYZE of an unfinished heavyweight job's conversion: read-only, so read access,
    but it shows values of the table, so it is audited like an action."""
    from alterflow.errors import UserError
    from alterflow.workflow.explain import analyze_job as analysis_of

    number = parse_job_id(job_id)
    settings, catalog = open_catalog()
    with _answers():
        job = HeavyJobs(catalog).job(number)
        audit("analyze_job", user, request, {"table": job.table_name, "job_id": number})
        try:
            return analysis_of(catalog, settings.warehouse, number)
        except UnknownObject:
            raise
        except CatalogLost:  # the catalog's server went away: a 503, as for a catalog that cannot be opened
            raise
        except UserError as exc:
            raise HTTPException(status.HTTP_409_CONFLICT, first_line(exc)) from None


@api.post("/jobs/{job_id}/cancel")
def cancel_job(job_id: str, user: Canceller, request: Request) -> dict:
    number = parse_job_id(job_id)
    settings, catalog = open_catalog()
    with _answers():
        audit("cancel_job", user, request, {"table": HeavyJobs(catalog).job(number).table_name, "job_id": number})
        job = job_control.cancel_job(catalog, settings.warehouse, number, f"cancelled by {user.get_name()} on the Schema changes page")
    return job_json(job, utcnow())


@api.post("/jobs/{job_id}/resume")
def resume_job(job_id: str, user: Resumer, request: Request) -> dict:
    """A postponed swap is done here; an orphaned job is taken over by a new run of the
    schema-change DAG with the job's statement (the api-server runs no conversion itself). Both
    need the right to create runs: a resume may start one, and decides which only from the job."""
    from alterflow.airflow.gc_tasks import resume_run_id, takeover_conf

    number = parse_job_id(job_id)
    _settings, catalog = open_catalog()
    with _answers():
        job = HeavyJobs(catalog).job(number)
        swap = job.state == JobState.READY_TO_SWAP
        run_id = None if swap else resume_run_id(job.id)
        extra = {"table": job.table_name, "job_id": number, "state": job.state}
        audit("resume_job", user, request, extra if swap else {**extra, "dag_run_id": run_id}, run_id)
        job_control.check_resumable(job)
        if swap:
            return job_json(job_control.swap_postponed(catalog, number), utcnow())
        conf = takeover_conf(job.id, job.table_name, job.statement)
        _trigger_run(run_id, conf, user, f"job {job.id} cannot be resumed now")
    return {**job_json(HeavyJobs(catalog).job(number), utcnow()), "dag_run_id": run_id}


def _trigger_run(run_id: str, conf: dict, user: BaseUser, refusal: str) -> str:
    """A run of the schema-change DAG started on the user's behalf (409 with `refusal` when the
    DAG is missing or the run exists already)."""
    from airflow.api.common.trigger_dag import trigger_dag
    from airflow.exceptions import DagNotFound, DagRunAlreadyExists
    from airflow.utils.types import DagRunTriggeredByType

    try:
        trigger_dag(
            SCHEMA_CHANGE_DAG,
            run_id=run_id,
            conf=conf,
            triggered_by=DagRunTriggeredByType.UI,
            triggering_user_name=user.get_name(),
        )
    except (DagNotFound, DagRunAlreadyExists) as exc:
        raise HTTPException(status.HTTP_409_CONFLICT, f"{refusal}: {first_line(exc)}") from None
    return run_id


@api.get("/tables")
def list_tables(user: Reader) -> dict:
    _settings, catalog = open_catalog()
    tables = [table_json(t, catalog.active_job(t.id)) for t in catalog.tables()]
    return {"tables": tables, "total": len(tables)}


@api.get("/tables/{table}/versions")
def table_versions(table: str, user: Reader) -> dict:
    _settings, catalog = open_catalog()
    info = _table(catalog, check_name(table))
    versions = [version_json(v, info.current_version) for v in catalog.schema_versions(info.id)]
    return {**table_json(info, catalog.active_job(info.id)), "versions": versions}


@api.get("/migrations")
def list_migrations(user: Reader, directory: str | None = None) -> dict:
    """A migrations directory as the page's section shows it (`directory`, one of `directories`;
    by default the latest alterflow_migrate run's, else the api-server's ALTERFLOW_MIGRATIONS):
    every file with its state, the drift, and the pending statements' lint (no analysis)."""
    settings, catalog = open_catalog()
    chosen, source, directories = _migrations_directory(settings, directory)
    return {**migrations_json(catalog, chosen, settings.warehouse, source), "directories": directories}


@api.post("/tables/{table}/versions/{version}/revert")
def revert_table(table: str, version: str, user: Reverter, request: Request) -> dict:
    """`ALTER TABLE t REVERT TO VERSION n` as a run of the schema-change DAG, planned here first:
    a refused revert (a collected version, a rewrite that brings a column back...) answers 409
    with the planner's line and starts nothing. Its job is made by the run: the audit row names
    the run instead."""
    from alterflow.airflow_client import new_run_id
    from alterflow.errors import UserError
    from alterflow.workflow import alter_steps
    from alterflow.workflow.request import AlterRequest

    name = check_name(table)
    if not _JOB_ID.fullmatch(version):  # a positive catalog integer, ASCII digits only
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, f"malformed version {_shown(version)}: expected a positive integer")
    settings, catalog = open_catalog()
    info = _table(catalog, name)
    statement = f"ALTER TABLE {info.name} REVERT TO VERSION {int(version)}"
    alter = AlterRequest(info.name, statement, request_id=new_run_id())
    extra = {"table": info.name, "job_id": None, "version": int(version), "dag_run_id": alter.request_id}
    audit("revert_table", user, request, extra, alter.request_id)
    try:
        planned = alter_steps.validate(catalog, alter, warehouse=settings.warehouse)
    except CatalogLost:  # the catalog's server went away: a 503, as for a catalog that cannot be opened
        raise
    except UserError as exc:
        raise HTTPException(status.HTTP_409_CONFLICT, first_line(exc)) from None
    conf = {"table": alter.table, "statement": statement, "properties": {}}
    run_id = _trigger_run(alter.request_id, conf, user, f"{info.name} cannot be reverted now")
    return {"table": info.name, "statement": statement, "kind": planned.kind.value, "dag_run_id": run_id}


app.include_router(api)
