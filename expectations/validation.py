"""Running the suites of `expectations.schema_change` against a job's shadow index.

Returns a `ValidationReport`; its `message` lists every failed expectation with sample values, the
text a cancelled job shows in Msg.
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
from alterflow.expectations import schema_change
from alterflow.read.arrow_read import read_snapshot_arrow
from alterflow.read.evolved_read import read_snapshot
from alterflow.store.layout import FileSource, file_source

os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")
log = logging.getLogger(__name__)
_context_lock = threading.Lock()
_context = None
_batches: dict[str, object] = {}  # "pandas" / "spark" -> the whole-dataframe batch definition


@dataclass
class ValidationReport:
    success: bool
    failures: list[str] = field(default_factory=list)
    expectations: int = 0

    @property
    def message(self) -> str:
        return "validation failed: " + "; ".join(self.failures) if self.failures else "validation passed"


def _gx_context():
    """One ephemeral Great Expectations context per process."""
    global _context
    with _context_lock:
        if _context is None:
            import great_expectations as gx
            from great_expectations.data_context.types.base import ProgressBarsConfig

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


def _run(suite, frame, engine: str, report: ValidationReport, samples=None) -> None:
    if suite is None:
        return
    result = _batch_definition(engine).get_batch(batch_parameters={"dataframe": frame}).validate(suite, result_format="SUMMARY")
    report.expectations += len(result.results)
    for item in result.results:
        if item.success:
            continue
        config = item.expectation_config
        target = (
            config.kwargs.get("column")
            or config.kwargs.get("column_list")
            or (f"{config.kwargs.get('column_A')} = {config.kwargs.get('column_B')}" if "column_A" in config.kwargs else "table")
        )
        details = item.result or {}
        count = details.get("unexpected_count")
        observed = details.get("observed_value")
        text = f"{config.type}({target})"
        if count is not None:
            text += f": {count} unexpected"
        elif observed is not None:
            text += f": observed {observed}"
        example = samples(config) if samples else details.get("partial_unexpected_list")
        if example:
            text += f", e.g. {list(example)[:5]}"
        report.failures.append(text)


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


def validate_job(spark, catalog: Catalog, warehouse: pathlib.Path, job_id: int) -> ValidationReport:
    """Validate the job's shadow index: with Spark, or with `spark` None on pandas (the local
    engine's jobs: the same suites, read by `arrow_read`)."""
    _gx_context()  # suites can only be built once a context exists
    heavy = HeavyJobs(catalog)
    job = heavy.job(job_id)
    new = heavy.shadow_version(job)
    on_cast_error = job.properties.on_cast_error
    report = ValidationReport(success=True)

    converted = heavy.converted(job_id)
    # Every origin tablet holding data below the boundary must have been converted (tablets made
    # later by loads during the job hold only dual-written rows, already in the shadow index).
    with_data = set(heavy.origin_files_below_boundary(job)) | set(converted)
    # rows_out: the rows the tablet wrote to the shadow index plus those it quarantined
    # (on_cast_error = quarantine): together they must be every row it read.
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
    _run(
        schema_change.tablet_counts_suite(new, on_cast_error),
        counts,
        "pandas",
        report,
        samples=lambda config: cast_samples if config.kwargs.get("column") == "failed_casts" else None,
    )

    key_names = new.names(new.primary_key)
    shadow = _shadow_snapshot(catalog, job, new, only_converted=False)
    converted_only = _shadow_snapshot(catalog, job, new, only_converted=True)
    if spark is None:  # the local engine's job: the same suites on pandas
        shadow_rows = read_snapshot_arrow(warehouse, shadow, new).to_pandas()

        def null_samples(config):
            column = config.kwargs.get("column")
            if not key_names or column is None:
                return None
            return shadow_rows[shadow_rows[column].isna()][key_names].head(5).to_dict("records")

        _run(schema_change.shadow_rows_suite(new, on_cast_error), shadow_rows, "pandas", report, samples=null_samples)
        converted_rows = read_snapshot_arrow(warehouse, converted_only, new, merge_keys=False, columns=key_names).to_pandas()
        _run(schema_change.converted_keys_suite(new, on_cast_error), converted_rows, "pandas", report)
    else:
        shadow_rows = read_snapshot(spark, warehouse, shadow, new)

        def null_samples(config):
            column = config.kwargs.get("column")
            if not key_names or column is None:
                return None
            rows = shadow_rows.where(shadow_rows[f"`{column}`"].isNull()).select(*[f"`{k}`" for k in key_names]).limit(5).collect()
            return [dict(zip(key_names, r)) for r in rows]

        _run(schema_change.shadow_rows_suite(new, on_cast_error), shadow_rows, "spark", report, samples=null_samples)
        converted_rows = read_snapshot(spark, warehouse, converted_only, new, merge_keys=False)
        _run(schema_change.converted_keys_suite(new, on_cast_error), converted_rows, "spark", report)

    if new.sort_key:
        sort_names = new.names(new.sort_key)
        converted_txns = {t.txn_id for t in converted.values()}
        files = [f for f in _shadow_snapshot(catalog, job, new, only_converted=True).files if f.txn_id in converted_txns]
        order = pd.DataFrame(
            [(f.path, _file_in_order(file_source(warehouse, f.path), sort_names)) for f in files],
            columns=["file", "in_order"],
        )
        # .loc with a bool mask: on an empty table (no file) `order[mask]` would read the empty
        # object-typed mask as a list of column names and drop the columns.
        unordered = order.loc[~order["in_order"].astype(bool), "file"].tolist()
        _run(schema_change.sort_order_suite(new, on_cast_error), order, "pandas", report, samples=lambda _config: unordered)
    report.success = not report.failures
    return report
