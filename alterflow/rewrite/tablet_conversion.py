"""RUNNING: every origin file committed below the boundary is converted into the shadow index, by
Spark or, for a small table, in this process (`engines`, `local_conversion`).

Each origin tablet is converted on its own and commits on its own: its rows are read under the
origin version (keys merged, latest commit wins), converted to the new version, re-bucketed by the
new distribution, sorted by the new sort key and written to a staging folder; then one catalog
transaction registers the files in their shadow tablets, moves them into place and records the
tablet as converted. A run that is killed resumes at the first tablet without that record, and a
tablet's rows are never written twice. Tablets convert in parallel (Spark jobs, or local
conversions, from a thread pool).

Each tablet records the rows it read and the values lost to a failed cast. A primary-key table's
rows are merged while read, so the conversion query counts them (observed metrics); any other
table's conversion reads every stored row, so they come from the files' footers: the origin
files' rows, and the NULLs written minus the NULLs read (`footer_counts`), which keeps the writing
query as lean as a copy. Only when some cast failed does a second query fetch sample values. The
local engine counts both while it converts.

On a warehouse in object storage Spark's tasks write the converted files through pyarrow in their
Python workers (`spark_object_writer`) into the tablet's staging folder there, the quarantined rows
come to this process as Arrow, and the commit copies each file to its final key on the store's side.
"""

from __future__ import annotations

import dataclasses
import logging
import pathlib
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.parquet as pq

from alterflow.bucketing import spark_bucket_expr
from alterflow.catalog.catalog import Catalog, NewFile, TableSnapshot
from alterflow.catalog.heavy_jobs import ConvertedTablet, HeavyJobs
from alterflow.catalog.schema import SchemaVersion, name_key
from alterflow.catalog.states import Engine, JobState, OnCastError
from alterflow.crash_points import crash_point
from alterflow.errors import AlterflowError
from alterflow.held_leases import JobLease, TransactionLease
from alterflow.object_store import ObjectStoreLocation
from alterflow.read.evolved_read import read_snapshot
from alterflow.rewrite.footer_counts import file_counts
from alterflow.rewrite.local_conversion import BUCKET_COLUMN, QUARANTINE_DIR, stage_tablet
from alterflow.rewrite.progress import ConversionProgress, TabletSize, count_text, sizes_of
from alterflow.store.layout import FileSource, absolute, conversion_staging_path, data_file_path, file_source
from alterflow.store.quarantine import COLUMN_COLUMN, JOB_COLUMN, REASON_COLUMN, QuarantineTarget, reason_text, register_and_write
from alterflow.store.quarantine_table import quarantine_target
from alterflow.store.tablets import write_parquet
from alterflow.store.warehouse_kinds import open_warehouse
from alterflow.values.types import to_spark

log = logging.getLogger(__name__)
LOG_EVERY_S = 10.0  # the conversion's progress in the log: at most this often, and when the last tablet is done
SAMPLES = 5


class ConversionStopped(AlterflowError):
    """The job left RUNNING (cancelled, timed out) while tablets were converting."""


@dataclass(frozen=True)
class ConversionResult:
    tablets_total: int
    tablets_done: int
    rows: int
    failed_casts: int


def staging_dir(warehouse: pathlib.Path, table_id: int, shadow_index_id: int, tablet_id: int, attempt: str) -> pathlib.Path:
    """A tablet's conversion output before it moves into place: one folder per runner (`attempt`),
    so a runner that lost its lease never touches its successor's files."""
    return absolute(warehouse, conversion_staging_path(table_id, shadow_index_id, tablet_id, attempt))


def with_field_ids(frame, version: SchemaVersion):
    """Name, type and Parquet field id of every column of `version` (extras kept as they are)."""
    from pyspark.sql import functions as F

    columns = [F.col(f"`{c.name}`").cast(to_spark(c.type)).alias(c.name, metadata={"parquet.field.id": c.id}) for c in version.columns]
    extras = [F.col(f"`{name}`") for name in frame.columns if version.column(name) is None]
    return frame.select(*columns, *extras)


def reading_version(old: SchemaVersion, new: SchemaVersion, stored: Iterable[SchemaVersion]) -> SchemaVersion:
    """What the conversion reads the origin files as: `old`, plus each column of `new` that `old`
    lacks but a version the files were written under had (a column a REVERT brings back), under
    an internal name: it is read by id from the files that still hold it. Any other column of
    `new` is filled by the conversion (its initial default)."""
    held = {c.id for version in stored for c in version.columns}
    back = tuple(dataclasses.replace(c, name=f"af$back_{c.id}") for c in new.columns if old.column_by_id(c.id) is None and c.id in held)
    return dataclasses.replace(old, columns=old.columns + back) if back else old


def _observed_metrics(observation) -> dict:
    """An observation's metrics; {} (no rows) when Spark never ran its node: a write whose rows
    are all filtered out can be planned as an empty relation (adaptive execution), and PySpark's
    `Observation.get` then fails on the empty metrics row ("assertion failed" in toPyRow). The
    counts are checked again against the origin's before the swap."""
    try:
        return observation.get
    except Exception as exc:
        if "toPyRow" in str(exc) and "assertion failed" in str(exc):
            return {}
        raise


def _flag_column_id(flag: str) -> int:
    """The column id of a failure flag column ("af$failed_<column id>")."""
    return int(flag.rsplit("_", 1)[1])


class _Observations:
    """The observations of one tablet's conversion, each watching the one write that runs its
    frame: its rows and the failed casts of each flag column."""

    def __init__(self, prefix: str, flags: list[str]):
        self.prefix = prefix
        self.flags = flags
        self.watched: list = []

    def observed(self, frame, part: str):
        """`frame` observed under the name `<prefix>_<part>`."""
        from pyspark.sql import Observation
        from pyspark.sql import functions as F

        observation = Observation(f"{self.prefix}_{part}")
        self.watched.append(observation)
        metrics = [F.sum(F.col(flag).cast("long")).alias(flag) for flag in self.flags]
        return frame.observe(observation, F.count(F.lit(1)).alias("rows"), *metrics)

    def counts(self) -> tuple[int, int]:
        """(rows, failed casts) over every observation, once their writes ran."""
        metrics = [_observed_metrics(observation) for observation in self.watched]
        rows_in = sum(int(m.get("rows", 0) or 0) for m in metrics)
        failed = sum(int(m.get(flag) or 0) for m in metrics for flag in self.flags)
        return rows_in, failed


@dataclass(frozen=True)
class StagedOutput:
    """A converted file of one bucket of the new distribution, before the commit puts it at its
    final name: `place(path)` writes it there (or moves it there from a staging folder) and
    returns its size."""

    bucket: int
    rows: int
    place: Callable[[str], int]


@dataclass(frozen=True)
class Staged:
    """A tablet's conversion before its commit: what was read and failed, and the files to place."""

    rows_in: int
    failed: int
    samples: list
    outputs: list[StagedOutput] = field(default_factory=list)
    quarantined: list[pa.Table] = field(default_factory=list)  # rows for the quarantine table


class TabletConverter:
    """Converts the origin tablets of one heavyweight job."""

    def __init__(
        self,
        spark,
        catalog: Catalog,
        warehouse: pathlib.Path,
        job_id: int,
        lease: JobLease,
        parallelism: int = 2,
        engine: Engine = Engine.SPARK,
    ):
        if engine == Engine.SPARK and spark is None:
            raise ValueError("the Spark engine needs a SparkSession")
        self.spark = spark
        self.engine = engine
        self.lease = lease
        self.attempt = lease.holder.rsplit(":", 1)[-1]
        self.catalog = catalog
        self.heavy = HeavyJobs(catalog)
        self.warehouse = warehouse
        self.store = open_warehouse(warehouse, catalog)
        self.store.check_owner()  # before anything is written
        self.job = self.heavy.job(job_id)
        self.origin_index, self.shadow_index = self.job.origin_index_id, self.job.shadow_index_id
        self.old = catalog.schema_version(self.job.table_id, self.job.from_version)
        self.new = self.heavy.shadow_version(self.job)
        self.read_as = self.old  # `run` adds the columns a REVERT brings back (reading_version)
        on_cast_error = self.job.properties.on_cast_error
        # Quarantined rows' values are NULL in the converted frame, like "null"'s, and flagged.
        self.quarantining = on_cast_error == OnCastError.QUARANTINE
        self.cast_mode = OnCastError.NULL if self.quarantining else on_cast_error
        self.parallelism = max(1, parallelism)
        self._progress_lock = threading.Lock()
        self._local = threading.local()
        self._committed = 0
        self._done_here: set[int] = set()  # tablets this runner converted
        self._started = time.monotonic()
        self._logged_at = float("-inf")  # when progress was last logged (at most every LOG_EVERY_S)

    def _thread_spark(self):
        """A session per converting thread: observed metrics are delivered per session, and two
        queries observed at once in one session get each other's metrics."""
        if getattr(self._local, "spark", None) is None:
            self._local.spark = self.spark.newSession()
        return self._local.spark

    # -- the whole job ------------------------------------------------------------------------
    def run(self) -> ConversionResult:
        origin_tablets = self.catalog.tablets(self.origin_index)
        files = self.heavy.origin_files_below_boundary(self.job)
        snapshot = self.catalog.snapshot_by_id(self.job.table_id)
        versions = {
            v: self.catalog.schema_version(self.job.table_id, v)
            for v in {f.schema_version for fs in files.values() for f in fs} | {self.old.version}
        }
        self.read_as = reading_version(self.old, self.new, versions.values())
        done = self.heavy.converted(self.job.id)
        todo = [t for t in sorted(origin_tablets) if t not in done]
        sizes = sizes_of(origin_tablets, files)
        log.info(
            "job %s converts %s of %s tablets (%s rows below boundary %s) on the %s engine, %s at a time",
            self.job.id,
            len(todo),
            len(origin_tablets),
            count_text(sum(t.rows for t in sizes.values())),
            self.job.boundary_txn,
            self.engine,
            self.parallelism,
        )
        self._started = time.monotonic()
        self._report(sizes, done)

        def convert(tablet_id: int) -> None:
            self._ensure_running()
            tablet_snapshot = TableSnapshot(snapshot.table, self.old, tuple(files.get(tablet_id, ())), versions, snapshot.commit_seqs)
            self.convert_tablet(tablet_id, origin_tablets[tablet_id][0], tablet_snapshot)
            with self._progress_lock:
                self._committed += 1
                self._done_here.add(tablet_id)
                crash_point(f"tablet_{self._committed}")
            self._report(sizes, self.heavy.converted(self.job.id))

        with ThreadPoolExecutor(self.parallelism, thread_name_prefix="convert") as pool:
            for future in [pool.submit(convert, t) for t in todo]:
                future.result()
        done = self.heavy.converted(self.job.id)
        return ConversionResult(
            len(origin_tablets), len(done), sum(t.rows_out for t in done.values()), sum(t.failed_casts for t in done.values())
        )

    def _ensure_running(self) -> None:
        self.lease.ensure_held()
        job = self.heavy.job(self.job.id)
        if job.state != JobState.RUNNING:
            raise ConversionStopped(f"alter job {job.id} is {job.state}; conversion stopped")

    def _report(self, sizes: dict[int, TabletSize], done: dict) -> None:
        with self._progress_lock:
            progress = ConversionProgress(sizes, frozenset(done), frozenset(self._done_here), time.monotonic() - self._started)
            self.heavy.note(self.job.id, holder=self.lease.holder, progress=progress.text())
            now = time.monotonic()
            if now - self._logged_at >= LOG_EVERY_S or len(done) == len(sizes):
                self._logged_at = now
                log.info("job %s: %s", self.job.id, progress.text())

    # -- one tablet ---------------------------------------------------------------------------
    def convert_tablet(self, tablet_id: int, partition_key: str, snapshot: TableSnapshot) -> None:
        started = time.monotonic()
        # The quarantine table as it is now (per tablet: a user may drop or change it meanwhile).
        quarantine = (
            quarantine_target(self.catalog, self.job.table_name, self.job.id, self.old) if self.quarantining and snapshot.files else None
        )
        if not snapshot.files:  # nothing below the boundary: done without Spark
            self._commit_tablet(tablet_id, partition_key, Staged(0, 0, []), started)
            return
        if self.engine == Engine.LOCAL:  # converted in memory, written straight to the final names in the commit
            staged = stage_tablet(self.warehouse, snapshot, self.read_as, self.new, SAMPLES, quarantine)
            outputs = [
                StagedOutput(bucket, rows.num_rows, lambda target, rows=rows: write_parquet(self.warehouse, target, rows))
                for bucket, rows in staged.buckets
            ]
            quarantined = [staged.quarantined] if staged.quarantined is not None else []
            self._commit_tablet(
                tablet_id, partition_key, Staged(staged.rows_in, staged.failed, staged.samples, outputs, quarantined), started, quarantine
            )
            return
        if isinstance(self.warehouse, ObjectStoreLocation):
            staging = _ObjectStaging(self, conversion_staging_path(self.job.table_id, self.shadow_index, tablet_id, self.attempt))
        else:
            staging = _FolderStaging(self, staging_dir(self.warehouse, self.job.table_id, self.shadow_index, tablet_id, self.attempt))
        # What killed attempts left behind: holding the lease, no earlier runner can commit them.
        staging.remove_leftovers(tablet_id)
        try:
            rows_in, failed, samples = self._stage_with_spark(tablet_id, snapshot, staging, quarantine)
            staged = Staged(rows_in, failed, samples, staging.outputs(), staging.quarantined)
            self._commit_tablet(tablet_id, partition_key, staged, started, quarantine)
        finally:
            staging.remove()

    def _stage_with_spark(
        self, tablet_id: int, snapshot: TableSnapshot, staging: _FolderStaging | _ObjectStaging, quarantine: QuarantineTarget | None
    ) -> tuple[int, int, list]:
        """The tablet's rows converted by Spark into `staging` (and its quarantined rows into its
        quarantine folder): (rows read, values whose cast failed, sample failed values)."""
        from pyspark.sql import functions as F

        from alterflow.conversion.spark_convert import convert_frame

        spark = self._thread_spark()
        origin = read_snapshot(spark, self.warehouse, snapshot, self.read_as, keep_txn=bool(self.old.primary_key))
        originals = {}
        if quarantine is not None:  # each row's original values ride along, for the quarantined ones
            originals = {c.id: f"af$original_{c.id}" for c in self.old.columns}
            origin = origin.select("*", *[F.col(f"`{c.name}`").cast("string").alias(originals[c.id]) for c in self.old.columns])
        converted, flags = convert_frame(origin, self.read_as, self.new, self.cast_mode)
        checked = [_flag_column_id(flag) for flag in flags]
        observations = _Observations(f"job{self.job.id}_tablet{tablet_id}", flags)
        if quarantine is None and self.old.primary_key:  # counted in the query
            converted = observations.observed(converted, "converted")
        elif quarantine is None:  # every stored row is read: counted from the files' footers (footer_counts)
            origin_counts = self._origin_counts(snapshot, checked)
        if quarantine is not None:  # two writes, two observations: the rows kept and the rows quarantined
            failed_any = F.lit(False)
            for flag in flags:
                failed_any = failed_any | F.col(flag)
            quarantined = self._quarantine_frame(
                observations.observed(converted.where(failed_any), "quarantined"), flags, originals, quarantine
            )
            converted = observations.observed(converted.where(~failed_any), "converted").drop(*originals.values())
        self._write_converted(converted.drop(*flags), staging)
        if quarantine is not None:  # after the converted rows (whose write replaces the staging folder)
            staging.write_quarantined(quarantined, quarantine)
        if observations.watched:
            rows_in, failed = observations.counts()
        else:
            rows_in, source_nulls = origin_counts
            written_nulls = staging.nulls(checked)
            # A converted value is NULL exactly when its source is NULL or its cast failed.
            failed = sum(written_nulls[cid] - source_nulls[cid] for cid in checked)
        samples = self._samples(origin.drop(*originals.values()), flags) if failed else []
        return rows_in, failed, samples

    def _write_converted(self, converted, staging: _FolderStaging | _ObjectStaging) -> None:
        """Write the converted rows into `staging`, a folder per bucket of the new distribution,
        sorted by (bucket, sort key)."""
        from pyspark.sql import functions as F

        sort_names = [F.col(f"`{n}`") for n in self.new.names(self.new.sort_key)]
        if self.new.distributed_by and self.new.buckets > 1:
            bucket = spark_bucket_expr(
                self.new.names(self.new.distributed_by),
                tuple(self.new.column_by_id(c).type for c in self.new.distributed_by),
                self.new.buckets,
            )
            # Sorted by (bucket, sort key) already, so the partitioned writer adds no sort of its own.
            converted = converted.withColumn(BUCKET_COLUMN, bucket).repartition(BUCKET_COLUMN)
            converted = converted.sortWithinPartitions(F.col(f"`{BUCKET_COLUMN}`"), *sort_names)
            staging.write_converted(with_field_ids(converted, self.new), bucketed=True)
        else:  # one bucket: each read split writes its own file, straight into the bucket's folder
            if sort_names:
                converted = converted.sortWithinPartitions(*sort_names)
            staging.write_converted(with_field_ids(converted, self.new), bucketed=False)

    def _origin_counts(self, snapshot: TableSnapshot, column_ids: list[int]) -> tuple[int, dict[int, int]]:
        """(rows, {column id: NULLs}) of the tablet's origin files as read under the origin version:
        a file without the column reads its initial default there (NULL for all rows or for none)."""
        rows, nulls = 0, dict.fromkeys(column_ids, 0)
        for data_file in snapshot.files:
            counts = file_counts(file_source(self.warehouse, data_file.path), column_ids)
            rows += counts.rows
            for column_id in column_ids:
                found = counts.nulls[column_id]
                if found is None:
                    found = counts.rows if self.old.column_by_id(column_id).initial_default is None else 0
                nulls[column_id] += found
        return rows, nulls

    def _samples(self, origin, flags: list[str]) -> list:
        """A few values that could not be converted, as [column, original value, {key column:
        value}] (the row's primary key under the origin's names, as text). A query of its own, run
        only when some cast failed: the original text of every converted column rides along with
        the conversion there, and never through the conversion that writes."""
        from pyspark.sql import functions as F

        from alterflow.conversion.spark_convert import convert_frame

        changed = [c for c in self.new.columns if (o := self.old.column_by_id(c.id)) is not None and o.type != c.type]
        sources = {c.id: f"af$source_{c.id}" for c in changed}
        key_names = self.read_as.names(self.read_as.primary_key)
        keys = {name: f"af$key_{i}" for i, name in enumerate(key_names)}
        with_sources = origin.select(
            "*",
            *[F.col(f"`{self.old.column_by_id(cid).name}`").cast("string").alias(name) for cid, name in sources.items()],
            *[F.col(f"`{name}`").cast("string").alias(alias) for name, alias in keys.items()],
        )
        frame, _flags = convert_frame(with_sources, self.read_as, self.new, self.cast_mode)
        samples = []
        for flag in flags:
            column_id = _flag_column_id(flag)
            if column_id not in sources:
                continue
            name = self.new.column_by_id(column_id).name
            for row in frame.where(F.col(flag)).select(sources[column_id], *keys.values()).limit(SAMPLES).collect():
                samples.append([name, row[0], {key: row[alias] for key, alias in keys.items()}])
        return samples[:SAMPLES]

    def _quarantine_frame(self, failed, flags: list[str], originals: dict[int, str], target: QuarantineTarget):
        """The quarantine table's rows for `failed` (converted rows with their flags and
        original values): the original values by column name, the job, the failed columns and
        why (the same texts as `alterflow.store.quarantine.split_quarantined`)."""
        from pyspark.sql import functions as F

        failing = [(flag, self.new.column_by_id(_flag_column_id(flag))) for flag in flags]
        roles = {name_key(m): m for m in (JOB_COLUMN, COLUMN_COLUMN, REASON_COLUMN)}
        columns = []
        for column in target.version.columns:
            source = self.old.column(column.name)
            role = roles.get(name_key(column.name))
            if role == JOB_COLUMN:
                value = F.lit(target.job_id).cast("long")
            elif role == COLUMN_COLUMN:
                value = F.concat_ws(", ", *[F.when(F.col(flag), F.lit(c.name)) for flag, c in failing])
            elif role == REASON_COLUMN:
                parts = []
                for flag, c in failing:
                    text = F.col(originals[c.id])
                    before, after = reason_text(c.name, "\0", c.type).split("\0")
                    parts.append(F.when(F.col(flag), F.concat(F.lit(before), text, F.lit(after))))
                value = F.concat_ws("; ", *parts)
            elif source is not None:
                value = F.col(originals[source.id])
            else:
                value = F.lit(None).cast("string")
            columns.append(value.alias(column.name))
        return with_field_ids(failed.select(*columns), target.version)

    def _commit_tablet(
        self, tablet_id: int, partition_key: str, staged: Staged, started: float, quarantine: QuarantineTarget | None = None
    ) -> None:
        shadow_tablets = self.catalog.ensure_tablets(self.shadow_index, {(partition_key, o.bucket) for o in staged.outputs})
        txn = self.catalog.begin_transaction(
            self.job.table_id,
            f"convert tablet {tablet_id} for alter job {self.job.id}",
            3600,
            lease_s=self.lease.lease_s,
            holder=self.lease.holder,
        )
        try:
            with TransactionLease(self.catalog, txn, self.lease.lease_s):
                self._register_write_commit(tablet_id, partition_key, staged, shadow_tablets, txn, started, quarantine)
        except BaseException:
            try:
                # Its files (those written after a cancel dropped their rows too) are GC's to
                # delete after the retention period.
                self.catalog.abort_transaction(txn, "conversion of a tablet failed")
            except Exception:
                log.exception("could not abort conversion transaction %s", txn)
            raise

    def _register_write_commit(
        self,
        tablet_id: int,
        partition_key: str,
        staged: Staged,
        shadow_tablets: dict,
        txn: int,
        started: float,
        quarantine: QuarantineTarget | None,
    ) -> None:
        """Register the tablet's converted files under `txn`, put each at its final name (written
        there, or moved there from Spark's staging folder) and commit, the commit recording the
        tablet as converted. Its quarantined rows become files of the quarantine table under the
        same transaction. Every file's row exists before the file does (docs/storage.md)."""
        targets = [
            data_file_path(self.job.table_id, self.shadow_index, shadow_tablets[(partition_key, o.bucket)], txn) for o in staged.outputs
        ]
        self.catalog.register_files(
            txn,
            [NewFile(shadow_tablets[(partition_key, o.bucket)], self.new.version, t, o.rows, 0) for o, t in zip(staged.outputs, targets)],
        )
        sizes = {target: output.place(target) for output, target in zip(staged.outputs, targets)}
        quarantined = 0
        if quarantine is not None:  # the tablet's quarantined rows, under the same transaction
            for rows in staged.quarantined:
                quarantined += rows.num_rows
                sizes.update(register_and_write(self.catalog, self.warehouse, txn, quarantine, rows))
            if quarantined:
                crash_point("quarantined")
        self.store.sync_transaction(txn)  # durable before visible
        self.heavy.commit_converted_tablet(
            ConvertedTablet(
                tablet_id, txn, staged.rows_in, sum(o.rows for o in staged.outputs), staged.failed, tuple(staged.samples), quarantined
            ),
            sizes,
            self.job.id,
            holder=self.lease.holder,
            engine=self.engine,
            seconds=time.monotonic() - started,
        )


def _nulls(sources: Iterable[tuple[str, FileSource]], column_ids: list[int]) -> dict[int, int]:
    """{column id: NULLs} over a tablet's converted files (name, source), before they move into place."""
    nulls = dict.fromkeys(column_ids, 0)
    for name, source in sources:
        counts = file_counts(source, column_ids)
        for column_id in column_ids:
            if counts.nulls[column_id] is None:
                raise RuntimeError(f"converted file {name} has no column with field id {column_id}")
            nulls[column_id] += counts.nulls[column_id]
    return nulls


class _FolderStaging:
    """A tablet's Spark conversion staged in a folder of a warehouse on a disk: Spark's own Parquet
    writer, a folder per bucket; each file is renamed into place in the commit."""

    def __init__(self, converter: TabletConverter, folder: pathlib.Path):
        self.store = converter.store
        self.folder = folder

    def remove_leftovers(self, tablet_id: int) -> None:
        for leftover in self.folder.parent.glob(f"o{int(tablet_id)}-*"):
            self.store.remove_scratch(leftover)

    def write_converted(self, frame, bucketed: bool) -> None:
        if bucketed:
            frame.write.mode("overwrite").partitionBy(BUCKET_COLUMN).parquet(str(self.folder))
        else:
            frame.write.mode("overwrite").parquet(str(self.folder / f"{BUCKET_COLUMN}=0"))

    def write_quarantined(self, frame, _target: QuarantineTarget) -> None:
        frame.write.mode("overwrite").parquet(str(self.folder / QUARANTINE_DIR))

    def _files(self) -> list[pathlib.Path]:
        return sorted(self.folder.glob(f"{BUCKET_COLUMN}=*/*.parquet"))

    def outputs(self) -> list[StagedOutput]:
        """The files Spark wrote, each moved into place in the commit."""
        outputs = []
        for path in self._files():
            bucket = int(path.parent.name.split("=", 1)[1])
            rows = pq.read_metadata(path).num_rows
            outputs.append(StagedOutput(bucket, rows, lambda target, path=path: self.store.move(path, target).stat().st_size))
        return outputs

    @property
    def quarantined(self) -> list[pa.Table]:
        return [pq.read_table(path) for path in sorted((self.folder / QUARANTINE_DIR).glob("*.parquet"))]

    def nulls(self, column_ids: list[int]) -> dict[int, int]:
        return _nulls(((path.name, FileSource(str(path))) for path in self._files()), column_ids)

    def remove(self) -> None:
        self.store.remove_scratch(self.folder)


class _ObjectStaging:
    """A tablet's Spark conversion staged under a prefix of a warehouse in object storage: Spark's
    tasks write the files through pyarrow (`spark_object_writer`), the quarantined rows come to
    this process as Arrow; each file is copied to its final key in the commit."""

    def __init__(self, converter: TabletConverter, folder: str):
        self.converter = converter
        self.store = converter.store
        self.folder = folder  # relative to the warehouse
        self.written: list[tuple[str, int, int]] = []  # (path, bucket, rows)
        self.quarantined: list[pa.Table] = []

    def remove_leftovers(self, tablet_id: int) -> None:
        parent, _, _ = self.folder.rpartition("/")
        mine = f"{parent}/o{int(tablet_id)}-"
        folders = {
            o.path[: o.path.index("/", len(mine))]
            for o in self.store.files.list(parent)
            if o.path.startswith(mine) and "/" in o.path[len(mine) :]
        }
        for folder in sorted(folders):
            self.store.remove_scratch(folder)

    def write_converted(self, frame, bucketed: bool) -> None:
        from alterflow.rewrite.spark_object_writer import file_schema, write_frame

        schema = file_schema(self.converter.new, frame.columns)
        self.written = write_frame(frame, self.converter.warehouse, self.folder, schema, BUCKET_COLUMN if bucketed else None)

    def write_quarantined(self, frame, target: QuarantineTarget) -> None:
        from alterflow.arrow_schema import arrow_schema

        schema = arrow_schema(target.version)
        rows = frame.toArrow()
        self.quarantined = [pa.table([rows.column(f.name).cast(f.type) for f in schema], schema=schema)] if rows.num_rows else []

    def outputs(self) -> list[StagedOutput]:
        return [
            StagedOutput(bucket, rows, lambda target, path=path: self._place(path, target)) for path, bucket, rows in sorted(self.written)
        ]

    def _place(self, staged: str, target: str) -> int:
        self.store.move(self.store.path(staged), target)
        return self.store.size(target)

    def nulls(self, column_ids: list[int]) -> dict[int, int]:
        return _nulls(((path, file_source(self.converter.warehouse, path)) for path, _, _ in self.written), column_ids)

    def remove(self) -> None:
        self.store.remove_scratch(self.folder)
