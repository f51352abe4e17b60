"""Turning incoming rows into an Arrow table of one schema version: names matched, types coerced,
write defaults filled in, NOT NULL and length limits checked. Any bad value is one clear error."""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
import pyarrow.compute as pc

from alterflow.arrow_schema import arrow_schema
from alterflow.catalog.schema import Column, SchemaVersion, name_key
from alterflow.errors import shown
from alterflow.load.bad_rows import BadRows
from alterflow.sql.ast import Literal
from alterflow.values.load_coercion import BadValue, coerce_array
from alterflow.values.types import InvalidValue, coerce_literal, to_arrow


def _resolve_columns(version: SchemaVersion, table: str, names: Sequence[str]) -> list[Column]:
    seen: set[str] = set()
    columns = []
    for name in names:
        column = version.column(name)
        if column is None:
            raise BadRows(f"INSERT INTO {table}: unknown column {name}")
        if name_key(name) in seen:
            raise BadRows(f"INSERT INTO {table}: column {name} is named twice")
        seen.add(name_key(name))
        columns.append(column)
    return columns


def _default_array(column: Column, table: str, length: int) -> pa.Array:
    if column.write_default is None and not column.nullable:
        raise BadRows(f"INSERT INTO {table}: column {column.name} is NOT NULL and has no default; give it a value")
    return pa.repeat(pa.scalar(column.write_default, type=to_arrow(column.type)), length)


def _check_array(column: Column, table: str, array: pa.Array | pa.ChunkedArray, first_row: int = 1) -> None:
    """NOT NULL and CHAR / VARCHAR lengths, naming the first row that breaks one (counted from
    `first_row`); kernels only, whatever the number of rows."""
    if not column.nullable and array.null_count:
        row = pc.index(pc.is_null(array), True).as_py() + first_row
        raise BadRows(f"INSERT INTO {table}: column {column.name} is NOT NULL but row {row} has NULL")
    if column.type.name in ("CHAR", "VARCHAR") and len(array):
        too_long = pc.greater(pc.utf8_length(array), column.type.length)
        if pc.any(too_long).as_py():
            index = pc.index(too_long, True).as_py()
            raise BadRows(
                f"INSERT INTO {table}: column {column.name}: value {shown(array[index].as_py())} is longer than "
                f"{column.type.sql()} (row {index + first_row})"
            )


def _build(version: SchemaVersion, table: str, arrays: dict[int, pa.Array | pa.ChunkedArray], length: int, first_row: int = 1) -> pa.Table:
    out = []
    for column in version.columns:
        array = arrays.get(column.id)
        if array is None:
            array = _default_array(column, table, length)
        _check_array(column, table, array, first_row)
        out.append(array)
    return pa.Table.from_arrays(out, schema=arrow_schema(version))


def rows_from_literals(version: SchemaVersion, table: str, names: Sequence[str] | None, rows: Sequence[Sequence[Literal]]) -> pa.Table:
    """INSERT ... VALUES: literals coerced to the column types."""
    columns = list(version.columns) if names is None else _resolve_columns(version, table, names)
    arrays: dict[int, pa.Array] = {}
    for position, column in enumerate(columns):
        values = []
        for number, row in enumerate(rows, start=1):
            if len(row) != len(columns):
                raise BadRows(f"INSERT INTO {table}: row {number} has {len(row)} values but {len(columns)} columns are named")
            try:
                values.append(coerce_literal(row[position], column.type))
            except InvalidValue as exc:
                raise BadRows(f"INSERT INTO {table}: column {column.name}: {exc} (row {number})") from None
        arrays[column.id] = pa.array(values, type=to_arrow(column.type))
    return _build(version, table, arrays, len(rows))


def _conform_array(column: Column, table: str, array: pa.Array | pa.ChunkedArray, first_row: int = 1) -> pa.Array | pa.ChunkedArray:
    """The column's values as its type, by `coerce_value`'s rules (alterflow.values.load_coercion runs
    them as Arrow kernels); the first bad value fails the whole batch, its row counted from
    `first_row`."""
    try:
        return coerce_array(array, column.type)
    except BadValue as exc:
        raise BadRows(f"INSERT INTO {table}: column {column.name}: {exc.message} (row {exc.index + first_row})") from None


def rows_from_arrow(version: SchemaVersion, table: str, data: pa.Table, names: Sequence[str] | None = None, first_row: int = 1) -> pa.Table:
    """A bulk load or INSERT ... SELECT: columns matched by name (case-insensitive), then coerced
    by `coerce_value`'s rules. Errors count rows from `first_row`: a streaming load converting
    batch by batch passes each batch's first row number in the whole input."""
    source_names = list(data.column_names) if names is None else list(names)
    if names is not None and len(names) != data.num_columns:
        raise BadRows(f"INSERT INTO {table}: {len(names)} columns are named but the query returns {data.num_columns}")
    columns = _resolve_columns(version, table, source_names)
    arrays = {column.id: _conform_array(column, table, data.column(i), first_row) for i, column in enumerate(columns)}
    return _build(version, table, arrays, data.num_rows, first_row)
