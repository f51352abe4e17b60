"""Deleting files the catalog proves unreferenced; run after the catalog work, never before, and
only through the warehouse that the catalog owns (alterflow.store.warehouse).

A file is deleted only when
- its catalog row is DELETED or REPLACED since at least the retention period (deferred deletes: a
  query, INSERT ... SELECT or view read that planned before the change still finds it), and no
  LIVE row names the same path: then the row goes too;
- it lies in a tablet folder (`t*/i*/b*/`) and no catalog row names it at all: every writer records
  a file's row before the file appears (a load registers before it writes, a conversion or a
  compaction registers before it moves its output in), and a dead row is forgotten only after its
  file was deleted, so such a file was never visible: a leftover of a crash, or written by a load
  after it was aborted. The folder is listed first and the rows are looked up after;
- it is a staging folder of a job that is over: a conversion's `_staging` under an index that is no
  longer a SHADOW index, a compaction's `_compact/x<txn>` or a Spark load's `_load/l<txn>` whose
  transaction is no longer PREPARE (scratch output that never became visible).
Empty folders are removed only under DROPPED indexes (nothing writes there any more).
Anything else in the warehouse is left alone.

`dry_run` lists what would go, and why, and changes nothing.
"""

from __future__ import annotations

import pathlib
from dataclasses import dataclass, field
from datetime import datetime

from alterflow.catalog.garbage import GarbageCollection
from alterflow.catalog.states import IndexState, TransactionState
from alterflow.store.layout import COMPACTION_DIR, COMPACTION_STAGING, CONVERSION_STAGING, LOAD_DIR, LOAD_STAGING
from alterflow.store.warehouse import Warehouse

_IndexFolder = tuple[str, int, pathlib.Path]  # (relative folder, index id, path): `Warehouse.index_folders`
_Scratch = tuple[str, pathlib.Path, str]  # (relative folder, its path, why it goes)


@dataclass(frozen=True)
class Doomed:
    """A file or folder GC deletes (or, in a dry run, would delete), and why."""

    path: str
    why: str


@dataclass
class Sweep:
    """What `sweep` deleted (or would delete, in a dry run)."""

    dead_files: int = 0  # files of DELETED / REPLACED rows past the retention (rows removed as well)
    orphan_files: list[str] = field(default_factory=list)  # files without any catalog row
    staging_dirs: list[str] = field(default_factory=list)
    waiting_files: int = 0  # files that left their table less than the retention period ago
    first_due: datetime | None = None  # when the first of them left
    listed: list[Doomed] = field(default_factory=list)  # each deletion with its reason


def sweep(gc: GarbageCollection, store: Warehouse, cutoff: datetime, dry_run: bool = False) -> Sweep:
    """Delete (or, in a dry run, list) what the catalog proves unreferenced, in this order: dead
    rows' files then the rows, orphan files, staging folders of jobs that are over, and the empty
    folders of dropped indexes."""
    result = Sweep()
    store.check_owner(claim=not dry_run)
    result.waiting_files, result.first_due = gc.waiting_files(cutoff)
    _sweep_dead_files(gc, store, cutoff, dry_run, result)
    _sweep_orphan_files(gc, store, dry_run, result)
    indexes = store.index_folders()
    states = gc.index_states(index_id for _relative, index_id, _path in indexes)
    _sweep_staging(gc, indexes, states, store, dry_run, result)
    if not dry_run:
        _remove_dropped_index_folders(store, indexes, states)
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
            result.dead_files += sum(store.path(f.path).exists() for f in gone)
            after = dead[-1].id
            continue
        result.dead_files += store.delete(f.path for f in gone)
        if gc.forget_files(f.id for f in dead) == 0:
            break


def _sweep_orphan_files(gc: GarbageCollection, store: Warehouse, dry_run: bool, result: Sweep) -> None:
    """Files in tablet folders that no row names. The folders are listed first, the catalog asked after."""
    candidates = dict(store.data_files())
    if not candidates:
        return
    names = {path: path.removesuffix(".tmp") for path in candidates}
    known = gc.known_paths(set(names.values()))
    orphans = [path for path in candidates if names[path] not in known]
    if not dry_run:
        store.delete(orphans)
    result.orphan_files += orphans
    result.listed += [Doomed(path, "no catalog row names it (left by a crash or an aborted write)") for path in orphans]


def _sweep_staging(
    gc: GarbageCollection, indexes: list[_IndexFolder], states: dict[int, str], store: Warehouse, dry_run: bool, result: Sweep
) -> None:
    """Staging folders of jobs that are over: conversions' first, then those of transactions."""
    scratch = _over_conversions(indexes, states) + _over_transactions(gc, indexes)
    for relative, folder, why in scratch:
        if not dry_run:
            store.remove_scratch(folder)
        result.staging_dirs.append(relative)
        result.listed.append(Doomed(relative + "/", why))


def _over_conversions(indexes: list[_IndexFolder], states: dict[int, str]) -> list[_Scratch]:
    """(relative path, folder, why) of each conversion's staging folder under an index that is no
    longer a SHADOW index."""
    found = []
    for relative, index_id, index in indexes:
        staging = index / CONVERSION_STAGING
        if staging.is_dir() and states.get(index_id) != IndexState.SHADOW:
            found.append(
                (f"{relative}/{CONVERSION_STAGING}", staging, f"conversion output of index {index_id}, which is no longer a shadow")
            )
    return found


def _over_transactions(gc: GarbageCollection, indexes: list[_IndexFolder]) -> list[_Scratch]:
    """(relative path, folder, why) of each compaction's or Spark load's staging folder whose
    transaction is no longer PREPARE, in transaction order."""
    staged_by_txn: dict[int, tuple[str, pathlib.Path]] = {}
    for relative, _index_id, index in indexes:
        for folder, pattern in ((COMPACTION_STAGING, COMPACTION_DIR), (LOAD_STAGING, LOAD_DIR)):
            if not (index / folder).is_dir():
                continue
            for attempt in sorted((index / folder).iterdir()):
                match = pattern.fullmatch(attempt.name)
                if attempt.is_dir() and match:
                    staged_by_txn[int(match.group(1))] = (f"{relative}/{folder}/{attempt.name}", attempt)
    if not staged_by_txn:
        return []
    txn_states = gc.transaction_states(staged_by_txn)
    return [
        (relative, attempt, f"staging output of transaction {txn_id}, which is over")
        for txn_id, (relative, attempt) in sorted(staged_by_txn.items())
        if txn_states.get(txn_id) != TransactionState.PREPARE
    ]


def _remove_dropped_index_folders(store: Warehouse, indexes: list[_IndexFolder], states: dict[int, str]) -> None:
    """Empty folders of dropped indexes, and then their table's folder if nothing is left in it."""
    for _relative, index_id, index in indexes:
        if states.get(index_id) == IndexState.DROPPED:
            store.remove_empty_folders(index)
            store.remove_empty_folders(index.parent, below=False)
