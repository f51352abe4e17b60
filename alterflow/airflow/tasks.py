"""The bodies of the schema-change DAG's tasks: each calls one core step with the catalog and
warehouse of an alterflow connection (`AlterflowHook`: the Airflow connection `conn_id`, by default
`alterflow_default`, else the ALTERFLOW_* environment) and passes small JSON between tasks (through
XCom). `AlterflowSchemaChangeOperator` runs the same bodies, in one task of a user's DAG. A refusal of
the core (a rejected plan, a cancelled job, bad run conf) becomes `AirflowFailException` with the
core's one-line message, so Airflow fails the task without retrying it; anything else (a lost
database connection, a killed worker) is an ordinary error and the task's retries resume the step,
which is idempotent. A step returns a frozen dataclass; its task returns that result's `to_json()`,
the XCom.

Every heavy step drives the job under its runner lease (docs/heavyweight.md) for the run's driver group
(`run_group`): a retried or cleared task of the same run takes the lease back at once (the try it
replaces, if still alive, is fenced off); another driver waits for it to expire."""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import logging
import time
from collections.abc import Iterator, Mapping
from datetime import datetime

from airflow.sdk.exceptions import AirflowFailException, AirflowSkipException

from alterflow import schema_change_events as events
from alterflow.airflow import conf
from alterflow.airflow.conf import BadRunConf, alter_request
from alterflow.airflow.hooks import DEFAULT_CONN_ID, AlterflowHook
from alterflow.airflow.runs import record_failure
from alterflow.airflow.task_context import running_task_instance
from alterflow.catalog.catalog import AlterJob, Catalog
from alterflow.catalog.catalog_errors import UnknownObject
from alterflow.catalog.first_asset_events import EmittingTask, FirstAssetEvents
from alterflow.catalog.heavy_jobs import HeavyJobs
from alterflow.catalog.states import Engine, JobKind, JobState
from alterflow.errors import UserError
from alterflow.held_leases import airflow_run_group
from alterflow.schema_change_events import SchemaChangeEvent
from alterflow.settings import Settings
from alterflow.workflow import alter_steps, heavy_steps, table_turns
from alterflow.workflow.background import run_niced
from alterflow.workflow.request import AlterRequest
from alterflow.workflow.validated_plan import ValidatedPlan

log = logging.getLogger(__name__)


@contextlib.contextmanager
def refusals_fail_the_task() -> Iterator[None]:
    """A `UserError` (every refusal the core and the run conf raise) fails the task for good, its
    one line logged and kept as the task's XCom `alterflow_failure` (the run's note and the
    Schema changes page show it: `runs`). One that is `transient` (the catalog's server restarting)
    is left for the task's retries."""
    try:
        yield
    except UserError as exc:
        if getattr(exc, "transient", False):
            raise
        record_failure(str(exc))
        raise AirflowFailException(str(exc)) from None


def settings_of(conn_id: str = DEFAULT_CONN_ID) -> Settings:
    """The settings of the alterflow connection `conn_id` (the environment's without one)."""
    settings = connection_settings(conn_id)[1]
    settings.ensure_dirs()
    return settings


def connection_settings(conn_id: str = DEFAULT_CONN_ID) -> tuple[AlterflowHook, Settings]:
    """The hook of the alterflow connection `conn_id` and its settings (read once per task try:
    `AlterflowHook.get_settings`)."""
    hook = AlterflowHook(conn_id)
    return hook, hook.get_settings()


def background_nice(conn_id: str = DEFAULT_CONN_ID) -> int:
    """The niceness a heavyweight job's long steps run at in this worker (`background.run_niced`)."""
    with refusals_fail_the_task():
        return settings_of(conn_id).background_nice


def open_catalog(conn_id: str = DEFAULT_CONN_ID) -> tuple[Settings, Catalog]:
    """The settings and the catalog of the alterflow connection `conn_id`."""
    hook, settings = connection_settings(conn_id)
    with settings.dirs_for_catalog():
        return settings, hook.catalog(settings)


def task_request_id(dag_id: str, run_id: str, task_id: str, map_index: int | None = None) -> str:
    """The request id of an ALTER run by one task instance (`AlterflowSchemaChangeOperator`): the
    same for every try of it, and at most the catalog's 64 characters whatever the names' lengths."""
    key = "\x00".join((dag_id, run_id, task_id, str(map_index if map_index is not None else -1)))
    return "airflow_task_" + hashlib.sha256(key.encode()).hexdigest()[:40]


def run_group(run_id: str) -> str:
    """The lease group of one DAG run: every task of the run drives its job as the same driver."""
    return airflow_run_group(run_id)


def run_driver(run_id: str, settings: Settings) -> heavy_steps.StepDriver:
    """A step of the DAG run `run_id`: it takes the run's lease for itself, of the settings' length."""
    return heavy_steps.StepDriver(group=run_group(run_id), lease_s=settings.lease_s)


def job_json(job: AlterJob) -> dict:
    data = dataclasses.asdict(job)
    data["properties"] = job.properties.to_json()
    data["steps"] = list(job.steps)
    for key in ("created_at", "finished_at"):
        data[key] = data[key].isoformat() if data[key] is not None else None
    return data


def validate(params: Mapping, run_id: str, conn_id: str = DEFAULT_CONN_ID) -> dict:
    """The run's params as the request (request_id = run id), or a failed task with one line."""
    with refusals_fail_the_task():
        request = alter_request(params, run_id)
        try:
            open_catalog(conn_id)[1].table(request.table)
        except UnknownObject:
            given = "param table" if params.get("table") else f"ALTER TABLE {request.table}"  # else the statement named it
            raise BadRunConf(f"{given}: unknown table {request.table}") from None
    return request.to_json()


def take_turn(request: dict, triggered_at: str, conn_id: str = DEFAULT_CONN_ID) -> dict:
    """{"go": whether the run may go on with its table now, "behind": what it waits behind}
    (docs/airflow.md#runs-on-one-table); the run joins the table's line, or renews its place."""
    with refusals_fail_the_task():
        settings, catalog = open_catalog(conn_id)
        when = datetime.fromisoformat(triggered_at)
        hold_s = table_turns.hold_seconds(settings.lease_s)
        turn = table_turns.take_turn(catalog, AlterRequest.from_json(request), when, hold_s, run_group(request["request_id"]))
    return {"go": turn.go, "behind": turn.behind}


@contextlib.contextmanager
def refused_runs_leave_the_line(catalog: Catalog, request_id: str) -> Iterator[None]:
    """A run refused at its plan, commit or start leaves its table's line at once (the runs behind
    it need not wait for its place to lapse)."""
    try:
        yield
    except UserError:
        table_turns.leave_turn(catalog, request_id)
        raise


def plan(request: dict, conn_id: str = DEFAULT_CONN_ID) -> dict:
    """The `ValidatedPlan`'s JSON (with `job_id`: an orphaned job it takes over)."""
    with refusals_fail_the_task():
        req = AlterRequest.from_json(request)
        settings, catalog = open_catalog(conn_id)
        job = catalog.job_by_request(req.request_id)
        if job is not None:  # a retry after the job was recorded: plan what it was planned as
            return ValidatedPlan(JobKind(job.kind), job.from_version, job.to_version).to_json()
        with refused_runs_leave_the_line(catalog, req.request_id):
            return alter_steps.validate(catalog, req, run_group(req.request_id), warehouse=settings.warehouse).to_json()


DRY_RUN = "DRY_RUN"


def is_dry_run(params: Mapping) -> bool:
    with refusals_fail_the_task():
        return conf.dry_run(params)


def dry_run(request: dict, conn_id: str = DEFAULT_CONN_ID) -> dict:
    """The `dry_run` param's run: EXPLAIN ANALYZE of the statement (it changes nothing), printed
    to the task's log as the CLI prints it and returned for the run's XCom."""
    from alterflow.engine.result_text import to_table
    from alterflow.spark_session import get_spark
    from alterflow.workflow.explain import explain_alter

    with refusals_fail_the_task():
        req = AlterRequest.from_json(request)
        settings, catalog = open_catalog(conn_id)
        stmt = dataclasses.replace(alter_steps.parse_alter(req), explain=True, analyze=True)
        result = explain_alter(catalog, settings.warehouse, stmt, lambda: get_spark(settings))
    print(f"EXPLAIN ANALYZE {req.statement}\n{to_table(result)}")
    return {"kind": DRY_RUN, "columns": list(result.columns), "rows": [list(row) for row in result.rows]}


def was_dry_run(planned: dict | None) -> bool:
    """Whether the plan task's XCom is a dry run's analysis rather than a `ValidatedPlan`."""
    return bool(planned) and planned.get("kind") == DRY_RUN


def branch(validated: dict) -> str | list[str]:
    """The next task: `commit` (lightweight), `start` (heavyweight), none after a dry run."""
    if was_dry_run(validated):
        return []
    return "commit" if ValidatedPlan.from_json(validated).kind == JobKind.LIGHT else "start"


def commit(request: dict, validated: dict, conn_id: str = DEFAULT_CONN_ID) -> dict:
    with refusals_fail_the_task():
        settings, catalog = open_catalog(conn_id)
        with refused_runs_leave_the_line(catalog, request["request_id"]):
            return alter_steps.commit(
                catalog, AlterRequest.from_json(request), ValidatedPlan.from_json(validated), settings.warehouse
            ).to_json()


def route(job_id: int, conn_id: str = DEFAULT_CONN_ID) -> str:
    """Which task drives the started job on: `rewrite_in_worker` for a job the local engine
    converts (a small table: every remaining step in one task, no hand-offs, no Spark), else
    `wait_for_boundary` (one task per step, the conversion on Spark)."""
    return "rewrite_in_worker" if conversion_engine(job_id, conn_id) == Engine.LOCAL else "wait_for_boundary"


def start(request: dict, validated: dict, conn_id: str = DEFAULT_CONN_ID) -> dict:
    with refusals_fail_the_task():
        settings, catalog = open_catalog(conn_id)
        with refused_runs_leave_the_line(catalog, request["request_id"]):
            return heavy_steps.start(
                catalog,
                AlterRequest.from_json(request),
                ValidatedPlan.from_json(validated),
                group=run_group(request["request_id"]),
                lease_s=settings.lease_s,
            ).to_json()


def wait_for_boundary(job_id: int, run_id: str, conn_id: str = DEFAULT_CONN_ID) -> dict:
    with refusals_fail_the_task():
        settings, catalog = open_catalog(conn_id)
        return heavy_steps.wait_for_boundary(catalog, settings.warehouse, job_id, run_driver(run_id, settings)).to_json()


def alive_job(job_id: int, conn_id: str = DEFAULT_CONN_ID) -> AlterJob:
    """The job, cancelled first if past its timeout; a cancelled job fails the task with its Msg."""
    with refusals_fail_the_task():
        settings, catalog = open_catalog(conn_id)
        return heavy_steps.ensure_alive(catalog, settings.warehouse, job_id)


def conversion_engine(job_id: int, conn_id: str = DEFAULT_CONN_ID) -> Engine:
    with refusals_fail_the_task():
        return heavy_steps.conversion_engine(open_catalog(conn_id)[1], job_id)


def convert_in_worker(job_id: int, run_id: str, parallelism: int, conn_id: str = DEFAULT_CONN_ID) -> dict:
    """The RUNNING step in this worker: on the local engine without Spark, as `route` expects; on
    Spark in this process when loads that committed below the boundary after `start` made the
    table too big for the local engine."""
    from alterflow.spark_session import get_spark

    with refusals_fail_the_task():
        settings, catalog = open_catalog(conn_id)
        spark = None if heavy_steps.conversion_engine(catalog, job_id) == Engine.LOCAL else get_spark(settings)
        driver = run_driver(run_id, settings)
        result = run_niced(
            settings.background_nice, lambda: heavy_steps.convert(spark, catalog, settings.warehouse, job_id, parallelism, driver=driver)
        )
    return heavy_steps.conversion_json(result)


def check(job_id: int, run_id: str, conn_id: str = DEFAULT_CONN_ID) -> dict:
    from alterflow.spark_session import get_spark

    with refusals_fail_the_task():
        settings, catalog = open_catalog(conn_id)
        job = heavy_steps.ensure_alive(catalog, settings.warehouse, job_id)
        if job.state != JobState.VALIDATING or "check" in job.steps:
            return heavy_steps.StepSkipped(job.state).to_json()
        local = heavy_steps.conversion_engine(catalog, job_id) == Engine.LOCAL  # validated on pandas: no Spark
        spark = None if local else get_spark(settings)
        driver = run_driver(run_id, settings)
        return run_niced(settings.background_nice, lambda: heavy_steps.check(spark, catalog, settings.warehouse, job_id, driver)).to_json()


def swap(job_id: int, run_id: str, conn_id: str = DEFAULT_CONN_ID) -> dict:
    with refusals_fail_the_task():
        settings, catalog = open_catalog(conn_id)
        return heavy_steps.swap(catalog, settings.warehouse, job_id, run_driver(run_id, settings)).to_json()


def schema_change_event(job: dict, conn_id: str = DEFAULT_CONN_ID) -> SchemaChangeEvent | None:
    """The asset event a run's finished job emits (None once cancelled or not finished), once it
    may be emitted: an event right after the table's first waits a moment (`wait_for_first_events`)."""
    with refusals_fail_the_task():
        settings, catalog = open_catalog(conn_id)
        event = events.schema_change_event(HeavyJobs(catalog).job(int(job["id"])), settings.catalog_name)
        if event is not None:
            wait_for_first_events(catalog, [event.uri])
        return event


def wait_for_first_events(catalog, uris: list[str]) -> None:
    """Sleep until Airflow has surely created the assets of `uris`: an event emitted within a few
    seconds of its table's first event collides with it in Airflow's database otherwise
    (alterflow.catalog.first_asset_events), unless the task that emitted the first has succeeded
    (asked of Airflow), which a table's next ALTER, triggered after the run before it, finds."""
    first = FirstAssetEvents(catalog)
    ti = running_task_instance()
    emitter = None if ti is None else EmittingTask(ti.dag_id, ti.run_id, ti.task_id)
    succeeded = None if ti is None else lambda task: _task_succeeded(ti, task)
    wait = max((first.wait_s(uri, emitter=emitter, succeeded=succeeded) for uri in uris), default=0.0)
    if wait > 0:
        print(f"waiting {wait:.1f} s: an event on this table's asset was its first just now, and Airflow is creating the asset", flush=True)
        time.sleep(wait)


def _task_succeeded(ti, task: EmittingTask) -> bool:
    """Whether Airflow has `task` succeeded (the Task SDK's call, through this task's supervisor).
    An answer that does not come is a no: the event then waits out the spacing, as it always could."""
    try:
        states = ti.get_task_states(dag_id=task.dag_id, task_ids=[task.task_id], run_ids=[task.run_id])
    except Exception as exc:  # noqa: BLE001 - the Task SDK's errors vary with the call's path; waiting is safe
        log.warning("could not ask Airflow whether %s succeeded (%s): the event waits out the spacing", task, exc)
        return False
    return states.get(task.run_id, {}).get(task.task_id) == "success"


def done(request: dict, validated: dict | None = None, conn_id: str = DEFAULT_CONN_ID) -> dict:
    """The run's job as JSON (whichever branch ran; the job it took over, if it took one over).
    Skipped after a dry run: no job, no asset event."""
    if was_dry_run(validated):
        raise AirflowSkipException("a dry run changes nothing: EXPLAIN ANALYZE is in the plan task's log and XCom")
    with refusals_fail_the_task():
        catalog = open_catalog(conn_id)[1]
    job = catalog.job_by_request(request["request_id"])
    taken_over = ValidatedPlan.from_json(validated).job_id if validated else None
    if job is None and taken_over is not None:
        job = HeavyJobs(catalog).job(taken_over)
    if job is None:
        raise AirflowFailException(f"ALTER TABLE {request['table']}: no job was recorded for run {request['request_id']}")
    return job_json(job)
