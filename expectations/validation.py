"""Running the suites of `expectations.schema_change` against a job's shadow index.

Returns a `ValidationReport`: the checks that failed (`CheckFailure`, counted from the data), and
its `message`, the one line a cancelled job shows in Msg, on the page, in the CLI and in the task
log, in the user's words ("3 of 10 values of v do not convert to INT, e.g. 'x' (id=2)"), never an
expectation's name.
"""

from __future__ import annotations

import logging
import os
import pathlib
import threading
from dataclasses import dataclass, field

import pandas as pd

from alterflow.catalog.catalog import Catalog, TableSnapshot
from alterflow.catalog.heavy_jobs import HeavyJobs
from alterflow.catalog.schema import SchemaVersion
from alterflow.expectations import quiet_great_expectations, schema_change
from alterflow.read.arrow_read import read_snapshot_arrow
from alterflow.read.evolved_read import read_snapshot
from alterflow.rewrite.cast_analysis import failing_column_ids
from alterflow.rewrite.validation_checks import CheckFailure, CheckKind, FailedSample, ValidationCheck, validation_checks
from alterflow.store.layout import FileSource, file_source

os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")
log = logging.getLogger(__name__)
_context_lock = threading.Lock()
_context = None
_batches: dict[str, object] = {}  # "pandas" / "spark" -> the whole-dataframe batch definition


@dataclass
class ValidationReport:
    checks: tuple[ValidationCheck, ...]  # every check the suites run, in order (an expectation's meta names its index)
    failed: list[CheckFailure] = field(default_factory=list)
    expectations: int = 0

    @property
    def success(self) -> bool:
        return not self.failed

    @property
    def message(self) -> str:
        return "validation failed: " + "; ".join(f.line() for f in self.failed) if self.failed else "validation passed"


def _gx_context():
    """One ephemeral Great Expectations context per process."""
    global _context
    with _context_lock:
        if _context is None:
            import great_expectations as gx
            from great_expectations.data_context.types.base import ProgressBarsConfig

            quiet_great_expectations()  # its modules set their own levels on import
            context = gx.get_context(mode="ephemeral")
            context.variables.progress_bars = ProgressBarsConfig(globally=False)
            _context = context
        return _context


def _batch_definition(engine: str):
    """The data source of `engine`, added on first use: GX's Spark source starts a SparkSession
    when it is added, which a job validated on pandas never needs."""
    context = _gx_context()
    with _context_lock:
        if engine not in _batches:
            sources = context.data_sources
            source = sources.add_pandas("alterflow_pandas") if engine == "pandas" else sources.add_spark("alterflow_spark")
            _batches[engine] = source.add_dataframe_asset("frame").add_batch_definition_whole_dataframe("whole")
        return _batches[engine]


def _run(suite, frame, engine: str, report: ValidationReport, samples=None, counted=None) -> None:
    """Validate `frame` with `suite`; each failed expectation becomes its check's `CheckFailure`:
    `counted(check)` where given, else GX's `unexpected_count` of `element_count`, with
    `samples(check)` (FailedSample) or GX's own samples."""
    if suite is None:
        return
    result = _batch_definition(engine).get_batch(batch_parameters={"dataframe": frame}).validate(suite, result_format="SUMMARY")
    report.expectations += len(result.results)
    for item in result.results:
        if item.success:
            continue
        check = report.checks[item.expectation_config.meta["check"]]
        if counted is not None and (failure := counted(check)) is not None:
            report.failed.append(failure)
            continue
        details = item.result or {}
        found = samples(check) if samples else None
        if found is None:
            found = [_key_sample(check, value) for value in details.get("partial_unexpected_list") or []]
        count, of = int(details.get("unexpected_count") or 0), int(details.get("element_count") or 0)
        report.failed.append(CheckFailure(check, count, of, tuple(found)))


def _key_sample(check: ValidationCheck, value) -> FailedSample:
    """A sample GX gives for a check over key columns: a value, or a {column: value} mapping."""
    key = value if isinstance(value, dict) else dict(zip(check.columns, [value]))
    return FailedSample({k: str(v) for k, v in key.items()})


def _shadow_snapshot(catalog: Catalog, job, new: SchemaVersion, only_converted: bool) -> TableSnapshot:
    snapshot = catalog.index_snapshot(job.table_id, job.shadow_index_id, new.version)
    if only_converted:
        converted_txns = {t.txn_id for t in HeavyJobs(catalog).converted(job.id).values()}
        snapshot = TableSnapshot(
            snapshot.table,
            snapshot.current,
            tuple(f for f in snapshot.files if f.txn_id in converted_txns),
            snapshot.versions,
            snapshot.commit_seqs,
        )
    return snapshot


def _file_in_order(source: FileSource, names: list[str]) -> bool:
    """pyarrow's sort is stable, so a file is in order exactly when sorting it changes nothing
    (ascending, NULLs first: Spark's order, and `tablet_buffers.sorted_rows`')."""
    with source.parquet() as parquet:
        table = parquet.read(columns=names)
    return table.num_rows < 2 or table.equals(table.sort_by([(n, "ascending", "at_start") for n in names]))


def _cast_sample(sample) -> FailedSample:
    """A converted tablet's sample: [column, value, {key column: value}] ([column, value] when
    recorded before keys were)."""
    column, value, *key = sample
    return FailedSample(key[0] if key else {}, "NULL" if value is None else str(value), column)


def _check_tablet_counts(heavy: HeavyJobs, job, new: SchemaVersion, report: ValidationReport) -> None:
    """Every origin tablet holding data below the boundary was converted, wrote (or quarantined)
    every row it read, and (on_cast_error = fail) lost no value to a failed cast."""
    converted = heavy.converted(job.id)
    # Tablets made later by loads during the job hold only dual-written rows, already in the shadow index.
    with_data = set(heavy.origin_files_below_boundary(job)) | set(converted)
    # rows_out: the rows the tablet wrote to the shadow index plus those it quarantined.
    counts = pd.DataFrame(
        [
            (t, converted[t].rows_in, converted[t].rows_out + converted[t].quarantined, converted[t].failed_casts)
            if t in converted
            else (t, None, None, None)
            for t in sorted(with_data)
        ],
        columns=["origin_tablet", "rows_in", "rows_out", "failed_casts"],
    )
    # In a stable order: which of a tablet's failed values each engine finds first differs.
    cast_samples = sorted((s for t in converted.values() for s in t.samples), key=lambda s: [str(v) for v in s])
    old = heavy.catalog.schema_version(job.table_id, job.from_version)
    converting = tuple((new.column_by_id(cid).name, new.column_by_id(cid).type.sql()) for cid in failing_column_ids(old, new))

    def counted(check: ValidationCheck) -> CheckFailure | None:
        if check.kind is not CheckKind.FAILED_CASTS:
            return None
        failed, read = sum(t.failed_casts for t in converted.values()), sum(t.rows_in for t in converted.values())
        return CheckFailure(check, failed, read, tuple(_cast_sample(s) for s in cast_samples), converting)

    _run(schema_change.tablet_counts_suite(new, job.properties.on_cast_error), counts, "pandas", report, counted=counted)


def _check_rows(spark, catalog: Catalog, warehouse: pathlib.Path, job, new: SchemaVersion, report: ValidationReport) -> None:
    """NOT NULL columns hold no NULL in the shadow index as readers will see it; the converted
    rows' primary key is unique. With Spark, or on pandas (`spark` None: the local engine's jobs)."""
    on_cast_error = job.properties.on_cast_error
    key_names = new.names(new.primary_key)
    shadow = _shadow_snapshot(catalog, job, new, only_converted=False)
    converted_only = _shadow_snapshot(catalog, job, new, only_converted=True)
    if spark is None:
        shadow_rows = read_snapshot_arrow(warehouse, shadow, new).to_pandas()

        def null_keys(check: ValidationCheck) -> list[dict]:
            return shadow_rows[shadow_rows[check.columns[0]].isna()][key_names].head(5).to_dict("records")

        engine = "pandas"
    else:
        shadow_rows, engine = read_snapshot(spark, warehouse, shadow, new), "spark"

        def null_keys(check: ValidationCheck) -> list[dict]:
            rows = shadow_rows.where(shadow_rows[f"`{check.columns[0]}`"].isNull()).select(*[f"`{k}`" for k in key_names]).limit(5)
            return [dict(zip(key_names, r)) for r in rows.collect()]

    def null_samples(check: ValidationCheck) -> list[FailedSample]:
        return [FailedSample({k: str(v) for k, v in key.items()}) for key in null_keys(check)] if key_names else []

    _run(schema_change.shadow_rows_suite(new, on_cast_error), shadow_rows, engine, report, samples=null_samples)
    if spark is None:
        converted_rows = read_snapshot_arrow(warehouse, converted_only, new, merge_keys=False, columns=key_names).to_pandas()
    else:
        converted_rows = read_snapshot(spark, warehouse, converted_only, new, merge_keys=False)
    _run(schema_change.converted_keys_suite(new, on_cast_error), converted_rows, engine, report)


def _check_sort_order(heavy: HeavyJobs, warehouse: pathlib.Path, job, new: SchemaVersion, report: ValidationReport) -> None:
    """Each converted file is in the new sort key's order."""
    sort_names = new.names(new.sort_key)
    converted_txns = {t.txn_id for t in heavy.converted(job.id).values()}
    files = [f for f in _shadow_snapshot(heavy.catalog, job, new, only_converted=True).files if f.txn_id in converted_txns]
    order = pd.DataFrame(
        [(f.path, _file_in_order(file_source(warehouse, f.path), sort_names)) for f in files],
        columns=["file", "in_order"],
    )
    # .loc with a bool mask: on an empty table (no file) `order[mask]` would read the empty
    # object-typed mask as a list of column names and drop the columns.
    unordered = order.loc[~order["in_order"].astype(bool), "file"].tolist()
    samples = [FailedSample({}, path) for path in unordered]
    _run(schema_change.sort_order_suite(new, job.properties.on_cast_error), order, "pandas", report, samples=lambda _check: samples)


def validate_job(spark, catalog: Catalog, warehouse: pathlib.Path, job_id: int) -> ValidationReport:
    """Validate the job's shadow index: with Spark, or with `spark` None on pandas (the local
    engine's jobs: the same suites, read by `arrow_read`)."""
    _gx_context()  # suites can only be built once a context exists
    heavy = HeavyJobs(catalog)
    job = heavy.job(job_id)
    new = heavy.shadow_version(job)
    report = ValidationReport(validation_checks(new, job.properties.on_cast_error))
    _check_tablet_counts(heavy, job, new, report)
    _check_rows(spark, catalog, warehouse, job, new, report)
    if new.sort_key:
        _check_sort_order(heavy, warehouse, job, new, report)
    return report
