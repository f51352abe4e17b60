"""The garbage-collection steps (docs/gc.md). JSON-able dicts out, idempotent, catalog first and files
after, so a run killed anywhere is finished by the next one.

abort_expired_loads  aborts PREPARE transactions past their lease or timeout (a dead or stuck load);
                     their files leave with the sweep, after the retention period.
resume_orphaned_jobs drives every orphaned alter job (its runner died) to its end, in this process
                     (the `alterflow_gc` DAG starts one `alterflow_schema_change` run per job instead,
                     from `orphaned_jobs`).
drop_origin_indexes  drops RETIRED indexes (origins of swaps, indexes of dropped tables) past the
                     retention period, in the catalog: their files leave with `delete_files`.
compact              rewrites each tablet holding live files written under old versions into one
                     file under the current version (Spark), skipping tables with an unfinished
                     alter job.
collect_versions     deletes the schema versions nothing needs any more.
delete_files         the only step that deletes data files, last: every file that left its table
                     at least the retention period ago (deferred deletes), every file the catalog
                     proves unreferenced (left by a crash) and finished staging folders, only
                     through the warehouse the catalog owns (alterflow.store.warehouse).
"""

from __future__ import annotations

import math
import pathlib
from collections.abc import Callable
from datetime import datetime, timedelta

from alterflow.catalog.catalog import Catalog, utcnow
from alterflow.catalog.errors import CatalogError
from alterflow.catalog.garbage import GarbageCollection
from alterflow.catalog.leases import JobLeases, last_seen
from alterflow.gc.compaction import compact_tablet
from alterflow.gc.files import OrphanAge, Sweep, sweep
from alterflow.settings import DEFAULT_LEASE_S
from alterflow.store.layout import LinkInWarehouse
from alterflow.store.warehouse import Warehouse

GC_STEPS = ("abort_expired_loads", "resume_orphaned_jobs", "drop_origin_indexes", "compact", "collect_versions", "delete_files")
DEFAULT_RETENTION_S = 3600
DEFAULT_ORPHAN_RETENTION_S = 3 * 24 * 3600  # Iceberg's remove_orphan_files default: files no row names wait this long


def _cutoff(retention_s: int, now: datetime | None) -> datetime:
    if isinstance(retention_s, bool) or not isinstance(retention_s, int) or retention_s < 0:
        raise ValueError(f"retention must be a whole number of seconds, 0 or more; got {retention_s!r}")
    return (now or utcnow()) - timedelta(seconds=retention_s)


def orphan_age(retention_s: int, orphan_retention_s: int, lease_s: float, now: datetime | None) -> OrphanAge:
    """How old a file no catalog row names must be before it is deleted: the orphan retention,
    never shorter than the retention or the longest lease (a writer holding its lease may still
    be about to record or rename its file)."""
    if isinstance(orphan_retention_s, bool) or not isinstance(orphan_retention_s, int) or orphan_retention_s < 0:
        raise ValueError(f"orphan retention must be a whole number of seconds, 0 or more; got {orphan_retention_s!r}")
    seconds = max(orphan_retention_s, retention_s, math.ceil(lease_s))
    return OrphanAge((now or utcnow()) - timedelta(seconds=seconds), timedelta(seconds=seconds))


def abort_expired_loads(catalog: Catalog, warehouse: pathlib.Path, now: datetime | None = None) -> dict:
    """Aborts every PREPARE transaction whose lease (or timeout) ran out; the sweep deletes its
    files once the retention period has passed."""
    Warehouse(warehouse, catalog).check_owner()
    paths = catalog.abort_expired_transactions(now=now)
    return {"expired_transaction_files": len(paths)}


def refuse_if_behind(catalog: Catalog, warehouse: pathlib.Path) -> None:
    """Before GC writes to the warehouse (a resumed job's conversion, a compaction), what the sweep
    checks before it deletes: a catalog behind its warehouse (a restore, a copy) is refused in one
    line (CatalogBehindWarehouse). Its compaction would read files the newer catalog's GC deleted,
    and whatever it wrote would be files of transactions the newer catalog never committed, which
    would hold that catalog's GC back in turn. One listing of the warehouse, only when there is
    such work to do."""
    store = Warehouse(warehouse, catalog)
    store.check_owner()
    store.check_current(store.evidence(store.scan()))


def orphaned_jobs(catalog: Catalog, now: datetime | None = None) -> list[dict]:
    """Every orphaned alter job: what a run that takes it over needs (the same ALTER statement)."""
    return [
        {
            "job_id": job.id,
            "table": job.table_name,
            "statement": job.statement,
            "state": job.state,
            "no_runner_since": last_seen(job).isoformat(sep=" ", timespec="seconds"),
        }
        for job in JobLeases(catalog).orphaned(now)
    ]


def resume_orphaned_jobs(
    catalog: Catalog, warehouse: pathlib.Path, spark_factory: Callable[[], object], lease_s: float = DEFAULT_LEASE_S
) -> dict:
    """Takes over every orphaned job and drives it to its end here, under a lease of `lease_s`. A job another runner took
    first, whose validation fails (it is cancelled, Msg says why) or whose conversion fails is
    reported, not raised: the other steps still run."""
    from alterflow.workflow.job_control import take_over

    resumed = []
    orphans = orphaned_jobs(catalog)
    if orphans:
        refuse_if_behind(catalog, warehouse)
    for orphan in orphans:
        try:
            job = take_over(catalog, warehouse, orphan["job_id"], spark_factory, lease_s)
            outcome = job.state
        except Exception as exc:  # noqa: BLE001 - one job's failure is its own line, GC goes on
            text = str(exc).strip().splitlines()
            outcome = f"not resumed: {text[0] if text else type(exc).__name__}"
        resumed.append({**orphan, "outcome": outcome})
    return {"jobs": resumed}


def drop_origin_indexes(
    catalog: Catalog, warehouse: pathlib.Path, retention_s: int = DEFAULT_RETENTION_S, now: datetime | None = None
) -> dict:
    cutoff = _cutoff(retention_s, now)
    Warehouse(warehouse, catalog).check_owner()  # before the catalog changes
    gc = GarbageCollection(catalog)
    dropped, files = [], 0
    for index_id in gc.expired_indexes(cutoff):
        files += len(gc.drop_index(index_id, cutoff))  # dropped as of the retirement: delete_files takes them
        dropped.append(index_id)
    return {"dropped_indexes": dropped, "index_files_dropped": files}


def delete_files(
    catalog: Catalog,
    warehouse: pathlib.Path,
    retention_s: int = DEFAULT_RETENTION_S,
    now: datetime | None = None,
    orphan_retention_s: int = DEFAULT_ORPHAN_RETENTION_S,
    lease_s: float = DEFAULT_LEASE_S,
) -> dict:
    """Deletes what the catalog proves nobody reads: files that left their table at least
    `retention_s` ago, files no row names older than the orphan retention, staging folders of
    finished work (alterflow.gc.files). Nothing when the catalog is behind its warehouse."""
    cutoff = _cutoff(retention_s, now)
    orphans = orphan_age(retention_s, orphan_retention_s, lease_s, now)
    swept = sweep(GarbageCollection(catalog), Warehouse(warehouse, catalog), cutoff, orphans)
    return {
        "files_deleted": swept.dead_files,
        "orphan_files": swept.orphan_files,
        "staging_dirs_deleted": swept.staging_dirs,
        "uploads_aborted": swept.aborted_uploads,
        "files_kept_for_retention": swept.waiting_files,
        "orphans_waiting": [_waiting(w) for w in swept.waiting_orphans],
        "skipped": [{"path": k.path, "why": k.why} for k in swept.skipped],
    }


def _waiting(orphan) -> dict:
    return {
        "path": orphan.path,
        "modified": orphan.modified.isoformat(sep=" ", timespec="seconds"),
        "deletable_from": orphan.due.isoformat(sep=" ", timespec="seconds"),
    }


def dry_run(
    catalog: Catalog,
    warehouse: pathlib.Path,
    retention_s: int = DEFAULT_RETENTION_S,
    now: datetime | None = None,
    orphan_retention_s: int = DEFAULT_ORPHAN_RETENTION_S,
    lease_s: float = DEFAULT_LEASE_S,
) -> list[dict]:
    """Every file and folder a GC run now would delete, with why; then each file no row names
    that waits for the orphan retention (`"wait": True`, with its age and when it may go), and
    each link or special file GC leaves alone (`"skip": True`). Changes nothing (not the
    catalog, not the warehouse). Files of indexes past their retention are listed as the run
    would drop them; loads a run would abort first are not (their files wait the retention)."""
    cutoff = _cutoff(retention_s, now)
    orphans = orphan_age(retention_s, orphan_retention_s, lease_s, now)
    store = Warehouse(warehouse, catalog)
    gc = GarbageCollection(catalog)
    swept: Sweep = sweep(gc, store, cutoff, orphans, dry_run=True)
    listed = [{"path": d.path, "why": d.why} for d in swept.listed]
    for index_id in gc.expired_indexes(cutoff):
        for path in gc.index_live_paths(index_id):
            listed.append(
                {"path": path, "why": f"index {index_id} retired more than {retention_s} s ago (the origin of a swap or a dropped table)"}
            )
    moment = now or utcnow()
    waiting = [
        {
            "path": w.path,
            "why": f"no catalog row names it; {_age(moment - w.modified)} old, deletable from {w.due:%Y-%m-%d %H:%M:%S} "
            f"(orphan retention {int(orphans.retention.total_seconds())} s)",
            "wait": True,
        }
        for w in swept.waiting_orphans
    ]
    skipped = [{"path": k.path, "why": k.why, "skip": True} for k in swept.skipped]
    return sorted(listed, key=lambda d: d["path"]) + sorted(waiting, key=lambda d: d["path"]) + skipped


def _age(age: timedelta) -> str:
    seconds = max(0, int(age.total_seconds()))
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds // size} {unit}"
    return f"{seconds} s"


def compact(catalog: Catalog, warehouse: pathlib.Path, spark_factory: Callable[[], object], lease_s: float = DEFAULT_LEASE_S) -> dict:
    gc = GarbageCollection(catalog)
    skipped = [
        {"table": b.table_name, "table_id": b.table_id, "reason": f"alter job {b.job_id} is {b.job_state}"} for b in gc.busy_tables()
    ]
    targets = gc.compaction_targets()
    if targets:
        refuse_if_behind(catalog, warehouse)
    compacted, replaced, rows, conflicts = [], 0, 0, []
    spark = spark_factory() if targets else None
    for target in targets:
        try:
            done = compact_tablet(spark, catalog, warehouse, target, lease_s)
        except (
            CatalogError,
            LinkInWarehouse,
        ) as exc:  # a drop, a swap, a job, a timeout or another compaction got there first; a linked tablet folder
            conflicts.append({"table": target.table_name, "tablet_id": target.tablet_id, "reason": str(exc)})
            continue
        if done is None:
            continue
        compacted.append(
            {
                "table": target.table_name,
                "tablet_id": target.tablet_id,
                "txn_id": done.txn_id,
                "from_versions": list(target.old_versions),
                "to_version": done.version,
                "files_in": len(done.replaced),
                "rows_in": done.rows_in,
                "rows_out": done.rows_out,
            }
        )
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


def collect_versions(catalog: Catalog, retention_s: int = DEFAULT_RETENTION_S, now: datetime | None = None) -> dict:
    """Versions superseded at least `retention_s` ago are eligible (a load that read a version just
    before a newer one committed may still write under it for a while)."""
    cutoff = _cutoff(retention_s, now)
    deleted = GarbageCollection(catalog).collect_versions(cutoff)
    return {
        "versions_deleted": sum(len(d.versions) for d in deleted),
        "tables": [{"table": d.table_name, "table_id": d.table_id, "versions": list(d.versions)} for d in deleted],
    }
