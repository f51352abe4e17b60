"""The garbage-collection steps (docs/gc.md). Idempotent, catalog first and files after, so a run
killed anywhere is finished by the next one. Each returns a frozen dataclass of what it did, whose
`to_json()` is what the `alterflow_gc` DAG's task passes on through XCom. (`dry_run`, which is no
step, lists for `alterflow gc --dry-run` what a run would delete, as dicts.)

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

import dataclasses
import math
import pathlib
from collections.abc import Callable
from datetime import datetime, timedelta

from alterflow.catalog.catalog import Catalog, utcnow
from alterflow.catalog.catalog_errors import CatalogError
from alterflow.catalog.garbage import CollectedVersions, GarbageCollection
from alterflow.catalog.job_leases import JobLeases, last_seen
from alterflow.gc.compaction import compact_tablet
from alterflow.gc.file_sweep import OrphanAge, Sweep, WaitingOrphan, sweep
from alterflow.settings import DEFAULT_LEASE_S
from alterflow.store.layout import LinkInWarehouse
from alterflow.store.warehouse import Skipped
from alterflow.store.warehouse_kinds import open_warehouse

GC_STEPS = ("abort_expired_loads", "resume_orphaned_jobs", "drop_origin_indexes", "compact", "collect_versions", "delete_files")
DEFAULT_RETENTION_S = 3600
DEFAULT_ORPHAN_RETENTION_S = 3 * 24 * 3600  # Iceberg's remove_orphan_files default: files no row names wait this long


def _moment(at: datetime) -> str:
    return at.isoformat(sep=" ", timespec="seconds")


@dataclasses.dataclass(frozen=True)
class ExpiredLoads:
    """`abort_expired_loads`: the files of the transactions it aborted (deleted after the retention)."""

    expired_transaction_files: int

    def to_json(self) -> dict:
        return {"expired_transaction_files": self.expired_transaction_files}


@dataclasses.dataclass(frozen=True)
class OrphanedJob:
    """An alter job whose runner is gone: what a run that takes it over needs (its ALTER statement)."""

    job_id: int
    table: str
    statement: str
    state: str
    no_runner_since: datetime
    last_driver: str | None = None  # the lease group of its last runner (`held_leases`): an Airflow run, a process

    def to_json(self) -> dict:
        return {
            "job_id": self.job_id,
            "table": self.table,
            "statement": self.statement,
            "state": self.state,
            "no_runner_since": _moment(self.no_runner_since),
            "last_driver": self.last_driver,
        }


@dataclasses.dataclass(frozen=True)
class ResumedJob:
    """An orphaned job `resume_orphaned_jobs` drove on, and how that ended: the job's state, or
    `not resumed: ...` with the reason."""

    job: OrphanedJob
    outcome: str

    def to_json(self) -> dict:
        return {**self.job.to_json(), "outcome": self.outcome}


@dataclasses.dataclass(frozen=True)
class ResumedJobs:
    """`resume_orphaned_jobs`: each orphaned job it found."""

    jobs: tuple[ResumedJob, ...]

    def to_json(self) -> dict:
        return {"jobs": [j.to_json() for j in self.jobs]}


@dataclasses.dataclass(frozen=True)
class DroppedIndexes:
    """`drop_origin_indexes`: the RETIRED indexes it dropped, and how many files they held (for `delete_files`)."""

    dropped_indexes: tuple[int, ...]
    index_files_dropped: int

    def to_json(self) -> dict:
        return {"dropped_indexes": list(self.dropped_indexes), "index_files_dropped": self.index_files_dropped}


@dataclasses.dataclass(frozen=True)
class DeletedFiles:
    """`delete_files`: the files that left their tables and were deleted, the unreferenced files,
    staging folders and uploads deleted, what waits for a retention, and the paths left alone."""

    files_deleted: int
    orphan_files: tuple[str, ...]
    staging_dirs_deleted: tuple[str, ...]
    uploads_aborted: tuple[str, ...]
    files_kept_for_retention: int
    orphans_waiting: tuple[WaitingOrphan, ...]
    skipped: tuple[Skipped, ...]

    def to_json(self) -> dict:
        return {
            "files_deleted": self.files_deleted,
            "orphan_files": list(self.orphan_files),
            "staging_dirs_deleted": list(self.staging_dirs_deleted),
            "uploads_aborted": list(self.uploads_aborted),
            "files_kept_for_retention": self.files_kept_for_retention,
            "orphans_waiting": [_waiting(w) for w in self.orphans_waiting],
            "skipped": [{"path": k.path, "why": k.why} for k in self.skipped],
        }


@dataclasses.dataclass(frozen=True)
class CompactedTablet:
    """A tablet `compact` rewrote into one file under the table's current version."""

    table: str
    tablet_id: int
    txn_id: int
    from_versions: tuple[int, ...]
    to_version: int
    files_in: int
    rows_in: int
    rows_out: int

    def to_json(self) -> dict:
        return {**dataclasses.asdict(self), "from_versions": list(self.from_versions)}


@dataclasses.dataclass(frozen=True)
class SkippedTable:
    """A table `compact` left alone, and why (its unfinished alter job)."""

    table: str
    table_id: int
    reason: str

    def to_json(self) -> dict:
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class CompactionConflict:
    """A tablet `compact` left for the next run: something changed it meanwhile (`reason`)."""

    table: str
    tablet_id: int
    reason: str

    def to_json(self) -> dict:
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class Compaction:
    """`compact`: the tablets it compacted, with the files they replaced and the rows written, the
    tables it skipped and the tablets it left for the next run."""

    tablets_compacted: int
    files_replaced: int
    rows_written: int
    tablets: tuple[CompactedTablet, ...]
    skipped_tables: tuple[SkippedTable, ...]
    conflicts: tuple[CompactionConflict, ...]

    def to_json(self) -> dict:
        return {
            "tablets_compacted": self.tablets_compacted,
            "files_replaced": self.files_replaced,
            "rows_written": self.rows_written,
            "tablets": [t.to_json() for t in self.tablets],
            "skipped_tables": [t.to_json() for t in self.skipped_tables],
            "conflicts": [c.to_json() for c in self.conflicts],
        }


@dataclasses.dataclass(frozen=True)
class VersionsCollected:
    """`collect_versions`: the schema versions it deleted, in all and per table."""

    versions_deleted: int
    tables: tuple[CollectedVersions, ...]

    def to_json(self) -> dict:
        return {
            "versions_deleted": self.versions_deleted,
            "tables": [{"table": d.table_name, "table_id": d.table_id, "versions": list(d.versions)} for d in self.tables],
        }


GcStepResult = ExpiredLoads | ResumedJobs | DroppedIndexes | Compaction | VersionsCollected | DeletedFiles


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


def abort_expired_loads(catalog: Catalog, warehouse: pathlib.Path, now: datetime | None = None) -> ExpiredLoads:
    """Aborts every PREPARE transaction whose lease (or timeout) ran out; the sweep deletes its
    files once the retention period has passed."""
    open_warehouse(warehouse, catalog).check_owner()
    paths = catalog.abort_expired_transactions(now=now)
    return ExpiredLoads(len(paths))


def refuse_if_behind(catalog: Catalog, warehouse: pathlib.Path) -> None:
    """Before GC writes to the warehouse (a resumed job's conversion, a compaction), what the sweep
    checks before it deletes: a catalog behind its warehouse (a restore, a copy) is refused in one
    line (CatalogBehindWarehouse). Its compaction would read files the newer catalog's GC deleted,
    and whatever it wrote would be files of transactions the newer catalog never committed, which
    would hold that catalog's GC back in turn. One listing of the warehouse, only when there is
    such work to do."""
    store = open_warehouse(warehouse, catalog)
    store.check_owner()
    store.check_current(store.evidence(store.scan()))


def orphaned_jobs(catalog: Catalog, now: datetime | None = None) -> list[OrphanedJob]:
    """Every orphaned alter job: what a run that takes it over needs (the same ALTER statement)."""
    return [
        OrphanedJob(job.id, job.table_name, job.statement, job.state, last_seen(job), job.lease_group)
        for job in JobLeases(catalog).orphaned(now)
    ]


def left_to_their_runs(orphans: list[OrphanedJob], run_is_alive: Callable[[str], bool] | None) -> list[OrphanedJob]:
    """Those of `orphans` whose last driver is an `alterflow_schema_change` run that Airflow still
    queues or runs (`run_is_alive(run_id)`): its next task is waiting for a worker slot, or a retry of
    a task whose worker died, and takes the lease back when it starts. None (nobody to ask): none."""
    from alterflow.held_leases import airflow_run_of

    if run_is_alive is None:
        return []
    return [o for o in orphans if (run := airflow_run_of(o.last_driver)) is not None and run_is_alive(run)]


def resume_orphaned_jobs(
    catalog: Catalog,
    warehouse: pathlib.Path,
    spark_factory: Callable[[], object],
    lease_s: float = DEFAULT_LEASE_S,
    run_is_alive: Callable[[str], bool] | None = None,
) -> ResumedJobs:
    """Takes over every orphaned job and drives it to its end here, under a lease of `lease_s`. A job another runner took
    first, whose validation fails (it is cancelled, Msg says why) or whose conversion fails is
    reported, not raised: the other steps still run. A job an Airflow run still drives
    (`left_to_their_runs`, asked through `run_is_alive`) is reported and left to it."""
    from alterflow.held_leases import airflow_run_of
    from alterflow.workflow.job_control import take_over

    resumed = []
    orphans = orphaned_jobs(catalog)
    if orphans:
        refuse_if_behind(catalog, warehouse)
    left = left_to_their_runs(orphans, run_is_alive)
    for orphan in orphans:
        if orphan in left:
            resumed.append(
                ResumedJob(orphan, f"left to its Airflow run {airflow_run_of(orphan.last_driver)}, which Airflow still queues or runs")
            )
            continue
        try:
            job = take_over(catalog, warehouse, orphan.job_id, spark_factory, lease_s)
            outcome = job.state
        except Exception as exc:  # noqa: BLE001 - one job's failure is its own line, GC goes on
            text = str(exc).strip().splitlines()
            outcome = f"not resumed: {text[0] if text else type(exc).__name__}"
        resumed.append(ResumedJob(orphan, outcome))
    return ResumedJobs(tuple(resumed))


def drop_origin_indexes(
    catalog: Catalog, warehouse: pathlib.Path, retention_s: int = DEFAULT_RETENTION_S, now: datetime | None = None
) -> DroppedIndexes:
    cutoff = _cutoff(retention_s, now)
    open_warehouse(warehouse, catalog).check_owner()  # before the catalog changes
    gc = GarbageCollection(catalog)
    dropped, files = [], 0
    for index_id in gc.expired_indexes(cutoff):
        files += len(gc.drop_index(index_id, cutoff))  # dropped as of the retirement: delete_files takes them
        dropped.append(index_id)
    return DroppedIndexes(tuple(dropped), files)


def delete_files(
    catalog: Catalog,
    warehouse: pathlib.Path,
    retention_s: int = DEFAULT_RETENTION_S,
    now: datetime | None = None,
    orphan_retention_s: int = DEFAULT_ORPHAN_RETENTION_S,
    lease_s: float = DEFAULT_LEASE_S,
) -> DeletedFiles:
    """Deletes what the catalog proves nobody reads: files that left their table at least
    `retention_s` ago, files no row names older than the orphan retention, staging folders of
    finished work (alterflow.gc.file_sweep). Nothing when the catalog is behind its warehouse."""
    cutoff = _cutoff(retention_s, now)
    orphans = orphan_age(retention_s, orphan_retention_s, lease_s, now)
    swept = sweep(GarbageCollection(catalog), open_warehouse(warehouse, catalog), cutoff, orphans)
    return DeletedFiles(
        files_deleted=swept.dead_files,
        orphan_files=tuple(swept.orphan_files),
        staging_dirs_deleted=tuple(swept.staging_dirs),
        uploads_aborted=tuple(swept.aborted_uploads),
        files_kept_for_retention=swept.waiting_files,
        orphans_waiting=tuple(swept.waiting_orphans),
        skipped=tuple(swept.skipped),
    )


def _waiting(orphan: WaitingOrphan) -> dict:
    return {"path": orphan.path, "modified": _moment(orphan.modified), "deletable_from": _moment(orphan.due)}


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
    store = open_warehouse(warehouse, catalog)
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


def compact(catalog: Catalog, warehouse: pathlib.Path, spark_factory: Callable[[], object], lease_s: float = DEFAULT_LEASE_S) -> Compaction:
    gc = GarbageCollection(catalog)
    skipped = tuple(SkippedTable(b.table_name, b.table_id, f"alter job {b.job_id} is {b.job_state}") for b in gc.busy_tables())
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
            conflicts.append(CompactionConflict(target.table_name, target.tablet_id, str(exc)))
            continue
        if done is None:
            continue
        compacted.append(
            CompactedTablet(
                table=target.table_name,
                tablet_id=target.tablet_id,
                txn_id=done.txn_id,
                from_versions=tuple(target.old_versions),
                to_version=done.version,
                files_in=len(done.replaced),
                rows_in=done.rows_in,
                rows_out=done.rows_out,
            )
        )
        replaced += len(done.replaced)
        rows += done.rows_out
    return Compaction(len(compacted), replaced, rows, tuple(compacted), skipped, tuple(conflicts))


def collect_versions(catalog: Catalog, retention_s: int = DEFAULT_RETENTION_S, now: datetime | None = None) -> VersionsCollected:
    """Versions superseded at least `retention_s` ago are eligible (a load that read a version just
    before a newer one committed may still write under it for a while)."""
    cutoff = _cutoff(retention_s, now)
    deleted = GarbageCollection(catalog).collect_versions(cutoff)
    return VersionsCollected(sum(len(d.versions) for d in deleted), tuple(deleted))
