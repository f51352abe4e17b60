"""Deleting files the catalog proves unreferenced; run after the catalog work, never before, and
only through the warehouse that the catalog owns (alterflow.store.warehouse).

A file is deleted only when
- its catalog row is DELETED or REPLACED since at least the retention period (deferred deletes: a
  query, INSERT ... SELECT or view read that planned before the change still finds it), and no
  LIVE row names the same path: then the row goes too;
- it lies in a tablet folder (`t*/i*/b*/`), no catalog row names it, its transaction is one this
  catalog began and never committed, and its own modification time is older than the orphan
  retention (default 3 days, never less than the retention or the lease): every writer records
  a file's row before the file appears (a load registers before it writes, a conversion or a
  compaction registers before it moves its output in), and a dead row is forgotten only after its
  file was deleted, so such a file was never visible: a leftover of a crash, or written by a load
  after it was aborted. The folders are listed first and the rows are looked up after. A file no
  row names of a transaction this catalog never began, or committed with other files, is another
  catalog's (a newer copy of this one): then nothing at all is deleted
  (`Warehouse.check_current`);
- it is a staging folder of a job that is over: a conversion's `_staging` under an index that is no
  longer a SHADOW index, a compaction's `_compact/x<txn>` or a Spark load's `_load/l<txn>` whose
  transaction is no longer PREPARE (scratch output that never became visible).
Empty folders are removed only under DROPPED indexes (nothing writes there any more).
Anything else in the warehouse is left alone, and links are never followed: a link or a special
file where a folder or a data file belongs is reported (`Sweep.skipped`), not deleted, and every
other step goes on.

`dry_run` lists what would go, and why, and changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from alterflow.catalog.garbage import GarbageCollection
from alterflow.catalog.states import IndexState, TransactionState
from alterflow.store.layout import PathWriter, path_writer
from alterflow.store.warehouse import Evidence, IndexFolder, Skipped, Warehouse, WarehouseScan


@dataclass(frozen=True)
class Doomed:
    """A file or folder GC deletes (or, in a dry run, would delete), and why."""

    path: str
    why: str


@dataclass(frozen=True)
class WaitingOrphan:
    """A file no catalog row names, younger than the orphan retention: kept until `due`."""

    path: str
    modified: datetime
    due: datetime


@dataclass
class Sweep:
    """What `sweep` deleted (or would delete, in a dry run)."""

    dead_files: int = 0  # files of DELETED / REPLACED rows past the retention (rows removed as well)
    orphan_files: list[str] = field(default_factory=list)  # files without any catalog row, older than the orphan retention
    waiting_orphans: list[WaitingOrphan] = field(default_factory=list)  # files without any catalog row, younger
    staging_dirs: list[str] = field(default_factory=list)
    aborted_uploads: list[str] = field(default_factory=list)  # uploads cut short, older than the orphan retention
    waiting_files: int = 0  # files that left their table less than the retention period ago
    first_due: datetime | None = None  # when the first of them left
    listed: list[Doomed] = field(default_factory=list)  # each deletion with its reason
    skipped: list[Skipped] = field(default_factory=list)  # links and special files: never followed, never deleted


@dataclass(frozen=True)
class OrphanAge:
    """How old a file no row names must be before GC deletes it: `retention`, so modified at or
    before `cutoff`."""

    cutoff: datetime
    retention: timedelta


def sweep(gc: GarbageCollection, store: Warehouse, cutoff: datetime, orphans: OrphanAge, dry_run: bool = False) -> Sweep:
    """Delete (or, in a dry run, list) what the catalog proves unreferenced, in this order: dead
    rows' files then the rows (left at or before `cutoff`), orphan files older than
    `orphans`, staging folders of jobs that are over, and the empty folders of dropped indexes.
    Nothing at all when the warehouse holds files this catalog never committed
    (CatalogBehindWarehouse: a restored or copied catalog)."""
    result = Sweep()
    store.check_owner(claim=not dry_run)
    scan = store.scan()  # listed before the catalog is asked: a file written after is not a candidate
    evidence = store.evidence(scan)
    store.check_current(evidence)
    result.waiting_files, result.first_due = gc.waiting_files(cutoff)
    _sweep_dead_files(gc, store, cutoff, dry_run, result)
    _sweep_orphan_files(store, evidence, orphans, dry_run, result)
    _sweep_incomplete_uploads(gc, store, orphans, dry_run, result)
    states = gc.index_states(i.index_id for i in scan.indexes)
    _sweep_staging(gc, scan, states, store, dry_run, result)
    if not dry_run:
        _remove_dropped_index_folders(store, scan.indexes, states)
        store.record_high_water(evidence.newest_txn)
    seen = {s.path for s in scan.skipped}
    result.skipped = scan.skipped + [s for s in store.skipped if s.path not in seen]
    return result


def _sweep_dead_files(gc: GarbageCollection, store: Warehouse, cutoff: datetime, dry_run: bool, result: Sweep) -> None:
    """Files of rows that left their table at or before `cutoff`, a batch at a time; then the rows
    themselves (a crash between leaves rows whose files are gone, which the next run forgets)."""
    after = 0
    while True:
        dead = gc.dead_files(cutoff, after_id=after)
        if not dead:
            break
        live = gc.live_paths(f.path for f in dead)
        gone = [f for f in dead if f.path not in live]
        result.listed += [Doomed(f.path, f"{f.why}, at {f.dropped_at:%Y-%m-%d %H:%M:%S}") for f in gone]
        if dry_run:
            result.dead_files += sum(store.exists(f.path) for f in gone)
            after = dead[-1].id
            continue
        result.dead_files += store.delete(f.path for f in gone)
        if gc.forget_files(f.id for f in dead) == 0:
            break


def _sweep_orphan_files(store: Warehouse, evidence: Evidence, orphans: OrphanAge, dry_run: bool, result: Sweep) -> None:
    """Files in tablet folders that no row names, of this catalog's own aborted or open
    transactions (`Warehouse.evidence`): deleted once older than the orphan retention, by their
    own modification time; younger ones wait (docs/gc.md, "Orphans wait")."""
    due = [f for f in evidence.orphans if f.modified <= orphans.cutoff]
    if due and not dry_run:
        store.delete(f.path for f in due)
    result.orphan_files += [f.path for f in due]
    result.listed += [Doomed(f.path, "no catalog row names it (left by a crash or an aborted write)") for f in due]
    result.waiting_orphans += [
        WaitingOrphan(f.path, f.modified, f.modified + orphans.retention) for f in evidence.orphans if f.modified > orphans.cutoff
    ]


def _sweep_incomplete_uploads(gc: GarbageCollection, store: Warehouse, orphans: OrphanAge, dry_run: bool, result: Sweep) -> None:
    """Uploads to an object store never completed, of a writer the catalog proves gone: a writer
    killed mid-upload (no object exists; its parts take space). Aborted once begun before the
    orphan retention and its writer is over: its path names a transaction of this catalog that is
    no longer PREPARE, or the staging of an index that is no longer a shadow. The store's start
    time alone is not trusted: an S3-compatible server may date every upload wrongly (moto's
    dates them all 2010-11-10), and a live load's upload must not be cut. A disk has none
    (alterflow.store.warehouse)."""
    old = [u for u in store.incomplete_uploads() if u.initiated <= orphans.cutoff]
    writers = [path_writer(u.path) for u in old]
    txn_states = gc.transaction_states(w.txn_id for w in writers if w is not None and w.txn_id is not None)
    index_states = gc.index_states(w.shadow_index_id for w in writers if w is not None and w.shadow_index_id is not None)
    due = [u for u, writer in zip(old, writers, strict=True) if _writer_is_over(writer, txn_states, index_states)]
    if due and not dry_run:
        store.abort_uploads(due)
    result.aborted_uploads += [u.path for u in due]
    result.listed += [Doomed(u.path + " (upload)", "an upload never completed (no object): its parts are aborted") for u in due]


def _writer_is_over(writer: PathWriter | None, txn_states: dict[int, str], index_states: dict[int, str]) -> bool:
    """Whether the catalog proves a path's writer over; a writer it does not know is not."""
    if writer is None:
        return False
    if writer.txn_id is not None:
        return txn_states.get(writer.txn_id, TransactionState.PREPARE) != TransactionState.PREPARE
    return index_states.get(writer.shadow_index_id, IndexState.SHADOW) != IndexState.SHADOW


def _sweep_staging(
    gc: GarbageCollection, scan: WarehouseScan, states: dict[int, str], store: Warehouse, dry_run: bool, result: Sweep
) -> None:
    """Staging folders of jobs that are over: a conversion's under an index that is no longer a
    SHADOW index, then those of transactions no longer PREPARE, in transaction order."""
    txn_states = gc.transaction_states({s.txn_id for s in scan.staging if s.txn_id is not None})
    conversions = [s for s in scan.staging if s.txn_id is None and states.get(s.index_id) != IndexState.SHADOW]
    transactions = sorted(
        (s for s in scan.staging if s.txn_id is not None and txn_states.get(s.txn_id) != TransactionState.PREPARE),
        key=lambda s: s.txn_id,
    )
    for staging in conversions + transactions:
        if staging.txn_id is None:
            why = f"conversion output of index {staging.index_id}, which is no longer a shadow"
        else:
            why = f"staging output of transaction {staging.txn_id}, which is over"
        if not dry_run:
            store.remove_scratch(staging.relative)
        result.staging_dirs.append(staging.relative)
        result.listed.append(Doomed(staging.relative + "/", why))


def _remove_dropped_index_folders(store: Warehouse, indexes: list[IndexFolder], states: dict[int, str]) -> None:
    """Empty folders of dropped indexes, and then their table's folder if nothing is left in it."""
    for index in indexes:
        if states.get(index.index_id) == IndexState.DROPPED:
            store.remove_dropped_index_folder(index)
