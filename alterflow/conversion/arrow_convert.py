"""Converting rows from schema version OLD to version NEW in Python (pyarrow): the dual-write
path of a heavyweight ALTER. Values and failures are the same as `spark_convert.convert_frame`
gives for the same rows (tests/conversion/test_convert_agreement.py holds both to that).

Every family is converted by vectorised kernels (`alterflow.values.arrow_text_kernels`,
`alterflow.values.arrow_number_kernels`) that reproduce `cast_rules.value_converter` exactly, so
a load during dual write costs little more than one without a job. Rows a kernel cannot decide exactly (rare: see those modules) and the one
family with no kernel, FLOAT / DOUBLE -> text (Java's Double.toString), go through the
reference value by value. tests/values/test_arrow_kernels.py holds the kernels to the
reference.

No pyspark here.
"""

from __future__ import annotations

import decimal
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from alterflow.arrow_schema import arrow_schema
from alterflow.catalog.schema import Column, SchemaVersion, name_key
from alterflow.catalog.states import OnCastError
from alterflow.values import arrow_number_kernels, arrow_text_kernels
from alterflow.values.arrow_kernels import Outcome
from alterflow.values.cast_rules import ConversionFailed, family, value_converter
from alterflow.values.types import DataType, to_arrow

__all__ = ["CastFailure", "ArrowConversion", "convert_arrow", "convert_array", "convert_values", "default_array"]


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


def _arrow_values(values: list, t: DataType) -> list:
    if t.name == "LARGEINT":
        return [None if v is None else decimal.Decimal(v) for v in values]
    return values


# family -> kernel(array, old, new): an Outcome, or None to convert every value with the reference
_KERNELS = {
    "string_to_integer": arrow_text_kernels.string_to_integer,
    "string_to_float": arrow_text_kernels.string_to_float,
    "string_to_decimal": arrow_text_kernels.string_to_decimal,
    "string_to_date": arrow_text_kernels.string_to_date,
    "number_to_integer": arrow_number_kernels.number_to_integer,
    "number_to_float": arrow_number_kernels.number_to_float,
    "number_to_decimal": arrow_number_kernels.number_to_decimal,
    "number_to_string": arrow_number_kernels.number_to_string,
    "integer_to_date": arrow_number_kernels.integer_to_date,
}


def _has_storage_type(array: pa.Array, t: DataType) -> bool:
    """Whether `array` holds `t` as alterflow stores it (texts may also be large_string). The
    kernels read buffers and rely on it; anything else goes value by value."""
    if t.is_string:
        return pa.types.is_string(array.type) or pa.types.is_large_string(array.type)
    return array.type == to_arrow(t)


def _vectorized(array: pa.Array, old: DataType, new: DataType) -> Outcome | None:
    """The conversion computed by kernels, exactly the reference's values and failures (some
    rows possibly deferred to it); None where every value goes through the reference."""
    kind = family(old, new)
    if kind == "same":
        return Outcome(array, np.zeros(len(array), dtype=bool))
    if not _has_storage_type(array, old):
        return None
    if kind == "widen":
        widened = array if old.is_string else pc.cast(array, to_arrow(new))
        return Outcome(widened, np.zeros(len(array), dtype=bool))
    if kind == "datetime_to_date":  # floors to the day, also before 1970
        return Outcome(pc.cast(array, to_arrow(new)), np.zeros(len(array), dtype=bool))
    return _KERNELS[kind](array, old, new)


def convert_values(array: pa.Array, old: DataType, new: DataType) -> tuple[pa.Array, list[int]]:
    """The reference: `value_converter` value by value; (array of `new`, failed rows). What the
    kernels leave to it, and what tests/values/test_arrow_kernels.py holds them to."""
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
    return pa.array(_arrow_values(values, new), type=to_arrow(new)), rows


def _settle_deferred(array: pa.Array, old: DataType, new: DataType, outcome: Outcome) -> tuple[pa.Array, np.ndarray]:
    """The kernels' values and failures with the deferred rows converted by the reference."""
    rows = np.flatnonzero(outcome.deferred)
    converted, failed_rows = convert_values(array.take(pa.array(rows, type=pa.int64())), old, new)
    values = pc.replace_with_mask(outcome.values, pa.array(outcome.deferred, type=pa.bool_()), converted)
    failed = outcome.failed.copy()
    failed[rows[failed_rows]] = True
    return values, failed


def _convert_slice(array: pa.Array, old: DataType, new: DataType) -> tuple[pa.Array, list[int]]:
    """`convert_array` of one contiguous array, in the calling thread."""
    target = to_arrow(new)
    outcome = _vectorized(array, old, new)
    if outcome is None:
        return convert_values(array, old, new)
    values, failed = outcome.values, outcome.failed
    if outcome.deferred is not None and outcome.deferred.any():
        values, failed = _settle_deferred(array, old, new, outcome)
    return (values.cast(target) if values.type != target else values), np.flatnonzero(failed).tolist()


# Long columns are converted in row slices on a few threads: Arrow's and numpy's kernels release
# the GIL, so a 1M-row column converts about twice as fast on two cores. Slices are long enough
# that the per-call costs of the kernels stay negligible.
SLICE_ROWS = 250_000
MAX_THREADS = 4
_executor: ThreadPoolExecutor | None = None
_executor_lock = threading.Lock()


def _thread_count() -> int:
    """The CPUs this process may run on (its affinity where the OS tells), at most MAX_THREADS."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, MAX_THREADS))


def _row_slices(length: int) -> list[tuple[int, int]]:
    """(offset, length) of the slices a column of `length` rows is converted in."""
    count = min(_thread_count(), length // SLICE_ROWS)
    if count < 2:
        return [(0, length)]
    bounds = [length * i // count for i in range(count + 1)]
    return [(start, stop - start) for start, stop in zip(bounds[:-1], bounds[1:])]


def _thread_pool() -> ThreadPoolExecutor:
    """The conversion threads, shared by every load of the process (started on first use)."""
    global _executor
    with _executor_lock:
        if _executor is None:
            _executor = ThreadPoolExecutor(MAX_THREADS, thread_name_prefix="alterflow-convert")
        return _executor


def convert_array(array: pa.Array | pa.ChunkedArray, old: DataType, new: DataType) -> tuple[pa.Array, list[int]]:
    """Convert one column: (the array of `new`'s Arrow type with NULL where a value failed,
    the 0-based rows that failed). ValueError when the type change is rejected."""
    family(old, new)  # reject before any work
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks() if array.num_chunks else pa.array([], type=array.type)
    slices = _row_slices(len(array))
    if len(slices) == 1:
        return _convert_slice(array, old, new)
    parts = list(_thread_pool().map(lambda part: _convert_slice(array.slice(*part), old, new), slices))
    values = pa.concat_arrays([converted for converted, _ in parts])
    rows = [start + row for (start, _), (_, failed) in zip(slices, parts) for row in failed]
    return values, rows


def default_array(column: Column, length: int) -> pa.Array:
    """`length` rows of the column's initial default (NULL without one)."""
    value = column.initial_default
    return pa.array(_arrow_values([value] * length, column.type), type=to_arrow(column.type))


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
