"""Converting rows from schema version OLD to version NEW in Python (pyarrow): the dual-write
path of a heavyweight ALTER. Values and failures are the same as `spark_convert.convert_frame`
gives for the same rows (tests/conversion/test_convert_agreement.py holds both to that).

No pyspark here.
"""

from __future__ import annotations

import decimal
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.compute as pc

from alterflow.conversion.rules import (
    INTEGER_RANGES,
    ConversionFailed,
    can_fail,
    family,
    value_converter,
)
from alterflow.store.rows import arrow_schema
from alterflow.types import DataType, to_arrow
from catalog.schema import Column, SchemaVersion, name_key

__all__ = ["CastFailure", "ArrowConversion", "convert_arrow", "convert_array"]


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


def _source_value(value: object, t: DataType) -> object:
    """A source value as alterflow's Python representation of its type (LARGEINT: int)."""
    if t.name == "LARGEINT" and isinstance(value, decimal.Decimal):
        return int(value)
    return value


def _arrow_values(values: list, t: DataType) -> list:
    if t.name == "LARGEINT":
        return [None if v is None else decimal.Decimal(v) for v in values]
    return values


def _vectorized(array: pa.Array, old: DataType, new: DataType) -> tuple[pa.Array, pa.Array] | None:
    """(converted, failed mask) computed by pyarrow kernels, for the rules where those are
    exactly the reference; None where the conversion goes value by value."""
    kind = family(old, new)
    target = to_arrow(new)
    if kind == "same":
        return array, None
    if kind == "widen":
        return (array if old.is_string else pc.cast(array, target)), None
    if kind == "datetime_to_date":
        return pc.cast(array, target), None  # floors to the day, also before 1970
    if kind == "number_to_integer" and old.is_integer and old.name != "LARGEINT" and new.name != "LARGEINT":
        low, high = INTEGER_RANGES[new.name]  # a narrowing: inside the source type's range
        inside = pc.and_(pc.greater_equal(array, pa.scalar(low, array.type)),
                         pc.less_equal(array, pa.scalar(high, array.type)))
        failed = pc.fill_null(pc.invert(inside), False)
        kept = pc.if_else(inside, array, pa.nulls(len(array), array.type))
        return pc.cast(kept, target), failed
    if kind == "number_to_string" and old.is_integer and old.name != "LARGEINT":
        text = pc.cast(array, pa.string())
        if new.name != "VARCHAR":
            return text, None
        inside = pc.less_equal(pc.utf8_length(text), pa.scalar(new.length, pa.int32()))
        failed = pc.fill_null(pc.invert(inside), False)
        return pc.if_else(inside, text, pa.nulls(len(array), pa.string())), failed
    return None


def convert_array(array: pa.Array | pa.ChunkedArray, old: DataType, new: DataType) -> tuple[pa.Array, list[int]]:
    """Convert one column: (the array of `new`'s Arrow type with NULL where a value failed,
    the 0-based rows that failed). ValueError when the type change is rejected."""
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks() if array.num_chunks else pa.array([], type=array.type)
    target = to_arrow(new)
    fast = _vectorized(array, old, new)
    if fast is not None:
        result, failed = fast
        rows = [] if failed is None else pc.indices_nonzero(failed).to_pylist()
        return result.cast(target) if result.type != target else result, rows
    convert = value_converter(old, new)
    values = []
    rows = []
    for row, value in enumerate(array.to_pylist()):
        if value is None:
            values.append(None)
            continue
        try:
            values.append(convert(value))
        except ConversionFailed:
            values.append(None)
            rows.append(row)
    return pa.array(_arrow_values(values, new), type=target), rows


def _default_array(column: Column, length: int) -> pa.Array:
    value = column.initial_default
    return pa.array(_arrow_values([value] * length, column.type), type=to_arrow(column.type))


def convert_arrow(
    data: pa.Table, old: SchemaVersion, new: SchemaVersion, on_cast_error: str = "fail", max_failures: int = 20
) -> ArrowConversion:
    """Convert rows of version OLD (`data`: OLD's columns by OLD's names and `to_arrow` types,
    plus extra columns such as "af$txn") to version NEW.

    The table has NEW's columns in NEW's order with `arrow_schema(new)`'s fields (names, types,
    field ids), then the extra columns unchanged. A column of NEW is matched by id: present in
    OLD, its values converted; absent, its initial default (or NULL).

    on_cast_error="fail": `failures` lists the first `max_failures` failed values in row order
    (then by NEW's column order); failed values are NULL in the table. on_cast_error="null":
    failed values become NULL, `nulled` counts them per NEW column (columns with at least one),
    `failures` is empty. NOT NULL is not checked here. ValueError for a rejected type change,
    an unknown `on_cast_error` or a column of OLD missing from `data`.
    """
    if on_cast_error not in ("fail", "null"):
        raise ValueError(f"on_cast_error must be 'fail' or 'null', not {on_cast_error!r}")
    old_by_id = {column.id: column for column in old.columns}
    for column in new.columns:  # reject unsupported type changes before touching any value
        source = old_by_id.get(column.id)
        if source is not None:
            family(source.type, column.type)
    names = {}
    for index, name in enumerate(data.column_names):
        names.setdefault(name, index)
        names.setdefault(name_key(name), index)
    old_keys = {name_key(column.name) for column in old.columns}
    for column in old.columns:
        if column.name not in names and name_key(column.name) not in names:
            raise ValueError(f"the rows have no column {column.name} of version {old.version}")

    arrays = []
    failed_rows: list[tuple[int, int, CastFailure]] = []
    nulled: dict[str, int] = {}
    for position, column in enumerate(new.columns):
        source = old_by_id.get(column.id)
        if source is None:
            arrays.append(_default_array(column, data.num_rows))
            continue
        index = names.get(source.name, names.get(name_key(source.name)))
        chunked = data.column(index)
        array, rows = convert_array(chunked, source.type, column.type)
        arrays.append(array)
        if not rows:
            continue
        if on_cast_error == "null":
            nulled[column.name] = len(rows)
        else:
            original = chunked.combine_chunks() if isinstance(chunked, pa.ChunkedArray) else chunked
            for row in rows[:max_failures]:
                value = _source_value(original[row].as_py(), source.type)
                failed_rows.append((row, position, CastFailure(column.name, value, row)))

    fields = list(arrow_schema(new))
    for index, name in enumerate(data.column_names):
        if name_key(name) not in old_keys:
            fields.append(data.schema.field(index))
            arrays.append(data.column(index))
    table = pa.Table.from_arrays(arrays, schema=pa.schema(fields))
    failed_rows.sort(key=lambda item: (item[0], item[1]))
    failures = tuple(item[2] for item in failed_rows[:max_failures])
    return ArrowConversion(table=table, nulled=nulled, failures=failures)


def failing_columns(old: SchemaVersion, new: SchemaVersion) -> list[str]:
    """The NEW columns whose conversion from OLD can fail (names), in NEW's order."""
    old_by_id = {column.id: column for column in old.columns}
    return [c.name for c in new.columns if c.id in old_by_id and can_fail(old_by_id[c.id].type, c.type)]
