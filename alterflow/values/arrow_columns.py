"""A column of Arrow values cast from one SQL type to another: `convert_array` gives the values of
the new type with NULL where a value failed, and the rows that failed, exactly as
`cast_rules.value_converter` applied value by value would (`convert_values`, the reference).

Every family is converted by vectorised kernels (`arrow_text_kernels`, `arrow_number_kernels`)
that reproduce the reference exactly; rows a kernel cannot decide exactly (rare: see those
modules) and the one family with no kernel, FLOAT / DOUBLE -> text (Java's Double.toString), go
through the reference value by value. Long columns are cut in row slices converted on a few
threads. tests/values/test_arrow_kernels.py holds the kernels to the reference.

A table's conversion between two schema versions (`alterflow.conversion.arrow_convert`) applies
this to each converted column. No pyspark here.
"""

from __future__ import annotations

import decimal
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from alterflow.values import arrow_number_kernels, arrow_text_kernels
from alterflow.values.arrow_kernels import Outcome
from alterflow.values.cast_rules import ConversionFailed, family, value_converter
from alterflow.values.types import DataType, to_arrow

__all__ = ["arrow_values", "convert_array", "convert_values"]


def arrow_values(values: list, t: DataType) -> list:
    """Python values of `t` as pyarrow takes them for `to_arrow(t)` (LARGEINT: a Decimal)."""
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
    return pa.array(arrow_values(values, new), type=to_arrow(new)), rows


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
