"""A load: one transaction that writes a batch of rows to a table's tablets.

1. begin a PREPARE transaction;
2. split the rows into tablets and record the files it is about to write (still invisible);
3. write the Parquet files;
4. commit: every file becomes visible at once.
Any failure aborts the transaction and deletes its files, so no row becomes visible and no file is
orphaned. While the transaction is open the load renews its lease on it (SPEC §4, `alterflow.leases`). A
crash between 2 and 4 leaves a PREPARE transaction whose files the catalog knows; once its lease
expires, whoever looks first (a job waiting on its boundary, GC, the next load) aborts it and
deletes them. A load that lost its lease (a long pause) fails at commit and leaves nothing visible.
"""

from __future__ import annotations

import logging
import pathlib
from dataclasses import dataclass

import pyarrow as pa

from alterflow.leases import TransactionLease, new_holder
from alterflow.settings import DEFAULT_LEASE_S
from alterflow.store.layout import absolute, data_file_path
from alterflow.store.tablets import TXN_COLUMN, dedupe_primary_key, split_into_tablets, with_txn_column, write_parquet
from alterflow.store.rows import BadRows
from catalog.catalog import Catalog, NewFile, TableInfo
from catalog.heavy_jobs import DualWriteTarget, HeavyJobs
from catalog.schema import SchemaVersion

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PlannedFile:
    tablet_id: int
    path: str
    rows: pa.Table
    version: int  # the schema version the file is written under


@dataclass(frozen=True)
class LoadResult:
    txn_id: int
    rows: int
    files: int


def _sorted(data: pa.Table, version: SchemaVersion) -> pa.Table:
    if not version.sort_key or data.num_rows < 2:
        return data
    return data.sort_by([(name, "ascending") for name in version.names(version.sort_key)])


def _delete_files(warehouse: pathlib.Path, paths: list[str]) -> None:
    for relative in paths:
        path = absolute(warehouse, relative)
        path.unlink(missing_ok=True)
        path.with_name(path.name + ".tmp").unlink(missing_ok=True)


def _dual_write_rows(data: pa.Table, version: SchemaVersion, target: DualWriteTarget, table: str) -> tuple[pa.Table, int]:
    """The load's rows converted to the running job's new version; a row that cannot be converted
    fails the whole load."""
    from alterflow.conversion.arrow_convert import convert_arrow

    result = convert_arrow(data, version, target.version, target.on_cast_error)
    if result.failures:
        first = result.failures[0]
        raise BadRows(
            f"INSERT INTO {table}: column {first.column}: value {first.value!r} (row {first.row + 1}) cannot be "
            f"converted to {target.version.column(first.column).type.sql()} for schema change job {target.job_id}; "
            "nothing was loaded"
        )
    for column in target.version.columns:
        values = result.table.column(column.name)
        if not column.nullable and values.null_count:
            row = values.is_null().to_pylist().index(True) + 1
            raise BadRows(
                f"INSERT INTO {table}: column {column.name} becomes NOT NULL in schema change job {target.job_id} "
                f"but row {row} has NULL; nothing was loaded"
            )
    return result.table, sum(result.nulled.values())


def _plan_files(catalog: Catalog, table: TableInfo, index_id: int, version: SchemaVersion, data: pa.Table, txn_id: int):
    slices = split_into_tablets(data, version)
    tablet_ids = catalog.ensure_tablets(index_id, [s.key for s in slices])
    return [
        PlannedFile(tablet_ids[s.key], data_file_path(table.id, index_id, tablet_ids[s.key], txn_id), _sorted(s.rows, version), version.version)
        for s in slices
    ]


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
    """Write `data` (already conformed to `version`, see alterflow.store.rows) as one transaction,
    under a load lease of `lease_s` seconds that this load renews (None: no lease, only the timeout).

    While a heavyweight job is unfinished and this transaction is above its boundary, the rows are
    also written, converted, to the job's shadow index, in the same transaction (dual write)."""
    heavy = HeavyJobs(catalog)
    data = dedupe_primary_key(data, version)
    _delete_files(warehouse, catalog.abort_expired_transactions(table.id))
    txn_id = catalog.begin_transaction(table.id, label, timeout_s, lease_s=lease_s, holder=new_holder())
    planned: list[PlannedFile] = []
    try:
        if lease_s is None:
            _write_and_commit(catalog, warehouse, table, version, data, txn_id, heavy, planned)
        else:
            with TransactionLease(catalog, txn_id, lease_s):
                _write_and_commit(catalog, warehouse, table, version, data, txn_id, heavy, planned)
    except BaseException as exc:
        try:
            # Its own files too: an abort from elsewhere (a timeout) may have happened before they were written.
            _delete_files(warehouse, [f.path for f in planned])
            paths = catalog.abort_transaction(txn_id, f"load failed: {exc}")
            _delete_files(warehouse, paths)
        except Exception:  # the original error matters more; the lease, the timeout and GC will clean up
            log.exception("could not abort transaction %s", txn_id)
        raise
    return LoadResult(txn_id, data.num_rows, len(planned))


def _write_and_commit(
    catalog: Catalog, warehouse: pathlib.Path, table: TableInfo, version: SchemaVersion, data: pa.Table, txn_id: int,
    heavy: HeavyJobs, planned: list[PlannedFile],
) -> None:
    """Steps 2 to 4 of a load; `planned` collects the files as they are planned (for the abort)."""
    if version.primary_key:
        data = with_txn_column(data, txn_id)
    planned += _plan_files(catalog, table, table.current_index_id, version, data, txn_id)
    target = heavy.dual_write_target(table.id)
    nulled = 0
    if target is not None and txn_id > target.boundary_txn:
        shadow, nulled = _dual_write_rows(data, version, target, table.name)
        planned += _plan_files(catalog, table, target.shadow_index_id, target.version, shadow, txn_id)
    catalog.register_files(txn_id, [NewFile(f.tablet_id, f.version, f.path, f.rows.num_rows, 0) for f in planned])
    sizes = {f.path: write_parquet(warehouse, f.path, f.rows) for f in planned}

    def check(session, txn) -> None:
        heavy.check_load_commit(session, txn)
        if nulled:
            heavy.add_dual_write_nulls(session, target.job_id, nulled)

    catalog.commit_transaction(txn_id, sizes, check=check)


__all__ = ["LoadResult", "load_table", "TXN_COLUMN"]
