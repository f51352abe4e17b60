"""### alterflow_schema_change

One `ALTER TABLE` as one DAG run: **validate** the run's params → **plan** it against the table's
current version → **branch**: a lightweight change is one catalog **commit**; a heavyweight one
**start**s a job (shadow index, new version, boundary), **waits for the boundary** (deferred: no
worker slot while loads below it finish), **converts** history with Spark (`spark-submit` on the
`spark_default` connection's master, `local[*]` without one), **checks** the result with Great
Expectations and **swaps** (with `postpone_swap` it waits, deferred, for `RESUME ALTER TABLE
COLUMN`). A job on the local engine (a small table, `"engine" = "auto"` or `"local"`) takes the
other branch of **start**: **rewrite_in_worker** runs the same steps in one task, in the worker,
without Spark. **done** returns the job. The run id is the job's request id: a retried task finds
its job.

Every heavy task drives the job under the run's runner lease: a retried or cleared task resumes it.
A run whose statement is the same text as an orphaned job's ALTER (its runner died: the `alterflow_gc`
DAG, the Schema changes page's Resume button and `RESUME ALTER TABLE COLUMN` with
`ALTERFLOW_AIRFLOW_URL` start such runs) takes that job over and drives it to the end.

Every component (worker, triggerer) needs the same `ALTERFLOW_CATALOG_URL` and `ALTERFLOW_WAREHOUSE`
(or `ALTERFLOW_HOME`) as the CLI.
"""

from __future__ import annotations

from datetime import timedelta

import pendulum
from airflow.sdk import Param, dag, task

from alterflow_airflow import tasks
from alterflow_airflow.operators import ConvertHistoryOperator, RewriteInWorkerOperator, SwapOperator, WaitForBoundaryOperator

JOB_ID = "{{ ti.xcom_pull(task_ids='start', key='job')['job_id'] }}"
# A retried step resumes (steps are idempotent), well inside the lease a finished task hands on.
HEAVY = {"retries": 2, "retry_delay": timedelta(seconds=10)}
# The short steps retry too, soon: a transient error (a locked database, a task process lost on a
# busy worker) must not fail an ALTER. A refusal (AirflowFailException) still fails at once.
LIGHT = {"retries": 2, "retry_delay": timedelta(seconds=2)}

PARAMS = {
    "table": Param(
        "",
        type="string",
        title="Table",
        description="The table to alter, e.g. orders (letters, digits and _, starting with a letter or _).",
    ),
    "statement": Param(
        "",
        type="string",
        format="multiline",
        title="ALTER TABLE statement",
        description="Exactly one ALTER TABLE statement of that table, e.g. ALTER TABLE orders MODIFY COLUMN amount BIGINT",
    ),
    "properties": Param(
        {},
        type=["object", "string", "null"],
        title="Properties",
        description="Optional JSON object added to (and overriding) the statement's PROPERTIES, e.g. "
        '{"postpone_swap": "true", "on_cast_error": "null", "timeout": "3600"}.',
    ),
    "resume_job_id": Param(
        None,
        type=["null", "integer", "string"],  # checked by the validate task, with one line
        title="Orphaned job to take over",
        description="Leave empty. Set by alterflow_gc and the Schema changes page's Resume button: the id of "
        "the orphaned alter job (its runner died) whose statement this run drives to the end.",
    ),
}


@dag(
    dag_id="alterflow_schema_change",
    schedule=None,
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False,
    params=PARAMS,
    tags=["alterflow"],
    doc_md=__doc__,
)
def alterflow_schema_change():
    @task(**LIGHT)
    def validate(params=None, run_id=None) -> dict:
        return tasks.validate(params, run_id)

    @task(**LIGHT)
    def plan(request: dict) -> dict:
        return tasks.plan(request)

    @task.branch(**LIGHT)
    def branch(validated: dict) -> str:
        return tasks.branch(validated)

    @task(**LIGHT)
    def commit(request: dict, validated: dict) -> dict:
        return tasks.commit(request, validated)

    @task.branch(**HEAVY)
    def start(request: dict, validated: dict, ti=None) -> str:
        started = tasks.start(request, validated)
        ti.xcom_push(key="job", value=started)  # the job for the tasks after it (JOB_ID)
        return tasks.route(started["job_id"])

    @task(**HEAVY)
    def check(job_id: str, run_id=None) -> dict:
        return tasks.check(int(job_id), run_id)

    @task(trigger_rule="none_failed_min_one_success", **LIGHT)
    def done(request: dict, validated: dict) -> dict:
        return tasks.done(request, validated)

    request = validate()
    validated = plan(request)
    committed = commit(request, validated)
    started = start(request, validated)
    branch(validated) >> [committed, started]

    wait = WaitForBoundaryOperator(task_id="wait_for_boundary", job_id=JOB_ID, **HEAVY)
    convert = ConvertHistoryOperator(task_id="convert", job_id=JOB_ID, **HEAVY)
    swap = SwapOperator(task_id="swap", job_id=JOB_ID, **HEAVY)
    in_worker = RewriteInWorkerOperator(task_id="rewrite_in_worker", job_id=JOB_ID, **HEAVY)
    started >> [wait, in_worker]
    wait >> convert >> check(JOB_ID) >> swap
    [committed, swap, in_worker] >> done(request, validated)


alterflow_schema_change()
