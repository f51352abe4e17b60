"""Deleting files the catalog proves unreferenced; run after the catalog work, never before.

A file is deleted only when
- its catalog row is DELETED or REPLACED (and no LIVE row names the same path): then the row goes too;
- it lies in a tablet folder (`t*/i*/b*/`) and no catalog row names it at all: every writer records
  a file's row before the file appears (a load registers before it writes, a conversion or a
  compaction registers before it moves its output in), so the folder is listed first and the rows
  are looked up after; a file seen without a row is a leftover of a crash or of an aborted write;
- it is a staging folder of a job that is over: a conversion's `_staging` under an index that is no
  longer a SHADOW index, a compaction's `_compact/x<txn>` or a Spark load's `_load/l<txn>` whose
  transaction is no longer PREPARE.
Empty folders are removed only under DROPPED indexes (nothing writes there any more).
Anything else in the warehouse is left alone.
"""

from __future__ import annotations

import pathlib
import shutil
from dataclasses import dataclass, field

from alterflow.catalog.garbage import GarbageCollection
from alterflow.catalog.states import IndexState, TransactionState
from alterflow.store.layout import (
    COMPACTION_DIR,
    COMPACTION_STAGING,
    CONVERSION_STAGING,
    DATA_FILE,
    INDEX_DIR,
    LOAD_DIR,
    LOAD_STAGING,
    TABLE_DIR,
    TABLET_DIR,
    absolute,
)


@dataclass
class Sweep:
    """What `sweep` deleted."""

    dead_files: int = 0  # files of DELETED / REPLACED rows (rows removed as well)
    orphan_files: list[str] = field(default_factory=list)  # files without any catalog row
    staging_dirs: list[str] = field(default_factory=list)


def delete_paths(warehouse: pathlib.Path, paths: list[str]) -> int:
    """Delete files by their catalog paths (and a temporary a write may have left). Returns how
    many existed."""
    deleted = 0
    for relative in paths:
        path = absolute(warehouse, relative)
        if path.exists():
            deleted += 1
        path.unlink(missing_ok=True)
        path.with_name(path.name + ".tmp").unlink(missing_ok=True)
    return deleted


def _remove_empty_dirs(top: pathlib.Path) -> None:
    if not top.is_dir():
        return
    for folder in sorted((p for p in top.rglob("*") if p.is_dir()), key=lambda p: len(p.parts), reverse=True):
        try:
            folder.rmdir()
        except OSError:
            pass  # not empty: something is still there, keep it
    try:
        top.rmdir()
    except OSError:
        pass


def _index_dirs(warehouse: pathlib.Path) -> list[tuple[str, int, pathlib.Path]]:
    """(relative folder, index id, path) of every `t<table>/i<index>` folder."""
    found = []
    if not warehouse.is_dir():
        return found
    for table in sorted(warehouse.iterdir()):
        if not (table.is_dir() and TABLE_DIR.fullmatch(table.name)):
            continue
        for index in sorted(table.iterdir()):
            match = INDEX_DIR.fullmatch(index.name)
            if index.is_dir() and match:
                found.append((f"{table.name}/{index.name}", int(match.group(1)), index))
    return found


def sweep(gc: GarbageCollection, warehouse: pathlib.Path) -> Sweep:
    result = Sweep()
    warehouse = warehouse.resolve()

    # 1. Files of dead rows; then the rows themselves (a crash between leaves rows whose files
    #    are gone, which the next run forgets).
    while True:
        dead = gc.dead_files()
        if not dead:
            break
        live = gc.live_paths(f.path for f in dead)
        result.dead_files += delete_paths(warehouse, [f.path for f in dead if f.path not in live])
        if gc.forget_files(f.id for f in dead) == 0:
            break

    # 2. Files in tablet folders that no row names. List the folders first, ask the catalog after.
    indexes = _index_dirs(warehouse)
    candidates: dict[str, pathlib.Path] = {}
    for relative, _index_id, index in indexes:
        for tablet in sorted(index.iterdir()):
            if not (tablet.is_dir() and TABLET_DIR.fullmatch(tablet.name)):
                continue
            for data_file in sorted(tablet.iterdir()):
                if data_file.is_file() and DATA_FILE.fullmatch(data_file.name):
                    candidates[f"{relative}/{tablet.name}/{data_file.name}"] = data_file
    if candidates:
        names = {path: path.removesuffix(".tmp") for path in candidates}
        known = gc.known_paths(set(names.values()))
        for path, data_file in candidates.items():
            if names[path] not in known:
                data_file.unlink(missing_ok=True)
                result.orphan_files.append(path)

    # 3. Staging folders of jobs that are over.
    states = gc.index_states(index_id for _relative, index_id, _path in indexes)
    staged_by_txn: dict[int, tuple[str, pathlib.Path]] = {}
    for relative, index_id, index in indexes:
        staging = index / CONVERSION_STAGING
        if staging.is_dir() and states.get(index_id) != IndexState.SHADOW:
            shutil.rmtree(staging, ignore_errors=True)
            result.staging_dirs.append(f"{relative}/{CONVERSION_STAGING}")
        for folder, pattern in ((COMPACTION_STAGING, COMPACTION_DIR), (LOAD_STAGING, LOAD_DIR)):
            if not (index / folder).is_dir():
                continue
            for attempt in sorted((index / folder).iterdir()):
                match = pattern.fullmatch(attempt.name)
                if attempt.is_dir() and match:
                    staged_by_txn[int(match.group(1))] = (f"{relative}/{folder}/{attempt.name}", attempt)
    if staged_by_txn:
        txn_states = gc.transaction_states(staged_by_txn)
        for txn_id, (relative, attempt) in sorted(staged_by_txn.items()):
            if txn_states.get(txn_id) != TransactionState.PREPARE:
                shutil.rmtree(attempt, ignore_errors=True)
                result.staging_dirs.append(relative)

    # 4. Empty folders of dropped indexes.
    for _relative, index_id, index in indexes:
        if states.get(index_id) == IndexState.DROPPED:
            _remove_empty_dirs(index)
    return result
