"""`run_gc`: the garbage-collection steps in order, in-process (what `alterflow gc` runs; the
`alterflow_gc` DAG runs the same steps as tasks)."""

from __future__ import annotations

import pathlib
from collections.abc import Callable
from datetime import datetime

from alterflow.catalog.catalog import Catalog
from alterflow.gc import gc_steps
from alterflow.settings import DEFAULT_LEASE_S


def run_gc(
    catalog: Catalog,
    warehouse: pathlib.Path,
    spark_factory: Callable[[], object],
    retention_s: int = gc_steps.DEFAULT_RETENTION_S,
    now: datetime | None = None,
    on_step: Callable[[str, gc_steps.GcStepResult], None] | None = None,
    lease_s: float = DEFAULT_LEASE_S,
    orphan_retention_s: int = gc_steps.DEFAULT_ORPHAN_RETENTION_S,
    run_is_alive: Callable[[str], bool] | None = None,
) -> dict[str, gc_steps.GcStepResult]:
    """Every step of `gc_steps.GC_STEPS`, in that order; step name -> what it did (the step's result
    dataclass). `on_step(name, result)` hears of each step as it finishes (a later step may still
    fail). The jobs it resumes and the compactions it commits hold leases of `lease_s`
    (`Settings.lease_s`); files no catalog row names wait `orphan_retention_s` (gc_steps.orphan_age).
    `run_is_alive(run_id)` says whether Airflow still queues or runs a schema-change run: the jobs
    such a run drives are left to it (`gc_steps.left_to_their_runs`)."""
    calls = {
        "abort_expired_loads": lambda: gc_steps.abort_expired_loads(catalog, warehouse, now=now),
        "resume_orphaned_jobs": lambda: gc_steps.resume_orphaned_jobs(catalog, warehouse, spark_factory, lease_s, run_is_alive),
        "drop_origin_indexes": lambda: gc_steps.drop_origin_indexes(catalog, warehouse, retention_s, now=now),
        "compact": lambda: gc_steps.compact(catalog, warehouse, spark_factory, lease_s),
        "collect_versions": lambda: gc_steps.collect_versions(catalog, retention_s, now=now),
        "delete_files": lambda: gc_steps.delete_files(catalog, warehouse, retention_s, now, orphan_retention_s, lease_s),
    }
    results: dict[str, gc_steps.GcStepResult] = {}
    for name in gc_steps.GC_STEPS:
        results[name] = calls[name]()
        if on_step is not None:
            on_step(name, results[name])
    return results
