"""`"on_cast_error" = "quarantine"` (docs/semantics.md, "SQL"): the rows of a heavyweight change whose values cannot
be converted are kept, unconverted, in `<table>__quarantine`, an ordinary table: the source's
columns as STRING (by name), then `_job_id`, `_column` (the columns whose cast failed) and
`_reason`. The converted table holds every other row.

Quarantined rows are files of the quarantine table registered under the transaction that
produced them (a converted tablet's, a dual-writing load's), marked with the job's id: they
become visible exactly when that transaction commits, and a cancel of the job takes them back
(`HeavyJobs.cancel`). Creating the table (or adding the columns it lacks) is
`alterflow.workflow.quarantine_table`'s.
"""

from __future__ import annotations

import pathlib
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from alterflow.arrow_schema import arrow_schema
from alterflow.catalog.catalog import Catalog, NewFile
from alterflow.catalog.schema import SchemaVersion, name_key
from alterflow.errors import UserError
from alterflow.store.layout import data_file_path
from alterflow.store.tablets import tablet_rows, write_parquet
from alterflow.values.types import DataType, format_value, parse_type

QUARANTINE_SUFFIX = "__quarantine"
JOB_COLUMN, COLUMN_COLUMN, REASON_COLUMN = "_job_id", "_column", "_reason"
META_COLUMNS = (JOB_COLUMN, COLUMN_COLUMN, REASON_COLUMN)
STRING = parse_type("STRING")


class QuarantineUnavailable(UserError):
    """The quarantine table is missing or is not one (a user table of that name)."""


def quarantine_table_name(table: str) -> str:
    return f"{table}{QUARANTINE_SUFFIX}"


@dataclass(frozen=True)
class QuarantineTarget:
    """Where one job's quarantined rows go: the quarantine table as it is now."""

    job_id: int
    table_id: int
    name: str
    index_id: int
    version: SchemaVersion


def text_array(values: pa.Array | pa.ChunkedArray, t: DataType) -> pa.Array:
    """Values of type `t` as text, as Spark's CAST(... AS STRING) writes them."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks() if values.num_chunks else pa.array([], type=values.type)
    if t.is_string:
        return values.cast(pa.string())
    if t.is_number:
        from alterflow.values.arrow_columns import convert_array

        return convert_array(values, t, STRING)[0].cast(pa.string())
    return pa.array([None if v is None else format_value(v, t) for v in values.to_pylist()], type=pa.string())


def reason_text(column: str, text: str, target: DataType) -> str:
    """One failed value's `_reason` (the Spark conversion builds the same text in SQL)."""
    return f"{column}: '{text}' cannot be converted to {target.sql()}"


def _reasons(origin: pa.Table, old: SchemaVersion, new: SchemaVersion, failed_rows: dict[str, list[int]], rows: np.ndarray):
    """`_column` and `_reason` of each quarantined row (`rows`, ascending): the NEW columns whose
    cast failed, and the values that failed with their target types."""
    position = {int(r): i for i, r in enumerate(rows)}
    columns: list[list[str]] = [[] for _ in rows]
    reasons: list[list[str]] = [[] for _ in rows]
    for column in new.columns:
        failed = failed_rows.get(column.name)
        if not failed:
            continue
        source = old.column_by_id(column.id)
        index = origin.schema.get_field_index(source.name)
        if index < 0:
            index = [name_key(n) for n in origin.column_names].index(name_key(source.name))
        texts = text_array(origin.column(index).take(pa.array(failed, type=pa.int64())), source.type).to_pylist()
        for row, text in zip(failed, texts):
            at = position[row]
            columns[at].append(column.name)
            reasons[at].append(reason_text(column.name, text, column.type))
    return pa.array([", ".join(c) for c in columns], type=pa.string()), pa.array(["; ".join(r) for r in reasons], type=pa.string())


def failed_row_numbers(failed_rows: dict[str, list[int]]) -> np.ndarray:
    """The rows with at least one failed value, ascending."""
    lists = [np.asarray(r, dtype=np.int64) for r in failed_rows.values() if r]
    return np.unique(np.concatenate(lists)) if lists else np.zeros(0, dtype=np.int64)


def kept_row_numbers(length: int, failed_rows: dict[str, list[int]]) -> np.ndarray:
    """The rows of `length` with no failed value, ascending."""
    keep = np.ones(length, dtype=bool)
    keep[failed_row_numbers(failed_rows)] = False
    return np.flatnonzero(keep)


def split_quarantined(
    origin: pa.Table,
    converted: pa.Table,
    old: SchemaVersion,
    new: SchemaVersion,
    failed_rows: dict[str, list[int]],
    target: QuarantineTarget,
) -> tuple[pa.Table, pa.Table | None]:
    """(`converted` without the rows that failed, those rows of `origin` as the quarantine
    table's rows or None when every row converted). `origin` and `converted` are row for row alike."""
    if not any(failed_rows.values()):
        return converted, None
    rows = failed_row_numbers(failed_rows)
    keep = np.ones(converted.num_rows, dtype=bool)
    keep[rows] = False
    taken = origin.take(pa.array(rows, type=pa.int64()))
    by_key = {name_key(n): i for i, n in enumerate(taken.column_names)}
    arrays = []
    meta = {name_key(m): m for m in META_COLUMNS}
    for column in target.version.columns:
        role = meta.get(name_key(column.name))
        if role == JOB_COLUMN:
            arrays.append(pa.array(np.full(len(rows), target.job_id, dtype=np.int64)))
        elif role is not None:
            arrays.append(None)  # filled below
        else:
            source = old.column(column.name)
            index = by_key.get(name_key(column.name))
            if source is None or index is None:
                arrays.append(pa.nulls(len(rows), type=pa.string()))
            else:
                arrays.append(text_array(taken.column(index), source.type))
    failed_columns, reasons = _reasons(origin, old, new, failed_rows, rows)
    roles = [meta.get(name_key(c.name)) for c in target.version.columns]
    arrays[roles.index(COLUMN_COLUMN)] = failed_columns
    arrays[roles.index(REASON_COLUMN)] = reasons
    quarantined = pa.Table.from_arrays(arrays, schema=arrow_schema(target.version))
    return converted.filter(pa.array(keep)), quarantined


def register_and_write(catalog: Catalog, warehouse: pathlib.Path, txn_id: int, target: QuarantineTarget, rows: pa.Table) -> dict[str, int]:
    """Write quarantined rows as files of the quarantine table under transaction `txn_id`
    (recorded first, so an abort finds them); returns {path: bytes} for the commit."""
    if rows.num_rows == 0:
        return {}
    pieces = tablet_rows(rows, target.version).slices(rows)
    tablet_ids = catalog.ensure_tablets(target.index_id, {piece.key for piece in pieces})
    files = [(data_file_path(target.table_id, target.index_id, tablet_ids[piece.key], txn_id), piece) for piece in pieces]
    catalog.register_files(
        txn_id,
        [NewFile(tablet_ids[piece.key], target.version.version, path, piece.rows.num_rows, 0, target.job_id) for path, piece in files],
    )
    return {path: write_parquet(warehouse, path, piece.rows) for path, piece in files}
