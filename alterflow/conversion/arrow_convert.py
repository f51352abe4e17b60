"""Converting rows from schema version OLD to version NEW in Python (pyarrow): the dual-write
path of a heavyweight ALTER. Values and failures are the same as `spark_convert.convert_frame`
gives for the same rows (tests/conversion/test_convert_agreement.py holds both to that).

Each column is cast by `alterflow.values.arrow_columns.convert_array` (vectorised kernels that
reproduce `cast_rules.value_converter` exactly, so a load during dual write costs little more
than one without a job); this module adds the table: columns matched by id, defaults of added
columns, extra columns kept, failures collected as ON CAST ERROR asks.

No pyspark here.
"""

from __future__ import annotations

import decimal
from dataclasses import dataclass, field

import pyarrow as pa

from alterflow.arrow_schema import arrow_schema
from alterflow.catalog.schema import Column, SchemaVersion, name_key
from alterflow.catalog.states import OnCastError
from alterflow.values.arrow_columns import arrow_values, convert_array
from alterflow.values.cast_rules import family
from alterflow.values.types import DataType, to_arrow

__all__ = ["CastFailure", "ArrowConversion", "convert_arrow", "default_array"]


@dataclass(frozen=True)
class CastFailure:
    column: str  # the NEW column's name
    value: object  # the source value that failed (Python value of the OLD type)
    row: int  # 0-based row of `data`


@dataclass(frozen=True)
class ArrowConversion:
    table: pa.Table
    nulled: dict[str, int] = field(default_factory=dict)  # NEW column name -> values set to NULL
    failures: tuple[CastFailure, ...] = ()
    failed: int = 0  # values that could not be converted, whichever `on_cast_error`
    failed_rows: dict[str, list[int]] = field(default_factory=dict)  # NEW column name -> its failed rows (every one)


def _source_value(value: object, t: DataType) -> object:
    """A source value as alterflow's Python representation of its type (LARGEINT: int)."""
    if t.name == "LARGEINT" and isinstance(value, decimal.Decimal):
        return int(value)
    return value


def default_array(column: Column, length: int) -> pa.Array:
    """`length` rows of the column's initial default (NULL without one)."""
    value = column.initial_default
    return pa.array(arrow_values([value] * length, column.type), type=to_arrow(column.type))


def convert_arrow(
    data: pa.Table, old: SchemaVersion, new: SchemaVersion, on_cast_error: OnCastError = OnCastError.FAIL, max_failures: int = 20
) -> ArrowConversion:
    """Convert rows of version OLD (`data`: OLD's columns by OLD's names and `to_arrow` types,
    plus extra columns such as "af$txn") to version NEW.

    The table has NEW's columns in NEW's order with `arrow_schema(new)`'s fields (names, types,
    field ids), then the extra columns unchanged. A column of NEW is matched by id: present in
    OLD, its values converted; absent, its initial default (or NULL).

    OnCastError.FAIL: `failures` lists the first `max_failures` failed values in row order
    (then by NEW's column order); failed values are NULL in the table. OnCastError.NULL:
    failed values become NULL, `nulled` counts them per NEW column (columns with at least one),
    `failures` is empty. OnCastError.QUARANTINE: failed values are NULL and `failed_rows` lists
    every failed row per NEW column (the caller moves those rows to the quarantine table).
    `failed` counts the values that failed in any mode. NOT NULL is not checked here. ValueError for a rejected type change,
    an unknown `on_cast_error` or a column of OLD missing from `data`.
    """
    if on_cast_error not in tuple(OnCastError):
        raise ValueError(f"on_cast_error must be 'fail', 'null' or 'quarantine', not {on_cast_error!r}")
    old_by_id = {column.id: column for column in old.columns}
    for column in new.columns:  # reject unsupported type changes before touching any value
        source = old_by_id.get(column.id)
        if source is not None:
            family(source.type, column.type)
    names = _column_indexes(data, old)
    arrays = []
    failures = _Failures(on_cast_error, max_failures)
    for position, column in enumerate(new.columns):
        source = old_by_id.get(column.id)
        if source is None:
            arrays.append(default_array(column, data.num_rows))
            continue
        chunked = data.column(names.get(source.name, names.get(name_key(source.name))))
        if source.type == column.type and chunked.type == to_arrow(column.type):
            arrays.append(chunked)  # unchanged: its buffers as they are, no copy
            continue
        array, rows = convert_array(chunked, source.type, column.type)
        arrays.append(array)
        failures.record(position, column, source, chunked, rows)
    fields = list(arrow_schema(new))
    old_keys = {name_key(column.name) for column in old.columns}
    for index, name in enumerate(data.column_names):
        if name_key(name) not in old_keys:
            fields.append(data.schema.field(index))
            arrays.append(data.column(index))
    table = pa.Table.from_arrays(arrays, schema=pa.schema(fields))
    return ArrowConversion(table=table, nulled=failures.nulled, failures=failures.first(), failed=failures.count, failed_rows=failures.rows)


def _column_indexes(data: pa.Table, old: SchemaVersion) -> dict[str, int]:
    """The index in `data` of each column name, as written and as its name key (the first column of
    a name wins); ValueError when a column of OLD is missing."""
    names: dict[str, int] = {}
    for index, name in enumerate(data.column_names):
        names.setdefault(name, index)
        names.setdefault(name_key(name), index)
    for column in old.columns:
        if column.name not in names and name_key(column.name) not in names:
            raise ValueError(f"the rows have no column {column.name} of version {old.version}")
    return names


@dataclass
class _Failures:
    """The failed values of a conversion, kept as `on_cast_error` asks: counted per column
    (NULL), every row per column (QUARANTINE), or the first values (FAIL)."""

    on_cast_error: OnCastError
    max_failures: int
    count: int = 0
    nulled: dict[str, int] = field(default_factory=dict)
    rows: dict[str, list[int]] = field(default_factory=dict)
    values: list[tuple[int, int, CastFailure]] = field(default_factory=list)  # (row, NEW column position, failure)

    def record(self, position: int, column: Column, source: Column, chunked: pa.Array | pa.ChunkedArray, rows: list[int]) -> None:
        """The `rows` of NEW column `column` (at `position`) whose value of `chunked` failed."""
        if not rows:
            return
        self.count += len(rows)
        if self.on_cast_error == OnCastError.NULL:
            self.nulled[column.name] = len(rows)
        elif self.on_cast_error == OnCastError.QUARANTINE:
            self.rows[column.name] = rows
        else:
            original = chunked.combine_chunks() if isinstance(chunked, pa.ChunkedArray) else chunked
            for row in rows[: self.max_failures]:
                value = _source_value(original[row].as_py(), source.type)
                self.values.append((row, position, CastFailure(column.name, value, row)))

    def first(self) -> tuple[CastFailure, ...]:
        """The first `max_failures` failed values in row order, then by NEW's column order."""
        ordered = sorted(self.values, key=lambda item: (item[0], item[1]))
        return tuple(item[2] for item in ordered[: self.max_failures])
