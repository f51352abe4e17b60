"""A load: one transaction that writes a stream of rows to a table's tablets.

1. begin a PREPARE transaction;
2. read the input batch by batch; each batch is converted to the table's types, split into
   tablets and buffered (during a dual write, its conversion to the job's version and the shadow's
   buffering run one batch behind on a thread of their own, the dual lane);
3. a tablet whose buffer reaches the target file size (or the largest one, when all buffers
   together reach the memory budget) is flushed: its rows are deduplicated by primary key and
   sorted, the file is recorded in the catalog (still invisible) and written by a writer thread
   while the next batch is read (during a dual write whose job keeps the tablets, key and sort
   order, the same thread then makes the shadow's file of those rows from the origin file's
   encoded column chunks, encoding only the converted columns: `alterflow.store.column_splice`);
4. at the end every buffer is flushed and the transaction commits: every file becomes visible at
   once.
Any failure aborts the transaction and deletes its files, so no row becomes visible and no file is
orphaned. While the transaction is open the load renews its lease on it (docs/heavyweight.md, `alterflow.held_leases`). A
crash between 2 and 4 leaves a PREPARE transaction whose files the catalog knows; once its lease
expires, whoever looks first (a job waiting on its boundary, GC, the next load) aborts it and
deletes them. A load that lost its lease (a long pause) fails at commit and leaves nothing visible.

Within one load the last row of a primary key wins. A tablet's rows may span several files of the
load (one per flush): each file holds a key at most once, and a later file of the same transaction
and tablet has a later sequence in its name (`layout.data_file_path`), which merge-on-read ranks.
"""

from __future__ import annotations

import dataclasses
import logging
import pathlib
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import pyarrow as pa

from alterflow.catalog.catalog import Catalog, NewFile, TableInfo
from alterflow.catalog.catalog_errors import CatalogUnavailable
from alterflow.catalog.heavy_jobs import DualWriteTarget, HeavyJobs
from alterflow.catalog.schema import SchemaVersion
from alterflow.catalog.states import OnCastError
from alterflow.errors import UserError, first_line, shown
from alterflow.held_leases import TransactionLease, new_holder
from alterflow.load.bad_rows import BadRows, aborted_for_room
from alterflow.load.tablet_buffers import TabletBuffers, TabletKey
from alterflow.settings import DEFAULT_LEASE_S, LOAD_BUFFER_MB, TARGET_FILE_MB
from alterflow.store.column_splice import shadow_from_origin, write_with_shadow
from alterflow.store.layout import data_file_path
from alterflow.store.quarantine import QuarantineTarget, kept_row_numbers, register_and_write, split_quarantined
from alterflow.store.quarantine_table import quarantine_target
from alterflow.store.tablets import TXN_COLUMN, TabletRows, same_tablets, tablet_rows, with_txn_column, write_parquet
from alterflow.store.warehouse import Warehouse
from alterflow.store.warehouse_kinds import open_warehouse

log = logging.getLogger(__name__)

# conform(batch, first_row): the batch converted to the table's version, its rows numbered from
# first_row in errors (alterflow.load.rows.rows_from_arrow).
Conform = Callable[[pa.Table, int], pa.Table]
WRITERS = 2  # files written at once, beside the thread that reads and converts


@dataclass(frozen=True)
class LoadResult:
    txn_id: int
    rows: int
    files: int


def _value(value) -> str:
    """A value as an error shows it: text quoted, shortened and escaped; anything else as repr()."""
    return shown(value) if isinstance(value, str) else repr(value)


def _first_null(values: pa.ChunkedArray | pa.Array) -> int:
    import pyarrow.compute as pc

    return pc.index(pc.is_null(values), True).as_py()


def dual_write_rows(
    data: pa.Table,
    version: SchemaVersion,
    target: DualWriteTarget,
    table: str,
    first_row: int = 1,
    quarantine: QuarantineTarget | None = None,
) -> tuple[pa.Table, int, pa.Table | None]:
    """(the load's rows converted to the running job's new version, values set to NULL, the
    quarantine table's rows or None). A row that cannot be converted fails the whole load (rows
    numbered from `first_row`), unless the job quarantines (`quarantine`, on a table without a
    primary key): then it goes to the quarantine table instead of the shadow index."""
    from alterflow.conversion.arrow_convert import convert_arrow

    result = convert_arrow(data, version, target.version, target.on_cast_error)
    quarantined = None
    if result.failed_rows and version.primary_key:
        # No row deletes: the shadow index would keep an older row of that key, and the table show it after the swap.
        column, rows = min(result.failed_rows.items(), key=lambda item: item[1][0])
        value = data.column(version.column_by_id(target.version.column(column).id).name)[rows[0]].as_py()
        raise BadRows(
            f"INSERT INTO {table}: column {column}: value {_value(value)} (row {rows[0] + first_row}) cannot be converted to "
            f"{target.version.column(column).type.sql()} for schema change job {target.job_id}, which quarantines, and rows of a "
            "table with a primary key are not quarantined while loading (the key's older row would stay); nothing was loaded"
        )
    kept = None  # the rows left for the shadow index, when some were quarantined (for row numbers)
    if result.failed_rows:
        kept = kept_row_numbers(data.num_rows, result.failed_rows)
        if quarantine is not None:
            converted, quarantined = split_quarantined(data, result.table, version, target.version, result.failed_rows, quarantine)
        else:  # only looking for the load's first bad row: the quarantined rows are not bad ones
            converted = result.table.take(pa.array(kept, type=pa.int64()))
        result = dataclasses.replace(result, table=converted)
    if result.failures:
        first = result.failures[0]
        raise BadRows(
            f"INSERT INTO {table}: column {first.column}: value {_value(first.value)} (row {first.row + first_row}) cannot be "
            f"converted to {target.version.column(first.column).type.sql()} for schema change job {target.job_id}; "
            "nothing was loaded"
        )
    for column in target.version.columns:
        values = result.table.column(column.name)
        if not column.nullable and values.null_count:
            row = _first_null(values)
            row = int(kept[row]) if kept is not None else row
            raise BadRows(
                f"INSERT INTO {table}: column {column.name} becomes NOT NULL in schema change job {target.job_id} "
                f"but row {row + first_row} has NULL; nothing was loaded"
            )
    return result.table, sum(result.nulled.values()), quarantined


class _IndexFiles:
    """The files one load writes into one index: buffered rows flushed to Parquet files, each
    recorded in the catalog (invisible) before a writer thread writes it."""

    def __init__(self, load: _LoadWriter, index_id: int, version: SchemaVersion):
        self.load = load
        self.index_id = index_id
        self.version = version
        self.tablet_ids: dict[TabletKey, int] = {}
        self.buffers = TabletBuffers(version, load.target_bytes, self._flushed)
        self._flushed_files: list[tuple[TabletKey, int, pa.Table]] = []

    def add(self, data: pa.Table, tablets: TabletRows | None = None) -> TabletRows:
        tablets = self.buffers.add(data, tablets)
        self.write_flushed()
        return tablets

    def flush_largest(self) -> None:
        self.buffers.flush_largest()
        self.write_flushed()

    def flush_all(self) -> None:
        self.buffers.flush_all()
        self.write_flushed()

    def _flushed(self, key: TabletKey, seq: int, rows: pa.Table) -> None:
        self._flushed_files.append((key, seq, rows))

    def write_flushed(self) -> None:
        """Record the files just flushed in the catalog (one call for all of them), then hand them
        to the writer threads: with their shadow's files, when those are made from the origin's."""
        if not self._flushed_files:
            return
        flushed, self._flushed_files = self._flushed_files, []
        paths = self.record(flushed)
        with_shadow = self is self.load.origin and self.load.shadow_from_origin is not None
        shadow_paths = self.load.shadow.record(flushed) if with_shadow else [None] * len(paths)
        for path, (_key, _seq, rows), shadow_path in zip(paths, flushed, shadow_paths):
            self.load.write(path, rows, shadow_path)

    def record(self, flushed: list[tuple[TabletKey, int, pa.Table]]) -> list[str]:
        """Record files of this index holding these rows in the catalog, still invisible, and
        among the load's planned files; returns their paths."""
        missing = {key for key, _seq, _rows in flushed if key not in self.tablet_ids}
        if missing:  # once per tablet and load
            self.tablet_ids.update(self.load.catalog.ensure_tablets(self.index_id, missing))
        paths = [
            data_file_path(self.load.table.id, self.index_id, self.tablet_ids[key], self.load.txn_id, seq) for key, seq, _rows in flushed
        ]
        self.load.catalog.register_files(
            self.load.txn_id,
            [
                NewFile(self.tablet_ids[key], self.version.version, path, rows.num_rows, 0)
                for path, (key, _seq, rows) in zip(paths, flushed)
            ],
        )
        self.load.planned.extend(paths)
        return paths


class _LoadWriter:
    """Step 2 to 4 of one load's transaction: batches in, files out (see the module's docstring)."""

    def __init__(
        self,
        catalog: Catalog,
        warehouse: pathlib.Path,
        table: TableInfo,
        version: SchemaVersion,
        txn_id: int,
        planned: list[str],
        target_bytes: int,
        budget_bytes: int,
    ):
        self.catalog, self.warehouse, self.table, self.version, self.txn_id = catalog, warehouse, table, version, txn_id
        self.planned = planned
        self.target_bytes, self.budget_bytes = target_bytes, budget_bytes
        self.sizes: dict[str, int] = {}
        self._pool = ThreadPoolExecutor(WRITERS, thread_name_prefix=f"load-{txn_id}")
        self._pending: list[Future] = []
        self._slots = threading.BoundedSemaphore(WRITERS)  # files in memory being written
        self.origin = _IndexFiles(self, table.current_index_id, version)
        self.shadow: _IndexFiles | None = None
        self.shadow_tablets_alike = False  # each row in the same tablet in both indexes
        # The shadow's files are the origin's converted (same tablets, key and sort order): the
        # dual lane only checks each batch, and each origin file flushed yields its shadow file.
        self.shadow_from_origin: DualWriteTarget | None = None
        self.quarantine: QuarantineTarget | None = None  # the job quarantines rows that fail
        self.quarantined: list[pa.Table] = []
        self.nulled = 0
        # The dual write runs one batch behind, on a thread of its own (see `add`).
        self._dual_lane = ThreadPoolExecutor(1, thread_name_prefix=f"dual-{txn_id}")
        self._dual_batch: Future | None = None

    def write(self, path: str, rows: pa.Table, shadow_path: str | None = None) -> None:
        """Write a file on a writer thread; with `shadow_path`, also the shadow's file of the
        same rows, converted (`column_splice.write_with_shadow`). Values that fail are NULL
        there: the dual lane's check of each batch has counted them (on_cast_error = null) or
        fails the load (fail)."""
        self._slots.acquire()
        try:
            self._raise_failed()
        except BaseException:
            self._slots.release()
            raise

        def job() -> None:
            try:
                if shadow_path is None:
                    self.sizes[path] = write_parquet(self.warehouse, path, rows)
                else:  # the shadow's file of the same rows, from the origin's encoded columns
                    self.sizes[path], self.sizes[shadow_path] = write_with_shadow(
                        self.warehouse,
                        path,
                        shadow_path,
                        rows,
                        self.version,
                        self.shadow_from_origin.version,
                    )
            finally:
                self._slots.release()

        self._pending.append(self._pool.submit(job))

    def _raise_failed(self) -> None:
        for future in [f for f in self._pending if f.done()]:
            self._pending.remove(future)
            future.result()

    def add(self, data: pa.Table, target: DualWriteTarget | None, first_row: int) -> None:
        """Buffer one conformed batch. During a dual write its conversion to the job's version runs
        on the dual lane while this thread buffers the origin rows and conforms the next batch;
        the lane's buffers are only touched here once its batch is done (`_join_dual`)."""
        self._join_dual()
        if self.version.primary_key:
            data = with_txn_column(data, self.txn_id)
        if target is None:
            self.origin.add(data)
        else:
            if self.shadow is None:
                self.shadow = _IndexFiles(self, target.shadow_index_id, target.version)
                self.shadow_tablets_alike = same_tablets(self.version, target.version)
                if target.on_cast_error == OnCastError.QUARANTINE:  # the shadow may hold fewer rows than the origin
                    self.quarantine = quarantine_target(self.catalog, self.table.name, target.job_id, self.version)
                if shadow_from_origin(self.version, target):
                    self.shadow_from_origin = target
            tablets = tablet_rows(data, self.version)
            self._dual_batch = self._dual_lane.submit(self._dual_write, data, tablets, target, first_row)
            self.origin.add(data, tablets)
        indexes = [i for i in (self.origin, self.shadow) if i is not None]
        if sum(i.buffers.nbytes for i in indexes) > self.budget_bytes:
            self._join_dual()
            while sum(i.buffers.nbytes for i in indexes) > self.budget_bytes:
                max(indexes, key=lambda i: i.buffers.largest()).flush_largest()

    def _dual_write(self, data: pa.Table, tablets: TabletRows, target: DualWriteTarget, first_row: int) -> None:
        """On the dual lane: the batch converted and buffered for the shadow index (the split of
        the origin rows reused when rows fall alike). Its files are recorded and written by
        `_join_dual`, on the load's thread."""
        shadow, nulled, quarantined = dual_write_rows(data, self.version, target, self.table.name, first_row, self.quarantine)
        self.nulled += nulled
        if quarantined is not None:
            self.quarantined.append(quarantined)
        if self.shadow_from_origin is None:
            self.shadow.buffers.add(shadow, tablets if self.shadow_tablets_alike and quarantined is None else None)

    def _join_dual(self) -> None:
        """Wait for the dual lane's batch; raise its error, or record and write what it flushed."""
        batch, self._dual_batch = self._dual_batch, None
        if batch is not None:
            batch.result()
            self.shadow.write_flushed()
            if sum(t.nbytes for t in self.quarantined) > self.target_bytes:  # memory stays bounded
                self._write_quarantined()

    def dual_error(self) -> BaseException | None:
        """The dual lane's error, if its batch (one before the failing one) failed too: that row
        comes first in the input."""
        try:
            self._join_dual()
        except BaseException as exc:
            return exc
        return None

    def finish(self) -> None:
        self._join_dual()
        self.origin.flush_all()
        if self.shadow is not None:
            self.shadow.flush_all()
        self._write_quarantined()
        self.close(wait=True)

    def _write_quarantined(self) -> None:
        """The rows this load quarantined so far, as quarantine-table files under its transaction."""
        if not self.quarantined:
            return
        rows = pa.concat_tables(self.quarantined)
        self.quarantined = []
        written = register_and_write(self.catalog, self.warehouse, self.txn_id, self.quarantine, rows)
        self.planned.extend(written)
        self.sizes.update(written)

    def close(self, wait: bool) -> None:
        self._dual_lane.shutdown(wait=True, cancel_futures=True)
        self._pool.shutdown(wait=True, cancel_futures=not wait)
        pending, self._pending = self._pending, []
        if wait:
            for future in pending:
                future.result()


def load_table(
    catalog: Catalog,
    warehouse: pathlib.Path,
    table: TableInfo,
    version: SchemaVersion,
    data: pa.Table,
    label: str,
    timeout_s: int = 3600,
    lease_s: float | None = DEFAULT_LEASE_S,
) -> LoadResult:
    """Write `data` (already conformed to `version`, see alterflow.load.rows) as one transaction."""
    return load_batches(catalog, warehouse, table, version, [data], label, timeout_s, lease_s)


def load_batches(
    catalog: Catalog,
    warehouse: pathlib.Path,
    table: TableInfo,
    version: SchemaVersion,
    batches: Iterable[pa.Table | pa.RecordBatch],
    label: str,
    timeout_s: int = 3600,
    lease_s: float | None = DEFAULT_LEASE_S,
    conform: Conform | None = None,
    target_file_mb: int = TARGET_FILE_MB,
    buffer_mb: int = LOAD_BUFFER_MB,
) -> LoadResult:
    """Write a stream of batches as one transaction, under a load lease of `lease_s` seconds that
    this load renews (None: no lease, only the timeout). `conform` converts each batch to
    `version` (None: the batches are conformed already). A tablet's file rolls at about
    `target_file_mb` of Arrow data; all buffered rows together stay under about `buffer_mb`.

    The first batch is converted before the transaction begins, so a small load with a bad value
    leaves no trace at all. While a heavyweight job is unfinished and this transaction is above its
    boundary, the rows are also written, converted, to the job's shadow index, in the same
    transaction (dual write)."""
    stream = numbered(batches, conform)
    first = next(stream, None)
    store = open_warehouse(warehouse, catalog)
    store.check_owner()  # before anything is written
    catalog.abort_expired_transactions(table.id)  # their files go after the retention (GC)
    txn_id = catalog.begin_transaction(table.id, label, timeout_s, lease_s=lease_s, holder=new_holder())
    planned: list[str] = []
    writer = _LoadWriter(catalog, warehouse, table, version, txn_id, planned, target_file_mb << 20, buffer_mb << 20)
    try:
        if lease_s is None:
            _write_and_commit(catalog, store, writer, first, stream)
        else:
            with TransactionLease(catalog, txn_id, lease_s):
                _write_and_commit(catalog, store, writer, first, stream)
    except BaseException as exc:
        writer.close(wait=False)
        elsewhere = aborted_elsewhere(catalog, txn_id, exc)
        abort_load(catalog, txn_id, exc)
        if elsewhere is not None:
            raise elsewhere from exc
        refusal = aborted_for_room(exc, table.name)
        if refusal is not None:
            raise refusal from exc
        raise
    return LoadResult(txn_id, writer.origin.buffers.rows_flushed, len(planned))


def aborted_elsewhere(catalog: Catalog, txn_id: int, error: BaseException) -> Exception | None:
    """When a load failed because another process aborted its transaction first (its lease ran
    out while it was stopped; GC then deleted the file it was writing): the one line that says
    so. None for a failure of the load's own, and when the catalog cannot be asked."""
    if not isinstance(error, Exception) or isinstance(error, UserError):
        return None
    try:
        return catalog.aborted_elsewhere(txn_id)
    except Exception:  # the original error matters more
        return None


ABORT_TRIES = 3  # a failed load's abort, tried again after a catalog error (a lock conflict on a busy catalog)
ABORT_PAUSE_S = 0.2


def abort_load(catalog: Catalog, txn_id: int, error: BaseException) -> None:
    """A failed load's transaction aborted. Its files are GC's to delete after the retention
    period (deferred deletes, alterflow.gc.file_sweep), those written after an abort from elsewhere
    (a timeout) too: their rows are gone by then, so the sweep finds them unreferenced. A catalog
    error is tried again, ABORT_TRIES times in all, so that a refused load on a busy catalog does not
    leave its transaction open until its lease runs out. A catalog server that went away (the
    load's own error, most likely) adds no line to the load's: its transaction stays PREPARE, which
    nobody sees, until its lease ends and the next look aborts it."""
    for attempt in range(1, ABORT_TRIES + 1):
        try:
            catalog.abort_transaction(txn_id, f"load failed: {first_line(error)}")
            return
        except CatalogUnavailable as lost:  # the server went away: no line beside the load's own
            if attempt == ABORT_TRIES:
                log.info("transaction %s stays PREPARE until its lease runs out, then is aborted: %s", txn_id, first_line(lost))
                return
        except UserError as refused:  # committed or unknown: nothing to abort
            log.warning("transaction %s was not aborted: %s", txn_id, first_line(refused))
            return
        except Exception:  # the original error matters more; the lease, the timeout and GC will clean up
            if attempt == ABORT_TRIES:
                log.exception("could not abort transaction %s", txn_id)
                return
            log.warning("could not abort transaction %s (try %s of %s); trying again", txn_id, attempt, ABORT_TRIES, exc_info=True)
        time.sleep(ABORT_PAUSE_S * attempt)


def numbered(batches: Iterable[pa.Table | pa.RecordBatch], conform: Conform | None) -> Iterator[tuple[pa.Table, int]]:
    """(conformed batch, number of its first row in the whole input), empty batches skipped."""
    first_row = 1
    for batch in batches:
        if batch.num_rows == 0:
            continue
        data = pa.Table.from_batches([batch]) if isinstance(batch, pa.RecordBatch) else batch
        if conform is not None:
            data = conform(data, first_row)
        yield data, first_row
        first_row += batch.num_rows


def _write_and_commit(
    catalog: Catalog, store: Warehouse, writer: _LoadWriter, first: tuple[pa.Table, int] | None, stream: Iterator[tuple[pa.Table, int]]
) -> None:
    """Steps 2 to 4 of a load."""
    heavy = HeavyJobs(catalog)
    target = heavy.dual_write_target(writer.table.id)
    if target is not None and writer.txn_id <= target.boundary_txn:
        target = None
    try:
        if first is not None:
            writer.add(first[0], target, first[1])
        for data, first_row in stream:
            writer.add(data, target, first_row)
        writer.finish()
    except BadRows:
        earlier = writer.dual_error()
        if earlier is not None:
            raise earlier from None
        raise

    store.sync_transaction(writer.txn_id)  # durable before visible
    heavy.commit_load(writer.txn_id, writer.sizes, writer.nulled, target.job_id if target is not None else None)


__all__ = ["LoadResult", "load_table", "load_batches", "TXN_COLUMN"]
