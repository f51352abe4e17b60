"""Read a table's snapshot into Arrow under a target schema version, in this process: the reader of
the local engine (docs/semantics.md, "Queries: two engines, Spark's answers"), with the semantics of `evolved_read.read_snapshot`.

A column of the target is found in each file by its Parquet field id: present in the file's
version, its values are read and, when the type was widened since, widened by the same rules the
conversion uses (`arrow_columns.convert_array`); absent, it reads its initial default or NULL.
Columns the target no longer has are never read. Primary-key tables keep, per key, the row of the
latest committed transaction (rows carry their transaction in the hidden column, and rewritten
files hold rows of many), and between rows of one transaction the row of the file whose name
sorts last.

No pyspark here.
"""

from __future__ import annotations

import pathlib

import numpy as np
import pyarrow as pa

from alterflow.arrow_schema import arrow_field
from alterflow.catalog.records import DataFile, TableSnapshot
from alterflow.catalog.schema import SchemaVersion
from alterflow.errors import UserError
from alterflow.store.layout import TXN_COLUMN, file_source

FIELD_ID = b"PARQUET:field_id"


class VersionReadError(UserError, ValueError):
    """A stored value that does not read as the target version's type (a read of an older, narrower
    version of a column widened since)."""


def _field_ids(schema: pa.Schema) -> dict[int, int]:
    """{field id: column position} of a Parquet file's top-level columns."""
    ids = {}
    for position, field in enumerate(schema):
        if field.metadata and FIELD_ID in field.metadata:
            ids[int(field.metadata[FIELD_ID])] = position
    return ids


def read_file(
    warehouse: pathlib.Path,
    data_file: DataFile,
    source: SchemaVersion,
    target: SchemaVersion,
    with_txn: bool,
    columns: list[str] | None = None,
) -> pa.Table:
    """One data file written under `source`, as rows of `target` (only `columns` of it, when
    given), plus the transaction column."""
    chosen = _chosen(target, columns)
    with file_source(warehouse, data_file.path).parquet() as parquet:  # not pq.read_table: its dataset module imports pandas (0.5 s)
        schema = parquet.schema_arrow
        by_id = _field_ids(schema)
        wanted = []
        for column in chosen:
            found = source.column_by_id(column.id)
            if found is not None and column.id in by_id:
                wanted.append(schema.field(by_id[column.id]).name)
        if with_txn:
            wanted.append(TXN_COLUMN)
        table = parquet.read(columns=wanted)
    arrays = []
    for column in chosen:
        found = source.column_by_id(column.id)
        if found is None or column.id not in by_id:
            from alterflow.conversion.arrow_convert import default_array  # pyarrow.compute: imported when needed

            arrays.append(default_array(column, table.num_rows))
            continue
        values = table.column(schema.field(by_id[column.id]).name)
        if found.type != column.type:
            from alterflow.values.arrow_columns import convert_array

            values, failed = convert_array(values, found.type, column.type)
            if failed:
                raise VersionReadError(
                    f"data file {data_file.path}: column {column.name} does not read as {column.type.sql()} (written as {found.type.sql()})"
                )
        arrays.append(values)
    fields = _fields(target, chosen)
    if with_txn:
        arrays.append(table.column(TXN_COLUMN))
        fields.append(pa.field(TXN_COLUMN, pa.int64()))
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def _chosen(target: SchemaVersion, columns: list[str] | None) -> list:
    if columns is None:
        return list(target.columns)
    return [target.column(name) for name in columns]


def _fields(target: SchemaVersion, chosen: list) -> list[pa.Field]:
    """The Arrow fields of `chosen`, in its order (the order `read_file` builds the arrays in)."""
    return [arrow_field(c) for c in chosen]


def read_snapshot_arrow(
    warehouse: pathlib.Path,
    snapshot: TableSnapshot,
    target: SchemaVersion | None = None,
    keep_txn: bool = False,
    merge_keys: bool = True,
    columns: list[str] | None = None,
) -> pa.Table:
    """The snapshot's visible rows under `target` (default: its current version). keep_txn keeps
    the hidden transaction column of a primary-key table (a rewrite carries it over);
    merge_keys=False reads every stored row, without keeping only the latest per primary key;
    `columns` reads only those of `target` (a merge still reads the key)."""
    target = target or snapshot.current
    keyed = bool(snapshot.current.primary_key)
    merge = keyed and merge_keys
    chosen = _chosen(target, columns)
    if merge:  # the key decides which rows are visible
        keys = [target.column_by_id(cid) for cid in snapshot.current.primary_key]
        chosen = chosen + [k for k in keys if k.id not in {c.id for c in chosen}]
    names = [c.name for c in chosen]
    # Files in the order merge-on-read ranks them: a later file's row wins between rows of the
    # same transaction, and the row of the later commit wins first of all (ranked below).
    files = sorted(snapshot.files, key=lambda f: pathlib.PurePosixPath(f.path).name)
    parts = [read_file(warehouse, f, snapshot.versions[f.schema_version], target, keyed, names) for f in files]
    if not parts:
        fields = _fields(target, chosen) + ([pa.field(TXN_COLUMN, pa.int64())] if keyed and keep_txn else [])
        rows = pa.Table.from_batches([], schema=pa.schema(fields))  # not empty_table(): it imports pandas
    else:
        rows = pa.concat_tables(parts) if len(parts) > 1 else parts[0]
        if merge and rows.num_rows > 1:
            rows = _latest_per_key(rows, target, snapshot.commit_seqs)
        if keyed and not keep_txn:
            rows = rows.drop_columns([TXN_COLUMN])
    wanted = [c.name for c in _chosen(target, columns)] + ([TXN_COLUMN] if keyed and keep_txn else [])
    return rows.select(wanted)


def _latest_per_key(rows: pa.Table, target: SchemaVersion, commit_seqs: dict[int, int]) -> pa.Table:
    """Per primary key, the row of the latest committed transaction; between rows of one
    transaction the one read last (its file's name sorts last). A transaction the snapshot does
    not know ranks below every known one."""
    txns = rows.column(TXN_COLUMN).to_numpy()
    rank = np.full(len(txns), -1, dtype=np.int64)
    if commit_seqs:
        known = np.fromiter(commit_seqs.keys(), dtype=np.int64, count=len(commit_seqs))
        seqs = np.fromiter(commit_seqs.values(), dtype=np.int64, count=len(commit_seqs))
        by_txn = np.argsort(known)
        known, seqs = known[by_txn], seqs[by_txn]
        at = np.minimum(np.searchsorted(known, txns), len(known) - 1)
        hit = known[at] == txns
        rank[hit] = seqs[at[hit]]
    order = np.argsort(rank, kind="stable")  # commit order; read order among equals
    if not np.array_equal(order, np.arange(len(order))):
        rows = rows.take(pa.array(order))
    from alterflow.store.tablets import dedupe_primary_key  # its kernels: for primary-key tables only

    return dedupe_primary_key(rows, target)
