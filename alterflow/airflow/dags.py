"""The DAG factories of alterflow's DAGs, so a DAG file is two lines (`dags/` in this
repository, or a team's own DAG folder once alterflow is pip-installed):

    from alterflow.airflow.dags import alterflow_schema_change
    alterflow_schema_change()

`alterflow_schema_change`, `alterflow_gc` and `alterflow_migrate` are `@dag` functions: calling one in a DAG file
defines the DAG there (Airflow records the calling file as the DAG's file)."""

from __future__ import annotations

import copy
from datetime import timedelta

import pendulum
from airflow.providers.standard.operators.hitl import ApprovalOperator
from airflow.providers.standard.operators.trigger_dagrun import TriggerDagRunOperator
from airflow.sdk import Asset, AssetAlias, Param, dag, task
from airflow.sdk.exceptions import AirflowFailException

from alterflow.airflow import gc_tasks, migrate_tasks, runs, tasks
from alterflow.airflow.operators import (
    ConvertHistoryOperator,
    RewriteInWorkerOperator,
    SwapOperator,
    ValidateRunOperator,
    WaitForBoundaryOperator,
)
from alterflow.schema_change_events import SCHEMA_CHANGES_ALIAS
from alterflow.settings import long_steps_pool

__all__ = ["alterflow_schema_change", "alterflow_gc", "alterflow_migrate", "SCHEMA_CHANGES"]

# Every finished ALTER emits an event on its table's asset, alterflow://<catalog name>/<table>,
# through this alias (the tables are not known when the DAG is parsed).
SCHEMA_CHANGES = AssetAlias(SCHEMA_CHANGES_ALIAS)

SCHEMA_CHANGE_DOC = """### alterflow_schema_change

One `ALTER TABLE` as one DAG run: **validate** the run's params and wait for the run's turn on its
table (deferred while a job of the table is unfinished or runs triggered before it wait: the runs
of one table go in trigger order), then plan it: a **lightweight** change is committed right there
and emits its asset event, and so is a rewrite of a small table while no task of the DAG waits
for a worker slot (the local engine: started, converted without Spark, checked and swapped in that
task, its waits deferred); the run ends with that one task (the tasks after it show as skipped). A rewrite on Spark goes on: → **plan** it against the table's
current version (with the `dry_run` param: EXPLAIN ANALYZE it, in the plan task's log and XCom,
and stop there) → **branch**: a lightweight change is one catalog **commit**; a heavyweight one
**start**s a job (shadow index, new version, boundary), **waits for the boundary** (deferred: no
worker slot while loads below it finish), **converts** history with Spark (`spark-submit` on the
`spark_default` connection's master, `local[*]` without one), **checks** the result with Great
Expectations and **swaps** (with `postpone_swap` it waits, deferred, for `RESUME ALTER TABLE
COLUMN`). A job on the local engine that `validate` left to the later tasks (other tasks were
waiting for a slot) takes the other branch of **start**: **rewrite_in_worker** runs the same
steps in one task, in the worker, without Spark. **done** returns the job and emits an asset event on the table's asset,
`alterflow://<catalog name>/<table>` (through the asset alias `alterflow_schema_changes`; extra:
from_version, to_version, statement, kind, job_id), which DAGs scheduled on that asset react to. The run id is the job's request id: a retried task finds
its job.

Every heavy task drives the job under the run's runner lease: a retried or cleared task resumes it.
A run whose statement is the same text as an orphaned job's ALTER (its runner died: the `alterflow_gc`
DAG, the Schema changes page's Resume button and `RESUME ALTER TABLE COLUMN` with
`ALTERFLOW_AIRFLOW_URL` start such runs) takes that job over and drives it to the end.

Every component (worker, triggerer) needs the same `ALTERFLOW_CATALOG_URL` and `ALTERFLOW_WAREHOUSE`
(or `ALTERFLOW_HOME`) as the CLI.
"""

GC_DOC = """### alterflow_gc

Garbage collection and compaction (docs/gc.md), hourly, one run at a time, one task per step in the
order of `alterflow.gc.gc_steps.GC_STEPS` (the order `alterflow gc` runs them in):
**abort_expired_loads** (PREPARE transactions whose lease or timeout ran out: a dead load) →
**find_orphaned_jobs** / **resume_orphaned_jobs** (one `alterflow_schema_change` run per alter job
whose runner died, taking it over with the same statement) →
**drop_origin_indexes** (origin indexes left by a swap, after `ALTERFLOW_GC_RETENTION` seconds) →
**compact** (tablets with files under old versions, rewritten under the current one) →
**collect_versions** (versions no file, view or job needs) →
**delete_files** (the one step that deletes data files: those that left their table at least
`ALTERFLOW_GC_RETENTION` seconds ago, files no catalog row names, finished staging folders; only in
a warehouse this catalog owns).
"""

JOB_ID = "{{ ti.xcom_pull(task_ids='start', key='job')['job_id'] }}"
# A retried step resumes (steps are idempotent), well inside the lease a finished task hands on.
HEAVY = {"retries": 2, "retry_delay": timedelta(seconds=10)}
# The short steps retry too, soon: a transient error (a locked database, a task process lost on a
# busy worker) must not fail an ALTER. A refusal (AirflowFailException) still fails at once.
LIGHT = {"retries": 2, "retry_delay": timedelta(seconds=2)}
MAX_ACTIVE_RUNS = 100_000  # a DAG's runs at once: any number (see alterflow_schema_change)
MAX_ACTIVE_TASKS = 100_000  # its tasks at once, across its runs: as many as the executor has slots
# Which waiting task the scheduler hands a free slot first (Airflow's priority_weight; "absolute":
# the weight as given, not summed along the graph): a step that ends a run or a change (`validate`
# ends a lightweight change's run: it commits it), then the other short steps of a run under way,
# then the long ones, which convert data, and GC's. A light ALTER so goes before another table's
# rewrite (docs/deploy.md#priorities-and-worker-start-up).
ENDING_STEP = {"priority_weight": 4, "weight_rule": "absolute"}
SHORT_STEP = {"priority_weight": 3, "weight_rule": "absolute"}
# The long steps also take their slots from ALTERFLOW_AIRFLOW_LONG_POOL's pool where one is named:
# a pool smaller than the executor's slots keeps the rest for short steps, which a priority weight
# alone cannot (a slot that a conversion holds is not handed back until it ends).
LONG_POOL = long_steps_pool()
LONG_STEP = {"priority_weight": 1, "weight_rule": "absolute", **({"pool": LONG_POOL} if LONG_POOL else {})}

# An ALTER TABLE statement, as the trigger form checks it before a run exists (the validate task
# checks the rest: that it parses, names a known table, ...). JSON Schema's regex has no flags.
ALTER_PATTERN = r"^(\s|--[^\n]*\n|/\*[\s\S]*?\*/)*[Aa][Ll][Tt][Ee][Rr]\s+[Tt][Aa][Bb][Ll][Ee]\s+\S"  # after comments too
PROPERTIES = "Properties (optional: each overrides the statement's PROPERTIES)"

# The trigger form: the statement and its properties, nothing internal. Two conf keys are not
# here on purpose: `table` (the statement names it; REST callers may still send it, and it must
# match) and `resume_job_id` (set by alterflow_gc and the page's Resume to take an orphaned job
# over). Both still reach the tasks, as Airflow merges a run's conf into its params. Each DAG gets
# copies of them (`own_params`).
PARAMS = {
    "statement": Param(
        "",
        type="string",
        format="multiline",
        pattern=ALTER_PATTERN,
        title="ALTER TABLE statement",
        description="Exactly one ALTER TABLE statement; the table it names is the table altered, e.g. "
        "ALTER TABLE orders MODIFY COLUMN amount BIGINT",
    ),
    "postpone_swap": Param(
        None,
        type=["null", "boolean"],
        title="Postpone the swap",
        description="A rewrite stops at READY_TO_SWAP, validated, and waits for someone to swap it "
        "(Resume on the Schema changes page, or RESUME ALTER TABLE COLUMN FROM <table>).",
        section=PROPERTIES,
    ),
    "on_cast_error": Param(
        None,
        type=["null", "string"],
        enum=[None, "fail", "null", "quarantine"],
        values_display={
            "fail": "fail: cancel the job (the default)",
            "null": "null: the value becomes NULL",
            "quarantine": "quarantine: keep the row aside",
        },
        title="When a value does not convert",
        description="fail (the default) cancels the job naming the values; null makes them NULL; quarantine keeps "
        "their rows unconverted in the table's quarantine table.",
        section=PROPERTIES,
    ),
    "engine": Param(
        None,
        type=["null", "string"],
        enum=[None, "auto", "local", "spark"],
        title="Conversion engine",
        description="auto (the default): in the worker for a small table, on Spark otherwise.",
        section=PROPERTIES,
    ),
    "timeout": Param(
        None,
        type=["null", "integer"],
        minimum=1,
        title="Timeout (seconds)",
        description="The job is cancelled if it has not finished by then (default 86400).",
        section=PROPERTIES,
    ),
    "properties": Param(
        {},
        type=["object", "string", "null"],
        title="Other properties (JSON)",
        description='Optional JSON object of any other properties, e.g. {"expected_version": 3}.',
        section=PROPERTIES,
    ),
    "dry_run": Param(
        False,
        type=["boolean", "null"],
        title="Dry run (EXPLAIN ANALYZE)",
        description="Stop after the plan: EXPLAIN ANALYZE the statement (values that would fail to convert, with "
        "samples, and the estimated seconds), in the plan task's log and XCom. Nothing changes.",
    ),
}


def own_params() -> None:
    """First in each DAG's body: the DAG being made gets copies of its Params. `@dag(params=...)`
    hands the same Param objects to every DAG made from the function, and Airflow writes a run's
    conf into them: a DAG parsed again in the same process (`dag.test()`, a worker) would take one
    run's `to: 2` as the next run's default. (Two runs of one parsed DAG object still share its
    Params, as in Airflow itself; Airflow's own processes parse the file for each run.) The DAG
    being made is found as `with DAG(...)` registers it: Airflow's SDK has no public accessor."""
    from airflow.sdk.definitions._internal.contextmanager import DagContext

    current = DagContext.get_current()
    current.params = copy.deepcopy(current.params)


# What the three DAGs share: a fixed start in the past, no catch-up runs, one tag to find them by.
EVERY_DAG = {"start_date": pendulum.datetime(2026, 1, 1, tz="UTC"), "catchup": False, "tags": ["alterflow"]}


@dag(
    dag_id="alterflow_schema_change",
    description="One ALTER TABLE: validated, planned, then committed as metadata or converted with dual writes, checked and swapped",
    schedule=None,
    params=PARAMS,
    doc_md=SCHEMA_CHANGE_DOC,
    # Any number of ALTERs at once, across tables: Airflow's default (16 active runs a DAG) would
    # hold the 17th run queued until a rewrite elsewhere ended. Runs of one table take turns in
    # `validate`, deferred: a waiting run holds no worker slot. Nor does Airflow's default of 16
    # tasks at once a DAG cap a fleet of more slots: the executor's slots are the limit.
    max_active_runs=MAX_ACTIVE_RUNS,
    max_active_tasks=MAX_ACTIVE_TASKS,
    **EVERY_DAG,
)
def alterflow_schema_change():
    own_params()

    @task(**LIGHT, **SHORT_STEP)
    def plan(request: dict, params=None) -> dict:
        if tasks.is_dry_run(params):
            return tasks.dry_run(request)
        return tasks.plan(request)

    @task.branch(**LIGHT, **SHORT_STEP)
    def branch(validated: dict) -> str:
        return tasks.branch(validated)

    @task(**LIGHT, **ENDING_STEP)
    def commit(request: dict, validated: dict) -> dict:
        return tasks.commit(request, validated)

    @task.branch(**HEAVY, **SHORT_STEP)
    def start(request: dict, validated: dict, ti=None) -> str:
        started = tasks.start(request, validated)
        ti.xcom_push(key="job", value=started)  # the job for the tasks after it (JOB_ID)
        return tasks.route(started["job_id"])

    @task(**HEAVY, **LONG_STEP)
    def check(job_id: str, run_id=None) -> dict:
        return tasks.check(int(job_id), run_id)

    @task(trigger_rule="none_failed_min_one_success", outlets=[SCHEMA_CHANGES], **LIGHT, **ENDING_STEP)
    def done(request: dict, validated: dict, outlet_events=None) -> dict:
        finished = tasks.done(request, validated)
        event = tasks.schema_change_event(finished)
        if event is not None:  # downstream DAGs scheduled on the table's asset run
            outlet_events[SCHEMA_CHANGES].add(Asset(event.uri), extra=event.extra)
        return finished

    request = ValidateRunOperator(task_id="validate", **LIGHT, **ENDING_STEP).output
    validated = plan(request)
    committed = commit(request, validated)
    started = start(request, validated)
    branch(validated) >> [committed, started]

    wait = WaitForBoundaryOperator(task_id="wait_for_boundary", job_id=JOB_ID, **HEAVY, **SHORT_STEP)
    convert = ConvertHistoryOperator(task_id="convert", job_id=JOB_ID, **HEAVY, **LONG_STEP)
    swap = SwapOperator(task_id="swap", job_id=JOB_ID, **HEAVY, **ENDING_STEP)
    in_worker = RewriteInWorkerOperator(task_id="rewrite_in_worker", job_id=JOB_ID, **HEAVY, **LONG_STEP)
    started >> [wait, in_worker]
    wait >> convert >> check(JOB_ID) >> swap
    [committed, swap, in_worker] >> done(request, validated)


@dag(
    dag_id="alterflow_gc",
    description="Hourly: old files, indexes and schema versions collected, tablets compacted, orphaned jobs taken over",
    schedule="@hourly",
    max_active_runs=1,
    default_args={"retries": 1, "retry_delay": timedelta(minutes=5), **LONG_STEP},  # after every ALTER's step
    doc_md=GC_DOC,
    **EVERY_DAG,
)
def alterflow_gc():
    @task(task_id=gc_tasks.FIND_ORPHANS)
    def find_orphaned_jobs() -> list[dict]:
        return gc_tasks.orphan_runs(gc_tasks.schema_change_run_alive)

    previous = None
    for name in gc_tasks.STEP_ORDER:
        if name == "resume_orphaned_jobs":
            found = find_orphaned_jobs()
            step = TriggerDagRunOperator.partial(
                task_id=name,
                trigger_dag_id=gc_tasks.SCHEMA_CHANGE_DAG,
                skip_when_already_exists=True,
                openlineage_inject_parent_info=False,
            ).expand_kwargs(found)
            previous >> found
        else:
            # After resume_orphaned_jobs, which is skipped when no job is orphaned.
            step = task(task_id=name, trigger_rule="none_failed")(gc_tasks.step_function(name))()
            if previous is not None:
                previous >> step
        previous = step


MIGRATE_DOC = """### alterflow_migrate

Applies the pending files of a migrations directory (`V<version>__<words>.sql`, docs/migrations.md), in
version order, with a person's approval where the project's lint rules ask for one:

**lint** plans every pending statement (up to the `to` param's version) in order against the
schema the statements before it leave, and analyses each rewrite on today's data (EXPLAIN ANALYZE:
values that would fail to convert, with samples, and the estimated seconds), then checks the rules
of `[tool.alterflow.lint]` in the project's `pyproject.toml`. The report is in its log and in its
XCom `report` (the JSON of `alterflow migrate lint --format json`). A finding at level `error`, or
anything `apply` would refuse (a FAILED file, an applied file edited or deleted since), fails the
run here, with nothing applied →
**needs_approval** goes on only when a finding says `approve` (by default: a rewrite); otherwise
the approval is skipped →
**approval** (Airflow's human-in-the-loop `ApprovalOperator`: the run waits in the state
*awaiting input*, under *Required Actions* in the UI or `PATCH .../taskInstances/approval/-1/hitlDetails`
in the REST API) shows each pending statement with its plan, analysis and findings. *Reject* skips
**apply** and ends the run with nothing applied →
**apply** runs `alterflow migrate apply` in the worker (the embedded runner; a heavyweight
statement's rewrite on the local engine or on Spark, as `alterflow sql` would): only when the
pending files are still those the lint read (same scripts, same checksums), under the catalog's
apply lease, stopping at the first failure (its file FAILED; a later run continues from the
statement that failed, and no statement runs twice). Every statement that made a schema version
emits its table's asset event, `alterflow://<catalog name>/<table>`, through the asset alias
`alterflow_schema_changes` as the schema-change DAG does (extra also: `migration`,
`migration_version`). The history records who applied: the user who triggered the run, and who
approved it.

Params: `migrations_dir` (default `ALTERFLOW_MIGRATIONS`, else `migrations`; a relative path is
read from the worker's working directory) and `to` (the last version to apply; empty: all). One
run at a time.
"""

MIGRATE_PARAMS = {
    "migrations_dir": Param(
        migrate_tasks.default_dir(),
        type="string",
        title="Migrations directory",
        description="The directory of V<version>__<words>.sql files the workers read (empty: ALTERFLOW_MIGRATIONS, else migrations).",
    ),
    "to": Param(
        None,
        type=["null", "string", "integer"],  # checked by the lint task, with one line
        title="Up to version",
        description="Apply the pending files up to this version, e.g. 3 or 1.2 (empty: every pending file).",
    ),
}


@dag(
    dag_id="alterflow_migrate",
    description="A directory of versioned migration files: linted, approved by a person where the rules ask, applied in order",
    schedule=None,
    max_active_runs=1,
    params=MIGRATE_PARAMS,
    doc_md=MIGRATE_DOC,
    **EVERY_DAG,
)
def alterflow_migrate():
    own_params()

    @task(**LIGHT)
    def lint(params=None, ti=None) -> dict:
        summary, report, body = migrate_tasks.lint(params)  # the report's text is in the log
        ti.xcom_push(key="report", value=report)
        ti.xcom_push(key="approval_body", value=body)
        failure = migrate_tasks.lint_failure(report)
        if failure is not None:
            runs.record_failure(failure)  # the run's note and the task log's one line
            raise AirflowFailException(failure)
        return summary

    @task.short_circuit(ignore_downstream_trigger_rules=False)
    def needs_approval(summary: dict) -> bool:
        return summary["approvals"] > 0

    approval = ApprovalOperator(
        task_id="approval",
        subject="Apply {{ ti.xcom_pull(task_ids='lint')['statements'] }} pending migration statement(s) of "
        "{{ ti.xcom_pull(task_ids='lint')['directory'] }}?",
        body="{{ ti.xcom_pull(task_ids='lint', key='approval_body') }}",
    )

    @task(trigger_rule="none_failed", outlets=[SCHEMA_CHANGES], **HEAVY)
    def apply(summary: dict, run_id=None, dag_run=None, ti=None, outlet_events=None) -> dict:
        approved = ti.xcom_pull(task_ids="approval")  # None when the approval was skipped
        who = migrate_tasks.who(getattr(dag_run, "triggering_user_name", None), run_id, approved)
        applied = migrate_tasks.apply(summary, who)
        for event in applied["events"]:  # downstream DAGs scheduled on a changed table's asset run
            outlet_events[SCHEMA_CHANGES].add(Asset(event["uri"]), extra=event["extra"])
        return applied

    summary = lint()
    needs_approval(summary) >> approval >> apply(summary)
