"""EXPLAIN ANALYZE ALTER (SPEC §7, "Safety beyond the anchors"): the values a rewrite would fail
to convert, found by reading and converting exactly what the rewrite would read (the table's live
files, merged by key, under the current version) and writing nothing.

Both engines count with the conversion they rewrite with: `local` with `arrow_convert` (one
origin tablet in memory at a time, as the local rewrite holds it), `spark` with `convert_frame`
on the configured master. Each gives, per converted column that can fail, how many non-NULL
values would not convert and up to SAMPLES of them with the row's primary key.
"""

from __future__ import annotations

import pathlib
import time
from collections import defaultdict
from dataclasses import dataclass, field

from alterflow.catalog.catalog import TableSnapshot
from alterflow.catalog.schema import SchemaVersion
from alterflow.conversion.rules import can_fail
from alterflow.types import format_value

SAMPLES = 5


@dataclass(frozen=True)
class FailedValue:
    key: dict  # primary-key column (origin name) -> value as text; empty without a primary key
    value: str  # the original value as text

    def as_json(self) -> dict:
        return {"key": self.key, "value": self.value} if self.key else {"value": self.value}


@dataclass
class ColumnFailures:
    count: int = 0
    samples: list[FailedValue] = field(default_factory=list)


@dataclass(frozen=True)
class CastAnalysis:
    engine: str
    rows: int  # rows read, after merging by key
    seconds: float  # the analysis's own scan
    failures: dict[int, ColumnFailures]  # NEW column id -> failures, for every column that can fail


def failing_column_ids(old: SchemaVersion, new: SchemaVersion) -> list[int]:
    """NEW's columns whose conversion from OLD can fail (ids), in NEW's order."""
    return [c.id for c in new.columns if (o := old.column_by_id(c.id)) is not None and can_fail(o.type, c.type)]


def _text(value: object, version: SchemaVersion, name: str) -> str:
    return value if isinstance(value, str) else format_value(value, version.column(name).type)


def analyze_local(warehouse: pathlib.Path, snapshot: TableSnapshot, old: SchemaVersion, new: SchemaVersion) -> CastAnalysis:
    """Count with Arrow, one origin tablet at a time (the local rewrite's unit)."""
    from alterflow.conversion.arrow_convert import convert_array
    from alterflow.read.arrow_read import read_snapshot_arrow

    started = time.monotonic()
    checked = failing_column_ids(old, new)
    failures = {cid: ColumnFailures() for cid in checked}
    key_names = old.names(old.primary_key)
    by_tablet: dict[int, list] = defaultdict(list)
    for data_file in snapshot.files:
        by_tablet[data_file.tablet_id].append(data_file)
    rows = 0
    needed = {*old.primary_key, *checked}
    wanted = [c.name for c in old.columns if c.id in needed] or None  # in the version's order
    for tablet_id in sorted(by_tablet):
        tablet = TableSnapshot(snapshot.table, old, tuple(by_tablet[tablet_id]), snapshot.versions, snapshot.commit_seqs)
        origin = read_snapshot_arrow(warehouse, tablet, old, columns=wanted)
        rows += origin.num_rows
        for cid in checked:
            source = old.column_by_id(cid)
            column = origin.column(source.name)
            _converted, failed_rows = convert_array(column, source.type, new.column_by_id(cid).type)
            found = failures[cid]
            found.count += len(failed_rows)
            for row in failed_rows[: SAMPLES - len(found.samples)]:
                key = {name: _text(origin.column(name)[row].as_py(), old, name) for name in key_names}
                found.samples.append(FailedValue(key, _text(column[row].as_py(), old, source.name)))
    return CastAnalysis("local", rows, time.monotonic() - started, failures)


def analyze_spark(spark, warehouse: pathlib.Path, snapshot: TableSnapshot, old: SchemaVersion, new: SchemaVersion) -> CastAnalysis:
    """Count with Spark: one aggregate over the converted rows, then one small query per column
    with failures for its samples."""
    from pyspark.sql import functions as F

    from alterflow.conversion.spark_convert import convert_frame, failure_column
    from alterflow.read.evolved_read import read_snapshot

    started = time.monotonic()
    checked = failing_column_ids(old, new)
    key_names = old.names(old.primary_key)
    origin = read_snapshot(spark, warehouse, snapshot, old)
    sources = {cid: f"af$source_{cid}" for cid in checked}
    keys = {name: f"af$key_{i}" for i, name in enumerate(key_names)}
    extras = [F.col(f"`{old.column_by_id(cid).name}`").cast("string").alias(alias) for cid, alias in sources.items()]
    extras += [F.col(f"`{name}`").cast("string").alias(alias) for name, alias in keys.items()]
    converted, _flags = convert_frame(origin.select("*", *extras), old, new, "fail")
    counts = converted.agg(
        F.count(F.lit(1)).alias("rows"), *[F.sum(F.col(failure_column(cid)).cast("long")).alias(f"failed_{cid}") for cid in checked]
    ).collect()[0]
    failures = {}
    for cid in checked:
        found = ColumnFailures(int(counts[f"failed_{cid}"] or 0))
        if found.count:
            picked = converted.where(F.col(failure_column(cid))).select(sources[cid], *keys.values()).limit(SAMPLES).collect()
            found.samples = [FailedValue({name: row[alias] for name, alias in keys.items()}, row[sources[cid]]) for row in picked]
        failures[cid] = found
    return CastAnalysis("spark", int(counts["rows"]), time.monotonic() - started, failures)
