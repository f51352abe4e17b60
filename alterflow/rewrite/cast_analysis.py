"""EXPLAIN ANALYZE ALTER (docs/migrations.md, "What --analyze checks"): every check the rewrite's
validation will run, evaluated on today's data by reading and converting exactly what the rewrite
would read (the table's live files, merged by key, under the current version) and writing nothing.

The checks come from `alterflow.rewrite.validation_checks`, the list the validation's Great
Expectations suites are generated from. Those read from the data are counted here with up to
SAMPLES rows each and their primary key: failed casts (per converted column that can fail), NULLs
in a NOT NULL column after the conversion (a NULL already there, or a failed cast made NULL: with
`on_cast_error = quarantine` that row goes to quarantine instead, and is not counted), and
primary-key values made equal by the conversion. The others hold by the rewrite's construction.

Both engines count with the conversion they rewrite with: `local` with `arrow_convert` (one
origin tablet in memory at a time, as the local rewrite holds it), `spark` with `convert_frame`
on the configured master. The NULL count rides on the same pass as the conversion: a column's
null count, read from the converted array (local) or summed in the same aggregate (spark).
"""

from __future__ import annotations

import pathlib
import time
from collections import defaultdict
from dataclasses import dataclass, field

from alterflow.catalog.catalog import TableSnapshot
from alterflow.catalog.schema import SchemaVersion
from alterflow.catalog.states import Engine, OnCastError
from alterflow.rewrite.validation_checks import BY_CONSTRUCTION, CheckKind, ValidationCheck, validation_checks
from alterflow.values.cast_rules import can_fail
from alterflow.values.types import format_value

SAMPLES = 5
NULL_TEXT = "NULL"  # a sample's value when the original value is NULL


@dataclass(frozen=True)
class FailedValue:
    key: dict  # primary-key column (origin name) -> value as text; empty without a primary key
    value: str  # the original value as text (NULL_TEXT for NULL)

    def as_json(self) -> dict:
        return {"key": self.key, "value": self.value} if self.key else {"value": self.value}


@dataclass
class ColumnFailures:
    count: int = 0
    samples: list[FailedValue] = field(default_factory=list)

    def add(self, count: int, samples) -> None:
        """`count` more; samples (an iterable of FailedValue, read lazily) up to SAMPLES."""
        self.count += count
        for sample in samples:
            if len(self.samples) >= SAMPLES:
                break
            self.samples.append(sample)


@dataclass
class CheckOutcome:
    """One validation check evaluated on today's data: how many rows (values, for failed casts)
    would fail it, with samples; or, for a check no data can fail, why it holds."""

    check: ValidationCheck
    found: ColumnFailures = field(default_factory=ColumnFailures)
    holds_because: str | None = None  # set for a check that holds by construction

    @property
    def count(self) -> int:
        return self.found.count

    def as_json(self) -> dict:
        shown = {"check": self.check.kind.value, "description": self.check.description(), "count": self.count}
        if self.check.columns:
            shown["columns"] = list(self.check.columns)
        shown["samples"] = [s.as_json() for s in self.found.samples]
        if self.holds_because:
            shown["holds_because"] = self.holds_because
        return shown


@dataclass(frozen=True)
class CastAnalysis:
    engine: Engine
    rows: int  # rows read, after merging by key
    seconds: float  # the analysis's own scan
    failures: dict[int, ColumnFailures]  # NEW column id -> failed casts, for every column that can fail
    checks: tuple[CheckOutcome, ...] = ()  # every check validation runs, in its order

    def failing(self) -> list[CheckOutcome]:
        """The checks today's data would fail."""
        return [c for c in self.checks if c.count]


def failing_column_ids(old: SchemaVersion, new: SchemaVersion) -> list[int]:
    """NEW's columns whose conversion from OLD can fail (ids), in NEW's order."""
    return [c.id for c in new.columns if (o := old.column_by_id(c.id)) is not None and can_fail(o.type, c.type)]


def retyped_key(old: SchemaVersion, new: SchemaVersion) -> bool:
    """Whether the conversion changes the type of a primary-key column (only then can it make two
    keys equal: the rows are read merged by key)."""
    return any((o := old.column_by_id(cid)) is None or o.type != new.column_by_id(cid).type for cid in new.primary_key)


def _outcomes(checks: tuple[ValidationCheck, ...]) -> dict[ValidationCheck, CheckOutcome]:
    """An empty outcome per check (the caller counts), the by-construction ones with their reason."""
    outcomes = {}
    for check in checks:
        outcome = CheckOutcome(check, holds_because=BY_CONSTRUCTION.get(check.kind))
        if not check.on_data and outcome.holds_because is None:
            raise ValueError(f"validation check {check.kind} is neither read from the data nor holds by construction")
        outcomes[check] = outcome
    return outcomes


def _sum_failed_casts(outcomes: dict[ValidationCheck, CheckOutcome], failures: dict[int, ColumnFailures]) -> None:
    for outcome in outcomes.values():
        if outcome.check.kind is CheckKind.FAILED_CASTS:
            outcome.found.add(sum(f.count for f in failures.values()), (s for f in failures.values() for s in f.samples))


def _text(value: object, version: SchemaVersion, name: str) -> str:
    if value is None:
        return NULL_TEXT
    return value if isinstance(value, str) else format_value(value, version.column(name).type)


def analyze_local(
    warehouse: pathlib.Path, snapshot: TableSnapshot, old: SchemaVersion, new: SchemaVersion, on_cast_error: OnCastError = OnCastError.FAIL
) -> CastAnalysis:
    """Count with Arrow, one origin tablet at a time (the local rewrite's unit)."""
    import numpy as np

    from alterflow.read.arrow_read import read_snapshot_arrow

    started = time.monotonic()
    checks = validation_checks(new, on_cast_error)
    checked = failing_column_ids(old, new)
    failures = {cid: ColumnFailures() for cid in checked}
    outcomes = _outcomes(checks)
    not_null = [c for c in checks if c.kind is CheckKind.NOT_NULL]
    unique = next((c for c in checks if c.kind is CheckKind.UNIQUE_KEY), None) if retyped_key(old, new) else None
    quarantining = on_cast_error == OnCastError.QUARANTINE
    key_names = old.names(old.primary_key)
    by_tablet: dict[int, list] = defaultdict(list)
    for data_file in snapshot.files:
        by_tablet[data_file.tablet_id].append(data_file)
    rows = 0
    needed = {*old.primary_key, *checked, *(c.column_ids[0] for c in not_null), *new.primary_key}
    wanted = [c.name for c in old.columns if c.id in needed] or None  # in the version's order
    keys = _KeyCollector(old, new, unique) if unique else None
    for tablet_id in sorted(by_tablet):
        tablet = TableSnapshot(snapshot.table, old, tuple(by_tablet[tablet_id]), snapshot.versions, snapshot.commit_seqs)
        origin = read_snapshot_arrow(warehouse, tablet, old, columns=wanted)
        rows += origin.num_rows
        converted = _LocalTablet(origin, old, new, key_names)
        dropped = np.zeros(origin.num_rows, dtype=bool) if quarantining else None
        for cid in checked:
            failed_rows = converted.failed_rows(cid)
            failures[cid].add(len(failed_rows), (converted.sample(row, cid) for row in failed_rows))
            if dropped is not None and failed_rows:
                dropped[failed_rows] = True  # the row goes to quarantine, not to the shadow index
        for check in not_null:
            null_rows = converted.null_rows(check.column_ids[0], dropped)
            outcomes[check].found.add(len(null_rows), (converted.sample(row, check.column_ids[0]) for row in null_rows))
        if keys is not None:
            keys.add(converted, dropped)
    _sum_failed_casts(outcomes, failures)
    if keys is not None:
        keys.count_into(outcomes[unique].found)
    return CastAnalysis(Engine.LOCAL, rows, time.monotonic() - started, failures, tuple(outcomes.values()))


class _LocalTablet:
    """One origin tablet's rows and their columns converted to NEW on demand, each once."""

    def __init__(self, origin, old: SchemaVersion, new: SchemaVersion, key_names: list[str]):
        self.origin, self.old, self.new, self.key_names = origin, old, new, key_names
        self._converted: dict[int, tuple] = {}

    def converted(self, cid: int):
        """(NEW column `cid`'s values, rows whose cast failed)."""
        from alterflow.conversion.arrow_convert import default_array
        from alterflow.values.arrow_columns import convert_array

        if cid not in self._converted:
            source, target = self.old.column_by_id(cid), self.new.column_by_id(cid)
            if source is None:
                self._converted[cid] = (default_array(target, self.origin.num_rows), [])
            elif source.type == target.type:
                self._converted[cid] = (self.origin.column(source.name), [])
            else:
                self._converted[cid] = convert_array(self.origin.column(source.name), source.type, target.type)
        return self._converted[cid]

    def failed_rows(self, cid: int) -> list[int]:
        return self.converted(cid)[1]

    def null_rows(self, cid: int, dropped) -> list[int]:
        """The rows where NEW column `cid` is NULL after the conversion, but those in `dropped`."""
        import numpy as np
        import pyarrow.compute as pc

        values = self.converted(cid)[0]
        if values.null_count == 0:  # Arrow keeps the count: most columns cost nothing more
            return []
        mask = np.asarray(pc.is_null(values).to_numpy(zero_copy_only=False), dtype=bool)
        if dropped is not None:
            mask &= ~dropped
        return np.flatnonzero(mask).tolist()

    def key(self, row: int) -> dict:
        return {name: _text(self.origin.column(name)[row].as_py(), self.old, name) for name in self.key_names}

    def sample(self, row: int, cid: int) -> FailedValue:
        """Row `row` with its key and column `cid`'s original value."""
        source = self.old.column_by_id(cid)
        value = NULL_TEXT if source is None else _text(self.origin.column(source.name)[row].as_py(), self.old, source.name)
        return FailedValue(self.key(row), value)


class _KeyCollector:
    """The converted rows' primary-key values over every tablet, for the uniqueness check."""

    def __init__(self, old: SchemaVersion, new: SchemaVersion, check: ValidationCheck):
        self.old, self.new, self.check = old, new, check
        self.parts = []

    def add(self, tablet: _LocalTablet, dropped) -> None:
        import pyarrow as pa

        columns = {name: tablet.converted(cid)[0] for cid, name in zip(self.check.column_ids, self.check.columns)}
        columns.update({f"af$origin_{name}": tablet.origin.column(name) for name in tablet.key_names})
        part = pa.table(columns)
        if dropped is not None and dropped.any():
            part = part.filter(pa.array(~dropped))
        self.parts.append(part.drop_null() if part.num_rows else part)

    def count_into(self, found: ColumnFailures) -> None:
        """Rows whose converted key another converted row has too (as Great Expectations counts
        them); samples: the row's key before the conversion, and the key it converts to."""
        import pyarrow as pa

        if not self.parts:
            return
        rows = pa.concat_tables(self.parts)
        names = list(self.check.columns)
        groups = rows.group_by(names).aggregate([([], "count_all")])
        repeated = groups.filter(pa.compute.greater(groups["count_all"], 1))
        if repeated.num_rows == 0:
            return
        found.count += sum(repeated["count_all"].to_pylist())
        clashing = rows.join(repeated, keys=names, join_type="inner").slice(0, SAMPLES).to_pylist()
        for row in clashing:
            origin = {k.removeprefix("af$origin_"): v for k, v in row.items() if k.startswith("af$origin_")}
            key = {name: _text(value, self.old, name) for name, value in origin.items()}
            value = ", ".join(_text(row[name], self.new, name) for name in names)
            found.samples.append(FailedValue(key, value))


def analyze_spark(
    spark,
    warehouse: pathlib.Path,
    snapshot: TableSnapshot,
    old: SchemaVersion,
    new: SchemaVersion,
    on_cast_error: OnCastError = OnCastError.FAIL,
) -> CastAnalysis:
    """Count with Spark: one aggregate over the converted rows (failed casts and NULLs alike), then
    one small query per check with failures for its samples."""
    from pyspark.sql import functions as F

    from alterflow.conversion.spark_convert import convert_frame, failure_column
    from alterflow.read.evolved_read import read_snapshot

    started = time.monotonic()
    checks = validation_checks(new, on_cast_error)
    checked = failing_column_ids(old, new)
    outcomes = _outcomes(checks)
    not_null = [c for c in checks if c.kind is CheckKind.NOT_NULL]
    unique = next((c for c in checks if c.kind is CheckKind.UNIQUE_KEY), None) if retyped_key(old, new) else None
    key_names = old.names(old.primary_key)
    origin = read_snapshot(spark, warehouse, snapshot, old)
    read_ids = [*checked, *(c.column_ids[0] for c in not_null if c.column_ids[0] not in checked and old.column_by_id(c.column_ids[0]))]
    sources = {cid: f"af$source_{cid}" for cid in read_ids}
    keys = {name: f"af$key_{i}" for i, name in enumerate(key_names)}
    extras = [F.col(f"`{old.column_by_id(cid).name}`").cast("string").alias(alias) for cid, alias in sources.items()]
    extras += [F.col(f"`{name}`").cast("string").alias(alias) for name, alias in keys.items()]
    converted, _flags = convert_frame(origin.select("*", *extras), old, new, OnCastError.FAIL)
    kept = F.lit(True)
    if on_cast_error == OnCastError.QUARANTINE:  # a row with a failed cast goes to quarantine
        for cid in checked:
            kept = kept & ~F.col(failure_column(cid))
    nulls = {check: F.col(f"`{check.columns[0]}`").isNull() & kept for check in not_null}
    counts = converted.agg(
        F.count(F.lit(1)).alias("rows"),
        *[F.sum(F.col(failure_column(cid)).cast("long")).alias(f"failed_{cid}") for cid in checked],
        *[F.sum(condition.cast("long")).alias(f"null_{check.column_ids[0]}") for check, condition in nulls.items()],
    ).collect()[0]

    def samples(condition, cid: int | None) -> list[FailedValue]:
        value = F.col(sources[cid]) if cid in sources else F.lit(None).cast("string")
        picked = converted.where(condition).select(value.alias("af$value"), *keys.values()).limit(SAMPLES).collect()
        return [FailedValue({name: row[alias] for name, alias in keys.items()}, row["af$value"] or NULL_TEXT) for row in picked]

    failures = {}
    for cid in checked:
        found = ColumnFailures(int(counts[f"failed_{cid}"] or 0))
        if found.count:
            found.samples = samples(F.col(failure_column(cid)), cid)
        failures[cid] = found
    for check, condition in nulls.items():
        found = outcomes[check].found
        found.count = int(counts[f"null_{check.column_ids[0]}"] or 0)
        if found.count:
            found.samples = samples(condition, check.column_ids[0])
    _sum_failed_casts(outcomes, failures)
    if unique is not None:
        _spark_duplicate_keys(converted.where(kept), unique, keys, outcomes[unique].found)
    return CastAnalysis(Engine.SPARK, int(counts["rows"]), time.monotonic() - started, failures, tuple(outcomes.values()))


def _spark_duplicate_keys(converted, check: ValidationCheck, keys: dict[str, str], found: ColumnFailures) -> None:
    from pyspark.sql import functions as F

    names = [f"`{name}`" for name in check.columns]
    present = converted
    for name in names:  # Great Expectations leaves a NULL key out (the NOT NULL check finds it)
        present = present.where(F.col(name).isNotNull())
    repeated = present.groupBy(*names).count().where(F.col("count") > 1)
    found.count = int(repeated.agg(F.sum("count")).collect()[0][0] or 0)
    if found.count:
        picked = present.join(repeated.select(*names), on=list(check.columns)).limit(SAMPLES).collect()
        for row in picked:
            value = ", ".join(str(row[name]) for name in check.columns)
            found.samples.append(FailedValue({name: row[alias] for name, alias in keys.items()}, value))
