"""The local engine's conversion of one origin tablet (docs/heavyweight.md, "Engines: Spark or in-process"): in this process, with
Arrow, no Spark.

The tablet's rows are read under the origin version (`arrow_read`: keys merged, the latest commit
wins), converted by `arrow_convert` (the rules dual write uses, held to Spark's value by value in
tests/conversion/test_convert_agreement.py), split by the new distribution, sorted by the new sort
key and staged as one Parquet file per bucket, in the same staging layout the Spark conversion
writes (`<staging>/af$bucket=<n>/part-0.parquet`), so the converter commits both alike.
"""

from __future__ import annotations

import pathlib
from dataclasses import dataclass

import pyarrow as pa

from alterflow.catalog.catalog import TableSnapshot
from alterflow.catalog.schema import SchemaVersion
from alterflow.catalog.states import OnCastError
from alterflow.conversion.arrow_convert import convert_arrow
from alterflow.load.tablet_buffers import sorted_rows
from alterflow.read.arrow_read import read_snapshot_arrow
from alterflow.store.quarantine import QuarantineTarget, split_quarantined
from alterflow.store.tablets import tablet_rows
from alterflow.values.types import format_value

BUCKET_COLUMN = "af$bucket"
QUARANTINE_DIR = "quarantine"  # a tablet's quarantined rows, staged beside its converted ones


@dataclass(frozen=True)
class StagedTablet:
    """A tablet's rows converted in memory, before any file is written: the writes go straight to
    their final names in the commit (alterflow.rewrite.tablet_conversion), on a disk as in a bucket."""

    rows_in: int  # rows read under the origin version
    failed: int  # values that could not be converted
    samples: list  # up to `samples` [column, original value as text, {origin key column: value as text}]
    buckets: list[tuple[int, pa.Table]]  # (bucket of the new distribution, its rows sorted by the new sort key)
    quarantined: pa.Table | None = None  # rows for the quarantine table instead (on_cast_error = quarantine)


def _text(value: object, version: SchemaVersion, column: str) -> str:
    """An original value as text, as Spark's CAST(... AS STRING) shows it in the Spark engine's samples."""
    if isinstance(value, str):
        return value
    return format_value(value, version.column(column).type)


def _key(origin: pa.Table, old: SchemaVersion, row: int) -> dict:
    """The primary key of `origin`'s row `row` as {origin column: value as text} ({} without one)."""
    return {name: _text(origin.column(name)[row].as_py(), old, name) for name in old.names(old.primary_key)}


def stage_tablet(
    warehouse: pathlib.Path,
    snapshot: TableSnapshot,
    old: SchemaVersion,
    new: SchemaVersion,
    samples: int,
    quarantine: QuarantineTarget | None = None,
) -> StagedTablet:
    """Convert the rows of `snapshot` (one origin tablet's files) from `old` to `new`, split into
    the new distribution's buckets; with `quarantine`, rows with a value that fails are kept,
    unconverted, for the quarantine table instead."""
    keyed = bool(old.primary_key)
    origin = read_snapshot_arrow(warehouse, snapshot, old, keep_txn=keyed)
    # Failed values are NULL in the result whichever `on_cast_error`; "fail" also lists them, for
    # the samples (the job's validation then refuses them when it is "fail").
    result = convert_arrow(origin, old, new, OnCastError.QUARANTINE if quarantine else OnCastError.FAIL, max_failures=samples)
    sources = {c.id: c.name for c in old.columns}
    found = []
    for failure in result.failures:
        source = sources[new.column(failure.column).id]
        found.append([failure.column, _text(failure.value, old, source), _key(origin, old, failure.row)])
    converted, quarantined = result.table, None
    if quarantine is not None:
        converted, quarantined = split_quarantined(origin, converted, old, new, result.failed_rows, quarantine)
        for column, rows in result.failed_rows.items():
            source = sources[new.column(column).id]
            values = origin.column(source).take(rows[:samples]).to_pylist()
            found += [[column, _text(v, old, source), _key(origin, old, row)] for v, row in zip(values, rows)]
        found = found[:samples]
    # Every field optional, as Spark writes them: a NULL in a column that becomes NOT NULL is the
    # validation's to find and name, like the Spark engine's.
    converted = pa.Table.from_arrays(converted.columns, schema=pa.schema([f.with_nullable(True) for f in converted.schema]))
    buckets = []
    if converted.num_rows:
        for piece in tablet_rows(converted, new).slices(converted):
            _partition, bucket = piece.key
            buckets.append((bucket, sorted_rows(piece.rows, new)))
    return StagedTablet(origin.num_rows, result.failed, found, sorted(buckets, key=lambda b: b[0]), quarantined)
