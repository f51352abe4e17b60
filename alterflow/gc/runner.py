"""`run_gc`: the garbage-collection steps in order, in-process (what `alterflow gc` runs; the
`alterflow_gc` DAG runs the same steps as tasks)."""

from __future__ import annotations

import pathlib
from collections.abc import Callable
from datetime import datetime

from alterflow.catalog.catalog import Catalog
from alterflow.gc import steps
from alterflow.settings import DEFAULT_LEASE_S


def run_gc(
    catalog: Catalog,
    warehouse: pathlib.Path,
    spark_factory: Callable[[], object],
    retention_s: int = steps.DEFAULT_RETENTION_S,
    now: datetime | None = None,
    on_step: Callable[[str, dict], None] | None = None,
    lease_s: float = DEFAULT_LEASE_S,
    orphan_retention_s: int = steps.DEFAULT_ORPHAN_RETENTION_S,
) -> dict:
    """Every step of `steps.GC_STEPS`, in that order; step name -> what it did. `on_step(name,
    result)` hears of each step as it finishes (a later step may still fail). The jobs it resumes
    and the compactions it commits hold leases of `lease_s` (`Settings.lease_s`); files no catalog row
    names wait `orphan_retention_s` (steps.orphan_age)."""
    calls = {
        "abort_expired_loads": lambda: steps.abort_expired_loads(catalog, warehouse, now=now),
        "resume_orphaned_jobs": lambda: steps.resume_orphaned_jobs(catalog, warehouse, spark_factory, lease_s),
        "drop_origin_indexes": lambda: steps.drop_origin_indexes(catalog, warehouse, retention_s, now=now),
        "compact": lambda: steps.compact(catalog, warehouse, spark_factory, lease_s),
        "collect_versions": lambda: steps.collect_versions(catalog, retention_s, now=now),
        "delete_files": lambda: steps.delete_files(catalog, warehouse, retention_s, now, orphan_retention_s, lease_s),
    }
    results = {}
    for name in steps.GC_STEPS:
        results[name] = calls[name]()
        if on_step is not None:
            on_step(name, results[name])
    return results
