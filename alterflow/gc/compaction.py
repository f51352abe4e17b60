"""Compaction of one tablet (docs/gc.md): its live files, some written under old versions, rewritten by
Spark into ONE file under the table's current version.

1. `write_compacted`: a PREPARE transaction of its own; Spark reads the tablet's live committed
   files with the evolved read (columns by id, casts and defaults applied, dropped columns gone,
   primary keys merged: the latest commit wins) keeping each row's hidden `af$txn`, sorts by the
   sort key and writes one file into `_compact/x<txn>`; the file is registered (still invisible)
   and moved into the tablet's folder.
2. `commit_compacted`: the new file flushed (fsync), then ONE catalog transaction makes it visible
   and its inputs REPLACED (refused if the table, its index or an input changed, or an alter job
   started meanwhile).
The inputs stay on disk for the retention period (deferred deletes): a read that planned before
the commit still finds them. The sweep deletes them after (alterflow.gc.file_sweep).
On a warehouse in object storage the one Spark task writes the file through pyarrow in its Python
worker (alterflow.rewrite.spark_object_writer) under the staging prefix, and the move is the
store's server-side copy.
A crash after 1 leaves a PREPARE transaction (aborted at its timeout; its file and staging folder
are then removed by the sweep) and the tablet still old: the next run compacts it again. Rows keep the transaction that
first wrote them, so merge-on-read still ranks them against loads committing at the same time, and
those loads' files, not among the inputs, stay live.
"""

from __future__ import annotations

import logging
import pathlib
from dataclasses import dataclass

import pyarrow.parquet as pq

from alterflow.catalog.catalog import Catalog, DataFile, NewFile, TableSnapshot
from alterflow.catalog.garbage import CompactionTarget, GarbageCollection
from alterflow.held_leases import TransactionLease, new_holder
from alterflow.object_store import ObjectStoreLocation
from alterflow.read.evolved_read import read_snapshot
from alterflow.rewrite.tablet_conversion import with_field_ids
from alterflow.settings import DEFAULT_LEASE_S
from alterflow.store.layout import absolute, compaction_staging_path, data_file_path
from alterflow.store.warehouse_kinds import open_warehouse

log = logging.getLogger(__name__)
COMPACTION_TIMEOUT_S = 3600  # a live but slow compaction's transaction is aborted after this long
# A crashed one is aborted once its lease expires (ALTERFLOW_LEASE_S): the compaction renews it.


@dataclass(frozen=True)
class Compacted:
    """A compaction written and registered, not yet committed."""

    target: CompactionTarget
    txn_id: int
    version: int  # the version the new file is written under
    path: str | None  # the new file (None when the merged tablet has no rows)
    rows_in: int  # rows of the input files
    rows_out: int
    replaced: tuple[DataFile, ...]
    staging: str  # relative to the warehouse
    lease: TransactionLease  # renewed until the commit (or the abort)


def _abort(catalog: Catalog, txn_id: int, reason: str) -> None:
    """The compaction's transaction aborted; its file is GC's to delete after the retention."""
    try:
        catalog.abort_transaction(txn_id, reason)
    except Exception:  # the original error matters more; the timeout and the sweep clean up
        log.exception("could not abort compaction transaction %s", txn_id)


def write_compacted(
    spark, catalog: Catalog, warehouse: pathlib.Path, target: CompactionTarget, lease_s: float = DEFAULT_LEASE_S
) -> Compacted | None:
    """Step 1, in a transaction under a lease of `lease_s`. None when the tablet no longer needs
    compaction (or the table is gone)."""
    snapshot = catalog.snapshot_by_id(target.table_id)
    if snapshot.table.current_index_id != target.index_id:
        return None
    files = tuple(f for f in snapshot.files if f.tablet_id == target.tablet_id)
    current = snapshot.current
    if not any(f.schema_version != current.version for f in files):
        return None
    keyed = bool(current.primary_key)
    store = open_warehouse(warehouse, catalog)
    store.check_owner()  # before anything is written
    txn_id = catalog.begin_transaction(
        target.table_id,
        f"compact tablet {target.tablet_id} to version {current.version}",
        COMPACTION_TIMEOUT_S,
        lease_s=lease_s,
        holder=new_holder(),
    )
    lease = TransactionLease(catalog, txn_id, lease_s).start()
    staging = compaction_staging_path(target.table_id, target.index_id, txn_id)
    try:
        tablet = TableSnapshot(snapshot.table, current, files, snapshot.versions, snapshot.commit_seqs)
        frame = read_snapshot(spark, warehouse, tablet, current, keep_txn=keyed)
        frame = frame.coalesce(1)
        if current.sort_key:
            frame = frame.sortWithinPartitions(*[f"`{name}`" for name in current.names(current.sort_key)])
        counts = [(p, n) for p, n in _written(with_field_ids(frame, current), warehouse, staging, current) if n > 0]
        if len(counts) > 1:
            raise RuntimeError(f"compaction of tablet {target.tablet_id} wrote {len(counts)} files instead of one")
        path, rows_out = None, 0
        if counts:
            source, rows_out = counts[0]
            path = data_file_path(target.table_id, target.index_id, target.tablet_id, txn_id)
            catalog.register_files(txn_id, [NewFile(target.tablet_id, current.version, path, rows_out, 0)])
            store.move(store.path(source) if isinstance(source, str) else source, path)
        return Compacted(target, txn_id, current.version, path, sum(f.row_count for f in files), rows_out, files, staging, lease)
    except BaseException as exc:
        lease.stop()
        _abort(catalog, txn_id, f"compaction failed: {exc}")
        store.remove_scratch(staging)
        raise


def _written(frame, warehouse, staging: str, current) -> list[tuple[pathlib.Path | str, int]]:
    """The tablet's rows written into `staging` by Spark: (file, rows) of each file, a path on a
    disk (Spark's own writer), a path relative to the warehouse in object storage."""
    if isinstance(warehouse, ObjectStoreLocation):
        from alterflow.rewrite.spark_object_writer import file_schema, write_frame

        written = write_frame(frame, warehouse, staging, file_schema(current, frame.columns), roll_bytes=None)  # one file
        return [(path, rows) for path, _bucket, rows in written]
    folder = absolute(warehouse, staging)
    frame.write.mode("overwrite").parquet(str(folder))
    return [(p, pq.ParquetFile(p).metadata.num_rows) for p in sorted(folder.glob("*.parquet"))]


def commit_compacted(catalog: Catalog, warehouse: pathlib.Path, compacted: Compacted) -> None:
    """Step 2: the new file flushed, then visible and its inputs REPLACED, in one catalog
    transaction. On refusal the compaction is aborted (its own file goes with GC); the inputs stay
    live."""
    gc = GarbageCollection(catalog)
    store = open_warehouse(warehouse, catalog)
    target = compacted.target
    sizes = {}
    if compacted.path is not None:
        sizes[compacted.path] = store.size(compacted.path)
    try:
        store.sync_transaction(compacted.txn_id)  # durable before visible
        gc.commit_compaction(compacted.txn_id, sizes, target.table_id, target.index_id, [f.id for f in compacted.replaced])
    except BaseException as exc:
        _abort(catalog, compacted.txn_id, f"compaction refused: {exc}")
        raise
    finally:
        compacted.lease.stop()
        store.remove_scratch(compacted.staging)


def compact_tablet(
    spark, catalog: Catalog, warehouse: pathlib.Path, target: CompactionTarget, lease_s: float = DEFAULT_LEASE_S
) -> Compacted | None:
    compacted = write_compacted(spark, catalog, warehouse, target, lease_s)
    if compacted is None:
        return None
    commit_compacted(catalog, warehouse, compacted)
    return compacted
