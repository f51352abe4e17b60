"""The garbage-collection steps (SPEC §6). JSON-able dicts out, idempotent, catalog first and files
after, so a run killed anywhere is finished by the next one.

drop_origin_indexes  aborts load transactions past their timeout, drops RETIRED indexes (origins of
                     swaps, indexes of dropped tables) past the retention period with their files,
                     and deletes every file the catalog proves unreferenced (left by a crash).
compact              rewrites each tablet holding live files written under old versions into one
                     file under the current version (Spark), skipping tables with an unfinished
                     alter job.
collect_versions     deletes the schema versions nothing needs any more.
"""

from __future__ import annotations

import pathlib
from collections.abc import Callable
from datetime import datetime, timedelta

from alterflow.gc.compaction import compact_tablet
from alterflow.gc.files import delete_paths, sweep
from catalog.catalog import Catalog, utcnow
from catalog.errors import CatalogError
from catalog.garbage import GarbageCollection

GC_STEPS = ("drop_origin_indexes", "compact", "collect_versions")
DEFAULT_RETENTION_S = 3600


def _cutoff(retention_s: int, now: datetime | None) -> datetime:
    if isinstance(retention_s, bool) or not isinstance(retention_s, int) or retention_s < 0:
        raise ValueError(f"retention must be a whole number of seconds, 0 or more; got {retention_s!r}")
    return (now or utcnow()) - timedelta(seconds=retention_s)


def drop_origin_indexes(
    catalog: Catalog, warehouse: pathlib.Path, retention_s: int = DEFAULT_RETENTION_S, now: datetime | None = None
) -> dict:
    cutoff = _cutoff(retention_s, now)
    warehouse = pathlib.Path(warehouse)
    gc = GarbageCollection(catalog)
    expired = catalog.abort_expired_transactions(now=now)
    delete_paths(warehouse, expired)
    dropped, files = [], 0
    for index_id in gc.expired_indexes(cutoff):
        paths = gc.drop_index(index_id, cutoff)  # the catalog first ...
        files += delete_paths(warehouse, paths)  # ... then the files
        dropped.append(index_id)
    swept = sweep(gc, warehouse)
    return {
        "dropped_indexes": dropped,
        "index_files_deleted": files,
        "expired_transaction_files": len(expired),
        "unreferenced_files_deleted": swept.dead_files + len(swept.orphan_files),
        "orphan_files": swept.orphan_files,
        "staging_dirs_deleted": swept.staging_dirs,
    }


def compact(catalog: Catalog, warehouse: pathlib.Path, spark_factory: Callable[[], object]) -> dict:
    warehouse = pathlib.Path(warehouse)
    gc = GarbageCollection(catalog)
    skipped = [
        {"table": b.table_name, "table_id": b.table_id, "reason": f"alter job {b.job_id} is {b.job_state}"}
        for b in gc.busy_tables()
    ]
    targets = gc.compaction_targets()
    compacted, replaced, rows, conflicts = [], 0, 0, []
    spark = spark_factory() if targets else None
    for target in targets:
        try:
            done = compact_tablet(spark, catalog, warehouse, target)
        except CatalogError as exc:  # a drop, a swap, a job, a timeout or another compaction got there first
            conflicts.append({"table": target.table_name, "tablet_id": target.tablet_id, "reason": str(exc)})
            continue
        if done is None:
            continue
        compacted.append({
            "table": target.table_name, "tablet_id": target.tablet_id, "txn_id": done.txn_id,
            "from_versions": list(target.old_versions), "to_version": done.version,
            "files_in": len(done.replaced), "rows_in": done.rows_in, "rows_out": done.rows_out,
        })
        replaced += len(done.replaced)
        rows += done.rows_out
    return {
        "tablets_compacted": len(compacted),
        "files_replaced": replaced,
        "rows_written": rows,
        "tablets": compacted,
        "skipped_tables": skipped,
        "conflicts": conflicts,
    }


def collect_versions(
    catalog: Catalog, retention_s: int = DEFAULT_RETENTION_S, now: datetime | None = None
) -> dict:
    """Versions superseded at least `retention_s` ago are eligible (a load that read a version just
    before a newer one committed may still write under it for a while)."""
    cutoff = _cutoff(retention_s, now)
    deleted = GarbageCollection(catalog).collect_versions(cutoff)
    return {
        "versions_deleted": sum(len(d.versions) for d in deleted),
        "tables": [{"table": d.table_name, "table_id": d.table_id, "versions": list(d.versions)} for d in deleted],
    }
