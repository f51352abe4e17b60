"""alterflow's operators. For a DAG of your own:

AlterflowLoadOperator          a path (a file or folder, as `alterflow load` takes it) or data from
                               an upstream task (a pandas DataFrame, rows, columns) loaded into a
                               table as one transaction, once (a retry finds its earlier try's
                               load); emits a `load` event on the table's asset.
AlterflowSchemaChangeOperator  one ALTER TABLE as one task, through the schema-change DAG's own
                               steps, its waits deferred; emits the `schema_change` event.

The schema-change DAG's operators that are more than a TaskFlow function:

WaitForBoundaryOperator  one look at the boundary; if loads below it are still open, defers to a
                         `BoundaryTrigger` (no worker slot is held while waiting).
ConvertHistoryOperator   `SparkSubmitOperator` running `spark_jobs/convert_history.py` on the master
                         of the `spark_default` connection, `local[*]` when there is none; a job
                         on the local engine (a small table) converts in the worker instead.
SwapOperator             the swap; a job left READY_TO_SWAP by `postpone_swap` defers to a
                         `ResumeTrigger` until RESUME ALTER TABLE COLUMN swaps it (or it is cancelled).
RewriteInWorkerOperator  a small table's job (the local engine): the boundary wait (deferred like
                         WaitForBoundaryOperator's), the conversion, the check and the swap (deferred
                         like SwapOperator's) in one task, the embedded runner's steps in its order.

`job_id` is templated (the `start` task's XCom). Each takes `alterflow_conn_id` (default
`alterflow_default`, else the ALTERFLOW_* environment: `AlterflowHook`), and hands it to its trigger."""

from __future__ import annotations

import json
import os
import shutil
import sys
from datetime import UTC
from typing import Any

from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator
from airflow.sdk import Asset, AssetAlias, BaseHook, BaseOperator
from airflow.sdk.exceptions import AirflowException, AirflowFailException, AirflowNotFoundException, DownstreamTasksSkipped

from alterflow.airflow import load_tasks, tasks
from alterflow.airflow.assets import table_asset
from alterflow.airflow.hooks import DEFAULT_CONN_ID, AlterflowHook
from alterflow.airflow.triggers import POLL_SECONDS, BoundaryTrigger, ResumeTrigger, TurnTrigger
from alterflow.catalog.states import Engine, JobKind, JobState
from alterflow.held_leases import JobLease
from alterflow.rewrite.spark_submit import application_path, spark_submit_binary
from alterflow.schema_change_events import SCHEMA_CHANGES_ALIAS
from alterflow.settings import child_environment, warehouse_keys, warehouse_setting
from alterflow.spark_session import application_conf
from alterflow.workflow.alter_runner import preload_expectations
from alterflow.workflow.background import run_niced
from alterflow.workflow.heavy_steps import StepSkipped
from alterflow.workflow.validated_plan import ValidatedPlan

DEFAULT_MASTER = "local[*]"
# Without the operator's connection, spark-submit runs on this one, defined for the task's process
# through Airflow's AIRFLOW_CONN_* environment (the provider's own fallback would be yarn).
LOCAL_CONN_ID = "alterflow_local_spark"


def _event_or_fail(event: dict | None) -> dict:
    if not event:
        raise AirflowFailException("the trigger ended without an event")
    if event.get("error"):
        raise AirflowFailException(event["error"])
    return event


class _JobStepOperator(BaseOperator):
    """A step of one alter job (its id templated from the DAG run) that may defer to a trigger
    polling the catalog, and looks again when the trigger fires."""

    template_fields = ("job_id",)

    def __init__(self, *, job_id: Any, poll_seconds: float = POLL_SECONDS, alterflow_conn_id: str = DEFAULT_CONN_ID, **kwargs):
        super().__init__(**kwargs)
        self.job_id = job_id
        self.poll_seconds = poll_seconds
        self.alterflow_conn_id = alterflow_conn_id

    def execute_complete(self, context, event: dict | None = None) -> dict:
        _event_or_fail(event)
        return self.execute(context)  # one more look: it records the step's progress (or defers again)


class WaitForBoundaryOperator(_JobStepOperator):
    ui_color = "#f0e4ff"

    def execute(self, context) -> dict:
        result = tasks.wait_for_boundary(int(self.job_id), context["run_id"], self.alterflow_conn_id)
        if result["done"]:
            return result
        self.log.info("job %s waits for transactions %s; deferring", self.job_id, result["blocking"])
        self.defer(
            trigger=BoundaryTrigger(int(self.job_id), self.poll_seconds, tasks.run_group(context["run_id"]), self.alterflow_conn_id),
            method_name="execute_complete",
        )


class SwapOperator(_JobStepOperator):
    ui_color = "#e4ffe8"

    def execute(self, context) -> dict:
        result = tasks.swap(int(self.job_id), context["run_id"], self.alterflow_conn_id)
        if result["state"] == JobState.READY_TO_SWAP:
            self.log.info("job %s is READY_TO_SWAP (postpone_swap); waiting for RESUME ALTER TABLE COLUMN", self.job_id)
            self.defer(
                trigger=ResumeTrigger(int(self.job_id), self.poll_seconds, conn_id=self.alterflow_conn_id), method_name="execute_complete"
            )
        return result

    def execute_complete(self, context, event: dict | None = None) -> dict:
        return {"state": _event_or_fail(event)["state"]}


def triggered_at(context) -> str:
    """When the task's DAG run was triggered (its `run_after`), as naive UTC ISO text: the order in
    which runs of one table take their turn."""
    when = context["dag_run"].run_after
    return when.astimezone(UTC).replace(tzinfo=None).isoformat()


class _TakesTurns:
    """Waits, deferred, for the run's turn on its table (docs/airflow.md#runs-on-one-table)."""

    alterflow_conn_id: str
    poll_seconds: float

    def wait_for_turn(self, context, request: dict, method_name: str) -> None:
        """Returns once the run may go on with its table; otherwise defers (raising TaskDeferred)
        to a `TurnTrigger`, and Airflow calls `method_name` when it fires."""
        when = triggered_at(context)
        turn = tasks.take_turn(request, when, self.alterflow_conn_id)
        if not turn["go"]:
            self.log.info("ALTER TABLE %s waits for its turn on the table, behind %s; deferring", request["table"], turn["behind"])
            self.defer(trigger=TurnTrigger(request, when, self.poll_seconds, self.alterflow_conn_id), method_name=method_name)


class _DrivesInWorker:
    """The remaining steps of a started heavyweight job in this task (the embedded runner's order):
    the boundary wait, deferred to a `BoundaryTrigger` while loads below it are open; the
    conversion (the local engine, or Spark in this process); the check; the swap, deferred to a
    `ResumeTrigger` while `postpone_swap` holds it. Every step is idempotent, so a retried task or
    a deferred one coming back (`boundary_reached`) resumes where the job's record says.

    Its own keyword arguments, for every operator that drives a job this way: `parallelism` (tablets
    converted at once), `poll_seconds` (how often the triggers look) and `alterflow_conn_id`."""

    def __init__(self, *, parallelism: int = 2, poll_seconds: float = POLL_SECONDS, alterflow_conn_id: str = DEFAULT_CONN_ID, **kwargs):
        super().__init__(**kwargs)
        self.parallelism = parallelism
        self.poll_seconds = poll_seconds
        self.alterflow_conn_id = alterflow_conn_id

    def drive(self, job_id: int, run_key: str) -> dict:
        """The job's swap result; defers (raising TaskDeferred) while it waits. `run_key` names
        the driver: every try of the task drives the job as the same lease group."""
        conn_id = self.alterflow_conn_id
        preload_expectations(tasks.background_nice(conn_id))  # GX takes seconds to import: while the job converts
        if not tasks.wait_for_boundary(job_id, run_key, conn_id)["done"]:
            self.log.info("job %s waits for transactions below its boundary; deferring", job_id)
            self.defer(
                trigger=BoundaryTrigger(job_id, self.poll_seconds, tasks.run_group(run_key), conn_id), method_name="boundary_reached"
            )
        tasks.convert_in_worker(job_id, run_key, self.parallelism, conn_id)
        tasks.check(job_id, run_key, conn_id)
        result = tasks.swap(job_id, run_key, conn_id)
        if result["state"] == JobState.READY_TO_SWAP:
            self.log.info("job %s is READY_TO_SWAP (postpone_swap); waiting for RESUME ALTER TABLE COLUMN", job_id)
            self.defer(trigger=ResumeTrigger(job_id, self.poll_seconds, conn_id=conn_id), method_name="swapped")
        return result


class ValidateRunOperator(_TakesTurns, _DrivesInWorker, BaseOperator):
    """The schema-change DAG's first task: the run's params as its request (one line for a bad one,
    `tasks.validate`), then its turn on the table. A table with an unfinished job, or with runs
    triggered before this one still waiting, defers the task until the run's turn came, in trigger
    order, with no worker slot held (one task, not two: each hand-off between tasks costs a
    light ALTER about a second). A dry run (EXPLAIN ANALYZE) changes nothing and waits for nobody.

    Then the plan. A lightweight change is committed here, and a rewrite the local engine converts
    (a small table) is started and driven to its swap here, its waits deferred as
    `RewriteInWorkerOperator`'s: the run ends with this task (the embedded runner's steps in its
    order, the `schema_change` event emitted, every later task skipped), so that it needs one worker
    slot, not five or six turns of the scheduler
    (docs/airflow.md#a-lightweight-change-in-one-task). A rewrite on Spark, a statement the planner
    refuses and a refused start go on to `plan`, whose tasks find what is done and fail with the line.
    Returns the request's JSON, the tasks after it read as their `request`."""

    ui_color = "#e4f0ff"

    def __init__(self, **kwargs):
        super().__init__(outlets=_outlets(kwargs.pop("outlets", None), AssetAlias(SCHEMA_CHANGES_ALIAS)), **kwargs)

    def execute(self, context) -> dict:
        request = tasks.validate(context["params"], context["run_id"], self.alterflow_conn_id)
        if not tasks.is_dry_run(context["params"]):
            self.wait_for_turn(context, request, "turn_came")
            self.finish_in_this_task(context, request)
        return request

    def turn_came(self, context, event: dict | None = None) -> dict:
        _event_or_fail(event)
        return self.execute(context)  # one more look lets the run through (it holds its place until its job exists)

    boundary_reached = turn_came  # every step again: each finds what is done and goes on

    def swapped(self, context, event: dict | None = None) -> dict:
        _event_or_fail(event)
        request = tasks.validate(context["params"], context["run_id"], self.alterflow_conn_id)
        self.end_run(context, request, tasks.plan(request, self.alterflow_conn_id))  # the job's own plan, found by its request

    def finish_in_this_task(self, context, request: dict) -> None:
        """A lightweight change committed, or a small rewrite driven to its swap (deferring while it
        waits), then the run ended here (raises DownstreamTasksSkipped). Otherwise returns: `plan`
        plans again (a few catalog reads) and fails with the planner's line on a refusal."""
        conn_id = self.alterflow_conn_id
        try:
            validated = tasks.plan(request, conn_id)
            if ValidatedPlan.from_json(validated).kind == JobKind.LIGHT:
                tasks.commit(request, validated, conn_id)
            else:
                job_id = int(tasks.start(request, validated, conn_id)["job_id"])
                if tasks.route(job_id, conn_id) != "rewrite_in_worker" or self.slots_wanted(context):
                    return  # plan, branch and start find the job, then rewrite_in_worker or one task a step on Spark
        except AirflowFailException:
            return
        if ValidatedPlan.from_json(validated).kind != JobKind.LIGHT:
            self.drive(job_id, context["run_id"])
        self.end_run(context, request, validated)

    def slots_wanted(self, context) -> bool:
        """Whether tasks of this DAG wait for a worker slot now (scheduled, or queued for a worker).
        A small rewrite then goes on through `rewrite_in_worker`, whose low priority weight lets those
        waiting short steps (a light ALTER's `validate`) have the slots first; with nobody waiting it
        runs here, saving five hand-offs."""
        ti = context["ti"]
        waiting = ti.get_ti_count(dag_id=ti.dag_id, states=["scheduled", "queued"])
        if waiting:
            self.log.info("%s task(s) of %s wait for a worker slot: the rewrite goes on in rewrite_in_worker", waiting, ti.dag_id)
        return waiting > 0

    def end_run(self, context, request: dict, validated: dict) -> None:
        """The run's `done` here: the job as XCom `job`, the `schema_change` event, the rest skipped."""
        conn_id = self.alterflow_conn_id
        job = tasks.done(request, validated, conn_id)
        event = tasks.schema_change_event(job, conn_id)
        if event is not None:  # DAGs scheduled on the table's asset run
            context["outlet_events"][AssetAlias(SCHEMA_CHANGES_ALIAS)].add(Asset(event.uri), extra=event.extra)
        ti = context["ti"]
        ti.xcom_push(key="return_value", value=request)
        ti.xcom_push(key="job", value=job)
        self.log.info(
            "ALTER TABLE %s: %s, done in this task as job %s (schema version %s); the later tasks are skipped",
            *(request["table"], job["kind"].lower(), job["id"], job["to_version"]),
        )
        raise DownstreamTasksSkipped(tasks=sorted(self.get_flat_relative_ids(upstream=False)))


class RewriteInWorkerOperator(_DrivesInWorker, BaseOperator):
    """Every remaining step of a job on the local engine, in this task: each Airflow hand-off costs
    about a second, more than converting a small table. The steps are the same idempotent core
    steps the one-task-per-step path runs, so a retried task resumes where the job's record says.
    Waiting for the boundary or for RESUME defers (no worker slot is held meanwhile)."""

    template_fields = ("job_id",)
    ui_color = "#fff4e0"

    def __init__(self, *, job_id: Any, **kwargs):
        super().__init__(**kwargs)
        self.job_id = job_id

    def execute(self, context) -> dict:
        return self.drive(int(self.job_id), context["run_id"])

    def boundary_reached(self, context, event: dict | None = None) -> dict:
        _event_or_fail(event)
        return self.execute(context)  # one more look records the move to RUNNING, then the rest

    def swapped(self, context, event: dict | None = None) -> dict:
        return {"state": _event_or_fail(event)["state"]}


def _connection_exists(conn_id: str) -> bool:
    try:
        BaseHook.get_connection(conn_id)
    except AirflowNotFoundException:
        return False
    return True


def _local_master(conn_id: str) -> bool:
    """Whether spark-submit runs on a local master (no connection means `local[*]`)."""
    if not _connection_exists(conn_id):
        return True
    return (BaseHook.get_connection(conn_id).host or "").strip().startswith("local")


def _submit_env(local_master: bool = True) -> dict[str, str]:
    """The application's environment: this Python (where alterflow is installed) for PySpark, and
    pyspark's own spark-submit when none is on PATH. On a local master the driver binds to
    127.0.0.1 (unless SPARK_LOCAL_IP says otherwise); on a cluster, where executors must reach the
    driver, Spark picks the address unless SPARK_LOCAL_IP is set."""
    inherited = child_environment({"PATH": "", "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable})
    path = inherited["PATH"]
    if shutil.which("spark-submit", path=path) is None:
        path = os.pathsep.join(p for p in (str(spark_submit_binary().parent), path) if p)
    env = {"PATH": path, "PYSPARK_PYTHON": inherited["PYSPARK_PYTHON"], "PYSPARK_DRIVER_PYTHON": inherited["PYSPARK_DRIVER_PYTHON"]}
    local_ip = inherited.get("SPARK_LOCAL_IP") or ("127.0.0.1" if local_master else None)
    if local_ip:
        env["SPARK_LOCAL_IP"] = local_ip
    return env


class ConvertHistoryOperator(SparkSubmitOperator):
    """spark-submit of `spark_jobs/convert_history.py` for the job; skipped when the job is already
    past RUNNING (a retried run), a failed task when the job was cancelled meanwhile. The catalog and
    warehouse reach the application through the inherited ALTERFLOW_* environment."""

    template_fields = (*SparkSubmitOperator.template_fields, "job_id")

    def __init__(
        self, *, job_id: Any, parallelism: int = 2, conn_id: str = "spark_default", alterflow_conn_id: str = DEFAULT_CONN_ID, **kwargs
    ):
        super().__init__(application=application_path(), conn_id=conn_id, name="alterflow-convert", **kwargs)
        self.job_id = job_id
        self.parallelism = parallelism
        self.alterflow_conn_id = alterflow_conn_id

    def choose_connection(self) -> None:
        """Without its connection, the operator submits to `local[*]` through a connection of its
        own (the provider would fall back to yarn); a local master is neither yarn nor Kubernetes
        nor a tracked cluster driver."""
        if _connection_exists(self._conn_id):
            return
        self.log.info("no connection %s: spark-submit runs on %s", self._conn_id, DEFAULT_MASTER)
        os.environ[f"AIRFLOW_CONN_{LOCAL_CONN_ID.upper()}"] = json.dumps({"conn_type": "spark", "host": DEFAULT_MASTER})
        self._conn_id = LOCAL_CONN_ID

    def execute(self, context) -> dict:
        job_id, conn_id = int(self.job_id), self.alterflow_conn_id
        job = tasks.alive_job(job_id, conn_id)
        if job.state != JobState.RUNNING:
            self.log.info("job %s is %s: nothing to convert", job_id, job.state)
            return StepSkipped(job.state).to_json()
        group = tasks.run_group(context["run_id"])
        if tasks.conversion_engine(job_id, conn_id) == Engine.LOCAL:  # a small table: converted in this worker, no spark-submit
            self.log.info("job %s converts on the local engine, in the worker", job_id)
            tasks.convert_in_worker(job_id, context["run_id"], self.parallelism, conn_id)
        else:
            self._submit(context, job_id, group)
        job = tasks.alive_job(job_id, conn_id)
        if job.state != JobState.VALIDATING:
            raise AirflowException(f"job {job_id} is {job.state} after the conversion; expected VALIDATING")
        return {"state": job.state, "progress": job.progress}

    def _submit(self, context, job_id: int, group: str) -> None:
        """spark-submit of the conversion; returns once the application has ended. The application
        reads the catalog and warehouse of the alterflow connection from its environment."""
        hook = AlterflowHook(self.alterflow_conn_id)
        with tasks.refusals_fail_the_task():
            settings = hook.get_settings()
            catalog = hook.catalog(settings)
        self.name = f"alterflow-convert-job-{job_id}"
        self.conf = {**application_conf(), **(self.conf or {})}
        alterflow_env = {
            "ALTERFLOW_CATALOG_URL": settings.catalog_url,
            "ALTERFLOW_WAREHOUSE": warehouse_setting(settings.warehouse),
            **warehouse_keys(settings.warehouse),  # a bucket's keys from the connection, if it gave any
        }
        self.env_vars = {**_submit_env(_local_master(self._conn_id)), **alterflow_env, **(self.env_vars or {})}
        self.choose_connection()
        self.application_args = [
            "--job-id",
            str(job_id),
            "--parallelism",
            str(self.parallelism),
            "--lease-group",
            group,
        ]
        try:
            # The task holds the run's lease while spark-submit starts; the application takes it
            # over (same group) once it runs, and renews it while it converts.
            # spark-submit starts from a niced thread: the driver on this host yields the CPU as a
            # conversion in the worker does (docs/airflow.md#background-work-yields-the-cpu).
            with tasks.refusals_fail_the_task(), JobLease(catalog, job_id, group, lease_s=settings.lease_s):
                run_niced(settings.background_nice, lambda: SparkSubmitOperator.execute(self, context))
        except AirflowException:
            tasks.alive_job(job_id, self.alterflow_conn_id)  # cancelled meanwhile: fail with the job's Msg, no retry
            raise


def _outlets(given: Any, *more) -> list:
    if given is None:
        given = []
    elif not isinstance(given, list | tuple):
        given = [given]
    return [*given, *more]


class AlterflowLoadOperator(BaseOperator):
    """Load `path` (templated: a file or a folder of Parquet, CSV or JSON-lines files, as `alterflow
    load` takes it) or `data` (templated: an upstream task's XCom, e.g. `data=extract()`) into
    `table` as one transaction: all rows or none, converted by the table's types, dual-written while
    a heavyweight ALTER of the table runs. `data` is a pandas DataFrame, a list of rows (dicts), a
    dict of column lists, or Arrow data handed over by an XCom backend that keeps it.

    The task declares the table's asset (`alterflow://<catalog name>/<table>`, `catalog_name`
    defaulting to ALTERFLOW_CATALOG_NAME when the DAG is parsed) as an outlet, and its event's extra
    is `{"event": "load", "kind": "load", "table", "rows", "transaction"}`, which is also the task's
    return value. The transaction is labelled with the task instance: a retry after the load
    committed finds it and writes nothing again. An unknown table, a missing path or a column the
    table lacks fails the task with one line, and nothing is written."""

    template_fields = ("path", "data", "file_format")
    ui_color = "#e4f4ff"

    def __init__(
        self,
        *,
        table: str,
        path: Any = None,
        data: Any = None,
        file_format: str | None = None,
        engine: str = "auto",
        alterflow_conn_id: str = DEFAULT_CONN_ID,
        catalog_name: str | None = None,
        **kwargs,
    ):
        if (path is None) == (data is None):
            raise load_tasks.BadLoadInput(f"AlterflowLoadOperator: give path or data to load into {table}, one of them")
        if path is None and engine != Engine.AUTO:
            raise load_tasks.BadLoadInput(f"AlterflowLoadOperator: engine {engine} applies to a path; data from a task loads in the worker")
        self.asset = table_asset(table, catalog_name)
        super().__init__(outlets=_outlets(kwargs.pop("outlets", None), self.asset), **kwargs)
        self.table = table
        self.path = path
        self.data = data
        self.file_format = file_format
        self.engine = engine
        self.alterflow_conn_id = alterflow_conn_id

    def execute(self, context) -> dict:
        ti = context["ti"]
        label = load_tasks.task_label(ti.dag_id, ti.run_id, ti.task_id, getattr(ti, "map_index", None))
        extra = load_tasks.load(
            self.table,
            label,
            path=self.path,
            data=self.data if self.path is None else None,
            file_format=self.file_format,
            engine=self.engine,
            conn_id=self.alterflow_conn_id,
        )
        context["outlet_events"][self.asset].extra.update(extra)
        return extra


class AlterflowSchemaChangeOperator(_TakesTurns, _DrivesInWorker, BaseOperator):
    """One ALTER TABLE as one task of your DAG: `statement` (templated) on `table` (templated), with
    `properties` (templated; a dict or JSON text, over the statement's PROPERTIES). It runs the
    `alterflow_schema_change` DAG's steps in order (validate, plan, then commit for a lightweight
    change, or start, the boundary wait, the conversion in this worker on the local engine or on
    Spark in this process, the check and the swap), deferring its waits to the same triggers (no
    worker slot held while loads below the boundary finish, or while `postpone_swap` waits for
    RESUME). Its request id is made from the task instance, so a retried task resumes the same
    job, and a cleared one finds it done.

    Returns the job as JSON, and emits the table's `schema_change` asset event (through the asset
    alias `alterflow_schema_changes`, as the DAG does). A refusal (a rejected plan, a failed check,
    a cancel) fails the task with one line, without retries."""

    template_fields = ("table", "statement", "properties")
    ui_color = "#fff0e4"

    def __init__(
        self,
        *,
        table: str,
        statement: str,
        properties: Any = None,
        **kwargs,
    ):
        super().__init__(outlets=_outlets(kwargs.pop("outlets", None), AssetAlias(SCHEMA_CHANGES_ALIAS)), **kwargs)
        self.table = table
        self.statement = statement
        self.properties = properties

    def request(self, context) -> dict:
        """The ALTER's request, checked (one line for a bad one), its id that of the task instance."""
        ti = context["ti"]
        params = {"table": self.table, "statement": self.statement, "properties": self.properties}
        return tasks.validate(
            params, tasks.task_request_id(ti.dag_id, ti.run_id, ti.task_id, getattr(ti, "map_index", None)), self.alterflow_conn_id
        )

    def execute(self, context) -> dict:
        request, conn_id = self.request(context), self.alterflow_conn_id
        self.log.info("ALTER TABLE %s: request %s", request["table"], request["request_id"])
        self.wait_for_turn(context, request, "turn_came")
        validated = tasks.plan(request, conn_id)
        if ValidatedPlan.from_json(validated).kind == JobKind.LIGHT:
            tasks.commit(request, validated, conn_id)
        else:
            started = tasks.start(request, validated, conn_id)
            self.drive(int(started["job_id"]), request["request_id"])
        return self.finish(context, request, validated)

    def boundary_reached(self, context, event: dict | None = None) -> dict:
        _event_or_fail(event)
        return self.execute(context)  # every step again: each finds what is done and goes on

    turn_came = boundary_reached

    def swapped(self, context, event: dict | None = None) -> dict:
        _event_or_fail(event)
        return self.finish(context, self.request(context))

    def finish(self, context, request: dict, validated: dict | None = None) -> dict:
        job = tasks.done(request, validated, self.alterflow_conn_id)
        event = tasks.schema_change_event(job, self.alterflow_conn_id)
        if event is not None:  # DAGs scheduled on the table's asset run
            context["outlet_events"][AssetAlias(SCHEMA_CHANGES_ALIAS)].add(Asset(event.uri), extra=event.extra)
        return job
