"""### alterflow_gc

Garbage collection and compaction (SPEC §6), hourly, one run at a time, one task per step in the
order of `alterflow.gc.steps.GC_STEPS` (the order `alterflow gc` runs them in):
**abort_expired_loads** (PREPARE transactions whose lease or timeout ran out: a dead load) →
**find_orphaned_jobs** / **resume_orphaned_jobs** (one `alterflow_schema_change` run per alter job
whose runner died, taking it over with the same statement) →
**drop_origin_indexes** (origin indexes left by a swap, after `ALTERFLOW_GC_RETENTION` seconds) →
**compact** (tablets with files under old versions, rewritten under the current one) →
**collect_versions** (versions no file, view or job needs).
"""

from __future__ import annotations

from datetime import timedelta

import pendulum
from airflow.providers.standard.operators.trigger_dagrun import TriggerDagRunOperator
from airflow.sdk import dag, task

from alterflow_airflow import gc_tasks


@dag(
    dag_id="alterflow_gc",
    schedule="@hourly",
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False,
    max_active_runs=1,
    default_args={"retries": 1, "retry_delay": timedelta(minutes=5)},
    tags=["alterflow"],
    doc_md=__doc__,
)
def alterflow_gc():
    @task(task_id=gc_tasks.FIND_ORPHANS)
    def find_orphaned_jobs() -> list[dict]:
        return gc_tasks.orphan_runs()

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


alterflow_gc()
