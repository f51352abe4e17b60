"""The GC DAG's task bodies: each runs one step of `alterflow.gc.gc_steps` (imported when the task
runs, so the DAG parses without it) on the catalog and warehouse of the alterflow connection
(`AlterflowHook`: `alterflow_default`, else the ALTERFLOW_* environment).

`resume_orphaned_jobs` is the one step the DAG runs differently from `alterflow gc`: a task
(`find_orphaned_jobs`) lists the orphaned jobs, and one `alterflow_schema_change` run per job
(a mapped TriggerDagRunOperator) takes each over with the same ALTER statement."""

from __future__ import annotations

from collections.abc import Callable

from alterflow.airflow.tasks import open_catalog, refusals_fail_the_task
from alterflow.catalog.catalog import utcnow
from alterflow.workflow.background import run_niced

# The order of alterflow.gc.gc_steps.GC_STEPS (tests/dags checks they agree).
STEP_ORDER = ("abort_expired_loads", "resume_orphaned_jobs", "drop_origin_indexes", "compact", "collect_versions", "delete_files")
# The steps `run_step` runs: all but resume_orphaned_jobs, which the DAG maps over runs to trigger.
RUN_STEPS = tuple(step for step in STEP_ORDER if step != "resume_orphaned_jobs")
FIND_ORPHANS = "find_orphaned_jobs"  # the task before resume_orphaned_jobs
SCHEMA_CHANGE_DAG = "alterflow_schema_change"
# The DAG's tasks, in order: the steps, with the look for orphans before their resumption.
DAG_TASKS = tuple(task for step in STEP_ORDER for task in ((FIND_ORPHANS, step) if step == "resume_orphaned_jobs" else (step,)))


def run_step(name: str) -> dict:
    """GC step `name` on the connection's catalog and warehouse; what it did as JSON (the task's XCom).
    GC is background work: the step runs in a thread of `ALTERFLOW_BACKGROUND_NICE` (compaction's
    Spark driver inherits it), so a light ALTER's task in the same worker gets the CPU first."""
    with refusals_fail_the_task():
        settings, catalog = open_catalog()
    return run_niced(settings.background_nice, lambda: _step_result(name, settings, catalog)).to_json()


def _step_result(name: str, settings, catalog):
    from alterflow.gc import gc_steps as gc

    if name == "abort_expired_loads":
        return gc.abort_expired_loads(catalog, settings.warehouse)
    if name == "drop_origin_indexes":
        return gc.drop_origin_indexes(catalog, settings.warehouse, settings.gc_retention_s)
    if name == "compact":
        from alterflow.spark_session import get_spark

        with refusals_fail_the_task():  # a catalog behind its warehouse: refused, not retried
            return gc.compact(catalog, settings.warehouse, lambda: get_spark(settings), settings.lease_s)
    if name == "collect_versions":
        return gc.collect_versions(catalog, settings.gc_retention_s)
    if name == "delete_files":
        return gc.delete_files(
            catalog,
            settings.warehouse,
            settings.gc_retention_s,
            orphan_retention_s=settings.gc_orphan_retention_s,
            lease_s=settings.lease_s,
        )
    raise ValueError(f"unknown GC step {name!r}; the steps a task runs are {', '.join(RUN_STEPS)}")


def step_function(name: str) -> Callable[[], dict]:
    def body() -> dict:
        return run_step(name)

    body.__name__ = name
    body.__doc__ = f"GC step {name} (alterflow.gc.gc_steps.{name})."
    return body


def resume_run_id(job_id: int) -> str:
    """The id of a run that takes over job `job_id`, new at each call (a later GC run that finds
    the job still orphaned, its earlier run having failed, starts another)."""
    return f"resume_job_{job_id}_{utcnow().strftime('%Y%m%dT%H%M%S%f')}"


def takeover_conf(job_id: int, table: str, statement: str) -> dict:
    """The conf of a schema-change run that takes over orphaned job `job_id` (and no other)."""
    return {"table": table, "statement": statement, "properties": {}, "resume_job_id": job_id}


def orphan_runs(run_is_alive: Callable[[str], bool] | None = None) -> list[dict]:
    """The kwargs of one TriggerDagRunOperator per orphaned job: its conf is the job's ALTER. A job
    whose last driver is an `alterflow_schema_change` run that Airflow still queues or runs
    (`run_is_alive(run_id)`, asked of Airflow by the task: `schema_change_run_alive`) is left to it:
    its next task is waiting for a worker slot, or a retry of a task whose worker died, and takes the
    lease back when it starts. A catalog behind its warehouse (a restore, a copy) takes no job over:
    the task fails with the line `alterflow gc` gives (`refuse_if_behind`)."""
    from alterflow.gc.gc_steps import left_to_their_runs, orphaned_jobs, refuse_if_behind

    with refusals_fail_the_task():
        settings, catalog = open_catalog()
        orphans = orphaned_jobs(catalog)
        if orphans:
            refuse_if_behind(catalog, settings.warehouse)
    left = left_to_their_runs(orphans, run_is_alive)
    orphans = [o for o in orphans if o not in left]
    return [
        {"trigger_run_id": resume_run_id(orphan.job_id), "conf": takeover_conf(orphan.job_id, orphan.table, orphan.statement)}
        for orphan in orphans
    ]


def schema_change_run_alive(run_id: str) -> bool:
    """Whether Airflow still queues or runs the `alterflow_schema_change` run `run_id` (asked
    through the running task's supervisor, Airflow's Task SDK)."""
    from airflow.sdk import get_current_context

    live = ("queued", "running")
    return get_current_context()["ti"].get_dr_count(dag_id=SCHEMA_CHANGE_DAG, run_ids=[run_id], states=list(live)) > 0
