"""### alterflow_gc

Garbage collection and compaction (SPEC §6), hourly, one run at a time, one task per step in the
order of `alterflow.gc.steps.GC_STEPS` (the order `alterflow gc` runs them in):
**drop_origin_indexes** (origin indexes left by a swap, after `ALTERFLOW_GC_RETENTION` seconds) →
**compact** (tablets with files under old versions, rewritten under the current one) →
**collect_versions** (versions no file, view or job needs).
"""

from __future__ import annotations

from datetime import timedelta

import pendulum
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
    previous = None
    for name in gc_tasks.STEP_ORDER:
        step = task(task_id=name)(gc_tasks.step_function(name))()
        if previous is not None:
            previous >> step
        previous = step


alterflow_gc()
