"""Bulk loads through Spark (`alterflow load --engine spark`, and `--engine auto` for big inputs).

Spark runs the load's tasks on the configured master, and in each task the very code of a local
load converts the rows (alterflow.load.rows, alterflow.values.load_coercion), buckets them
(alterflow.bucketing), converts them again for a running job's shadow index (dual write) and writes
Parquet files with field ids. One definition of every rule serves both engines.

- A CSV input is cut into byte ranges (`loading.csv_splits`, at most `SPLIT_MAX_BYTES` each, as
  many as a multiple of the cores); each task parses its range with Arrow's CSV reader, so no row
  passes through the JVM. Like Spark's own file sources, this needs the input on a file system
  every executor sees (the warehouse already is).
- Parquet and JSON inputs are read by Spark's readers and an INSERT ... SELECT is a Spark query:
  their rows reach the tasks as Arrow batches (`mapInArrow`).

The load stays one transaction: the driver begins it (PREPARE) before the Spark job; the tasks write
into a staging folder of the transaction (`t<table>/i<index>/_load/l<txn>`, swept by GC once the
transaction is over); the driver then records every file, moves it into its tablet and commits,
exactly like a local load, with the same dual write and the same commit checks. On a warehouse in
object storage the tasks upload their files through pyarrow's S3 file system in their Python
workers (no S3 connector in the JVM), each in one call, and the driver's move is the store's
server-side copy (docs/storage.md): the tablets a file goes to exist only once the tasks said which
they filled.

Within a load the last row of a primary key wins. Each task writes one set of files per input
split (a file's byte range); a file's sequence, in its name, is (input file, split offset,
flush), so files of one tablet sort in input order and merge-on-read keeps the last row.

A bad value makes the task report it and stop; the driver aborts the transaction, deletes the
staged files and finds the first bad row with the local conversion over the input (the error path
only), so the error line is the one a local load gives, row number included.
"""

from __future__ import annotations

import contextlib
import functools
import pathlib
import urllib.parse
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from alterflow.catalog.catalog import Catalog, NewFile, TableInfo
from alterflow.catalog.heavy_jobs import DualWriteTarget, HeavyJobs
from alterflow.catalog.schema import SchemaVersion
from alterflow.catalog.states import OnCastError
from alterflow.crash_points import crash_point
from alterflow.held_leases import TransactionLease, new_holder
from alterflow.load.bad_rows import BadRows, aborted_for_room
from alterflow.load.inputs import CsvSplit, LoadInput, LoadInputError, csv_header, csv_split_batches, csv_splits
from alterflow.load.local_load import LoadResult, abort_load, aborted_elsewhere, dual_write_rows, numbered
from alterflow.load.rows import rows_from_arrow
from alterflow.load.tablet_buffers import TabletBuffers, TabletKey
from alterflow.object_store import ObjectStoreLocation
from alterflow.store.column_splice import shadow_from_origin, write_with_shadow
from alterflow.store.layout import LinkInWarehouse, absolute, data_file_path, load_staging_path
from alterflow.store.quarantine import QuarantineTarget
from alterflow.store.quarantine_table import quarantine_target
from alterflow.store.tablets import same_tablets, tablet_rows, with_txn_column, write_parquet
from alterflow.store.warehouse import Warehouse
from alterflow.store.warehouse_kinds import open_warehouse

PATH_COLUMN = "af$input_path"
BLOCK_COLUMN = "af$input_block"
# Rows Spark turns into one Arrow batch for a task's Python worker, and nothing else bounds the
# batch: Spark's byte bound (spark.sql.execution.arrow.maxBytesPerBatch, 64 MB by default) measures
# the batch after every row it adds, which took 40-45% of the JVM's time in a 20M-row write_table
# (a JFR profile: ArrowWriter.sizeInBytes) and made the write twice as slow. 32,768 rows cost no
# more than 131,072 (10,000 cost the Python side 50% more); a batch of rows of 10 KB is 320 MB.
ARROW_BATCH_ROWS = 32768
ARROW_CONF = {
    "spark.sql.execution.arrow.maxRecordsPerBatch": str(ARROW_BATCH_ROWS),
    "spark.sql.execution.arrow.maxBytesPerBatch": str(2**31 - 1),  # Spark's "no bound": no size check per row
}
SPLIT_MAX_BYTES = 128 << 20  # a CSV task's share of the input at most (Spark's maxPartitionBytes)
SPLIT_MIN_BYTES = 4 << 20  # and at least (Spark's openCostInBytes)
# A file's sequence: input file, split offset (bytes), flush; each part zero-padded in SEQ_DIGITS.
FILE_FACTOR = 10**19
BLOCK_FACTOR = 10**5
RESULT_SCHEMA = "shadow boolean, quarantine boolean, partition_key string, bucket int, path string, rows long, seq string, nulled long, error string, error_kind string"


@dataclass(frozen=True)
class TaskPlan:
    """What every task of one Spark load needs (pickled to the Python workers)."""

    table: str
    version: SchemaVersion
    txn_id: int
    target: DualWriteTarget | None
    warehouse: pathlib.Path | ObjectStoreLocation
    staging: str  # the tasks' output folder, relative to the warehouse
    file_order: dict[str, int]  # an input file's absolute path -> its place in the load
    target_bytes: int
    quarantine: QuarantineTarget | None = None  # where the dual write's failed rows go (on_cast_error = quarantine)


def _local_path(uri: str) -> str:
    if not uri:  # a query's partition
        return uri
    parsed = urllib.parse.urlparse(uri)
    return urllib.parse.unquote(parsed.path) if parsed.scheme in ("file", "") else uri


def _runs(paths: pa.Array, blocks: pa.Array) -> list[tuple[int, int]]:
    """[start, end) ranges of rows from one input split (a batch may span two)."""
    n = len(paths)
    if n == 0:
        return []
    changed = pc.or_(pc.not_equal(paths[1:], paths[:-1]), pc.not_equal(blocks[1:], blocks[:-1]))
    cuts = [0] + [i + 1 for i in pc.indices_nonzero(changed).to_pylist()] + [n]
    return list(zip(cuts[:-1], cuts[1:]))


class _SplitFiles:
    """One task's output: for each input split, its rows buffered per tablet and written to the
    staging folder, origin and (dual write) shadow index."""

    def __init__(self, plan: TaskPlan):
        self.plan = plan
        self.written: list[dict] = []
        self.nulled = 0  # values the dual write set to NULL (`on_cast_error` = null)
        self.quarantined: list[pa.Table] = []  # rows the dual write quarantined, written at the end
        self.origin: TabletBuffers | None = None
        self.shadow: TabletBuffers | None = None
        self.tablets_alike = plan.target is not None and same_tablets(plan.version, plan.target.version)
        # The shadow's files made from the origin's, as a local load makes them (`load._LoadWriter`).
        self.shadow_from_origin = plan.target is not None and shadow_from_origin(plan.version, plan.target)

    def start_split(self, path: str, block: int) -> None:
        self.flush()
        place = self.plan.file_order.get(_local_path(path))
        if place is None:
            raise RuntimeError(f"Spark read a file that is not part of the load: {path}")
        first_seq = place * FILE_FACTOR + block * BLOCK_FACTOR
        if self.shadow_from_origin:
            self.origin = TabletBuffers(self.plan.version, self.plan.target_bytes, self._write_with_shadow, first_seq)
            return
        self.origin = TabletBuffers(self.plan.version, self.plan.target_bytes, self._writer(False), first_seq)
        if self.plan.target is not None:
            self.shadow = TabletBuffers(self.plan.target.version, self.plan.target_bytes, self._writer(True), first_seq)

    def _staged(self) -> str:
        return f"{self.plan.staging}/{uuid.uuid4().hex}.parquet"

    def _record(self, path: str, key: TabletKey, seq: int, rows: int, shadow: bool, quarantine: bool = False) -> None:
        self.written.append(
            {
                "shadow": shadow,
                "quarantine": quarantine,
                "partition_key": key[0],
                "bucket": key[1],
                "path": path,
                "rows": rows,
                "seq": str(seq),
                "nulled": 0,
                "error": None,
                "error_kind": None,
            }
        )

    def _writer(self, shadow: bool, quarantine: bool = False):
        def write(key: TabletKey, seq: int, rows: pa.Table) -> None:
            path = self._staged()
            write_parquet(self.plan.warehouse, path, rows)
            self._record(path, key, seq, rows.num_rows, shadow, quarantine)

        return write

    def _write_with_shadow(self, key: TabletKey, seq: int, rows: pa.Table) -> None:
        """An origin file and the shadow's file of the same rows (`column_splice.write_with_shadow`);
        `add` has checked the rows."""
        origin, shadow = self._staged(), self._staged()
        write_with_shadow(self.plan.warehouse, origin, shadow, rows, self.plan.version, self.plan.target.version)
        self._record(origin, key, seq, rows.num_rows, False)
        self._record(shadow, key, seq, rows.num_rows, True)

    def add(self, rows: pa.Table) -> None:
        data = rows_from_arrow(self.plan.version, self.plan.table, rows)
        if self.plan.version.primary_key:
            data = with_txn_column(data, self.plan.txn_id)
        shadow = quarantined = None
        if self.plan.target is not None:
            shadow, nulled, quarantined = dual_write_rows(
                data, self.plan.version, self.plan.target, self.plan.table, 1, self.plan.quarantine
            )
            self.nulled += nulled
        tablets = self.origin.add(data)
        if shadow is not None and not self.shadow_from_origin:
            self.shadow.add(shadow, tablets if self.tablets_alike and quarantined is None else None)  # the split done once
        if quarantined is not None:
            self.quarantined.append(quarantined)

    def flush(self) -> None:
        for buffers in (self.origin, self.shadow):
            if buffers is not None:
                buffers.flush_all()
        if self.quarantined:  # one file per task and quarantine tablet (GC does not compact them)
            rows = pa.concat_tables(self.quarantined)
            self.quarantined = []
            write = self._writer(False, quarantine=True)
            for piece in tablet_rows(rows, self.plan.quarantine.version).slices(rows):
                write(piece.key, 0, piece.rows)


def run_csv_task(plan: TaskPlan, batches: Iterator[pa.RecordBatch], splits: list[CsvSplit], header: list[str]) -> Iterator[pa.RecordBatch]:
    """One Spark task of a CSV load: its input is the numbers of its splits (`spark.range`); it reads
    each split with Arrow, converts and writes it; yields what it wrote (or its error)."""
    files = _SplitFiles(plan)

    def fill() -> None:
        for batch in batches:
            for number in batch.column(0).to_pylist():
                split = splits[number]
                files.start_split(split.path, split.start)
                for rows in csv_split_batches(split, header):
                    files.add(pa.Table.from_batches([rows]))

    return _task_result(files, fill, (BadRows, LoadInputError))


def run_task(plan: TaskPlan, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """One Spark task over rows Spark read: every batch converted and written; yields what it wrote
    (or its error)."""
    files = _SplitFiles(plan)

    def fill() -> None:
        current = None
        for batch in batches:
            paths, blocks = batch.column(PATH_COLUMN), batch.column(BLOCK_COLUMN)
            rows = pa.Table.from_batches([batch]).drop_columns([PATH_COLUMN, BLOCK_COLUMN])
            for start, end in _runs(paths, blocks):
                split = (paths[start].as_py(), blocks[start].as_py())
                if split != current:
                    files.start_split(*split)
                    current = split
                files.add(rows.slice(start, end - start))

    return _task_result(files, fill)


def run_partition_task(plan: TaskPlan, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """One Spark task over a query's partition (INSERT ... SELECT, `alterflow.spark.write_table`):
    the partition is one split, numbered by the task, so no column naming the split crosses from
    the JVM with every row (turning rows into Arrow is most of the JVM's share of a load)."""
    from pyspark import TaskContext

    files = _SplitFiles(plan)

    def fill() -> None:
        files.start_split("", TaskContext.get().partitionId())
        for batch in batches:
            if batch.num_rows:
                files.add(pa.Table.from_batches([batch]))

    return _task_result(files, fill)


def _task_result(files: _SplitFiles, fill: Callable[[], None], reported: tuple = (BadRows,)) -> Iterator[pa.RecordBatch]:
    """Run a task's `fill` (its input converted into `files`), flush, and yield what it wrote, or
    the error the driver words as a local load does (a `reported` one), or a write refused because
    a folder of the warehouse is a link (the driver raises it as it is)."""
    try:
        fill()
        files.flush()
        if files.nulled:
            files.written.append(_note(nulled=files.nulled))
    except reported as exc:
        files.written.append(_note(error=str(exc), error_kind="rows"))
    except LinkInWarehouse as exc:
        files.written.append(_note(error=str(exc), error_kind="link"))
    if files.written:
        yield pa.RecordBatch.from_pylist(files.written, schema=_result_arrow_schema())


def _note(nulled: int = 0, error: str | None = None, error_kind: str | None = None) -> dict:
    """A result row that names no file: a task's error, or its count of values set to NULL."""
    return {
        "shadow": False,
        "quarantine": False,
        "partition_key": None,
        "bucket": None,
        "path": None,
        "rows": 0,
        "seq": None,
        "nulled": nulled,
        "error": error,
        "error_kind": error_kind,
    }


def _result_arrow_schema() -> pa.Schema:
    return pa.schema(
        [
            ("shadow", pa.bool_()),
            ("quarantine", pa.bool_()),
            ("partition_key", pa.string()),
            ("bucket", pa.int32()),
            ("path", pa.string()),
            ("rows", pa.int64()),
            ("seq", pa.string()),
            ("nulled", pa.int64()),
            ("error", pa.string()),
            ("error_kind", pa.string()),
        ]
    )


def _input_frame(spark, fmt: str, source: LoadInput):
    """A Parquet or JSON input as a DataFrame, each row with its file and split (`_metadata`)."""
    from pyspark.sql import functions as F

    paths = [str(f.path.resolve()) for f in source.files]
    if fmt == "parquet":
        frame = spark.read.parquet(*paths)
    else:
        frame = spark.read.option("mode", "FAILFAST").json(paths)
    return frame.select("*", F.col("_metadata.file_path").alias(PATH_COLUMN), F.col("_metadata.file_block_start").alias(BLOCK_COLUMN))


def _csv_tasks(spark, source: LoadInput):
    """A CSV input's tasks: a frame of split numbers, one per Spark partition, and the task that
    reads them."""
    headers = {tuple(csv_header(f.path)) for f in source.files}
    if len(headers) != 1:
        raise LoadInputError("the CSV files of this load do not share one header")
    splits = csv_splits(source, SPLIT_MAX_BYTES, _parallelism(spark), SPLIT_MIN_BYTES)
    frame = spark.range(0, len(splits), 1, len(splits))
    return frame, functools.partial(run_csv_task, splits=splits, header=list(headers.pop()))


def _parallelism(spark) -> int:
    try:
        return max(1, int(spark.sparkContext.defaultParallelism))
    except Exception:  # Spark Connect has no SparkContext
        return max(1, int(spark.conf.get("spark.default.parallelism", "2")))


@dataclass(frozen=True)
class SparkInput:
    """What a Spark load reads: a DataFrame and the task that writes its rows (`run_task`: rows that
    carry their split, PATH_COLUMN and BLOCK_COLUMN; `run_partition_task`: a query's partitions),
    the places of its input files in the load, and how to find the first bad row when a task
    reports one (the local conversion, so the error line is a local load's)."""

    frame: object
    file_order: dict[str, int]
    first_bad_row: Callable[[SchemaVersion, DualWriteTarget | None], BadRows | None]
    task: Callable[[TaskPlan, Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]] = run_task


def input_files(spark, table: TableInfo, source: LoadInput) -> SparkInput:
    """`alterflow load`'s files, read in Spark tasks."""
    formats = source.formats
    if len(formats) != 1:
        raise LoadInputError(f"a Spark load takes files of one format; found {', '.join(sorted(formats))}")
    fmt = formats.pop()

    def first_bad_row(version: SchemaVersion, target: DualWriteTarget | None) -> BadRows | None:
        return _first_bad_row(table, version, source.batches(), target)

    order = {str(f.path.resolve()): place for place, f in enumerate(source.files)}
    if fmt == "csv":
        frame, task = _csv_tasks(spark, source)
        return SparkInput(frame, order, first_bad_row, task)
    return SparkInput(_input_frame(spark, fmt, source), order, first_bad_row)


def query_result(table: TableInfo, frame, names: list[str]) -> SparkInput:
    """INSERT ... SELECT: the query's columns named `names`; each Spark partition is one split, in
    partition order (a SELECT without ORDER BY has no other order)."""
    if len(names) != len(frame.columns):
        raise BadRows(f"INSERT INTO {table.name}: {len(names)} columns are named but the query returns {len(frame.columns)}")

    def first_bad_row(version: SchemaVersion, target: DualWriteTarget | None) -> BadRows | None:
        return _first_bad_row(table, version, [frame.toDF(*names).toArrow()], target)

    return SparkInput(frame.toDF(*names), {"": 0}, first_bad_row, run_partition_task)


def spark_load(
    spark,
    catalog: Catalog,
    warehouse: pathlib.Path,
    table: TableInfo,
    version: SchemaVersion,
    source: SparkInput,
    label: str,
    settings,
) -> LoadResult:
    """`source` loaded into `table` as one transaction, converted and written by Spark tasks."""
    store = open_warehouse(warehouse, catalog)
    store.check_owner()  # before anything is written
    catalog.abort_expired_transactions(table.id)  # their files go after the retention (GC)
    txn_id = catalog.begin_transaction(table.id, label, settings.txn_timeout_s, lease_s=settings.lease_s, holder=new_holder())
    staging = load_staging_path(table.id, table.current_index_id, txn_id)
    on_disk = not isinstance(warehouse, ObjectStoreLocation)
    # removed again if left empty
    new_folders = [folder for folder in absolute(warehouse, staging).parents if not folder.exists()] if on_disk else []
    planned: list[str] = []
    try:
        with TransactionLease(catalog, txn_id, settings.lease_s):
            return _write_and_commit(spark, catalog, store, table, version, source, txn_id, staging, planned, settings)
    except BaseException as exc:
        elsewhere = aborted_elsewhere(catalog, txn_id, exc)
        abort_load(catalog, txn_id, exc)
        if elsewhere is not None:
            raise elsewhere from exc
        refusal = aborted_for_room(exc, table.name)
        if refusal is not None:
            raise refusal from exc
        raise
    finally:
        store.remove_scratch(staging)
        if on_disk:
            for folder in [absolute(warehouse, staging).parent, *new_folders]:
                _remove_if_empty(folder)


def _remove_if_empty(folder: pathlib.Path) -> None:
    with contextlib.suppress(OSError):  # not empty (another load stages there) or gone: left as it is
        folder.rmdir()


def _write_and_commit(
    spark,
    catalog: Catalog,
    store: Warehouse,
    table: TableInfo,
    version: SchemaVersion,
    source: SparkInput,
    txn_id: int,
    staging: str,
    planned: list[str],
    settings,
) -> LoadResult:
    heavy = HeavyJobs(catalog)
    target = heavy.dual_write_target(table.id)
    if target is not None and txn_id <= target.boundary_txn:
        target = None
    if not isinstance(store.root, ObjectStoreLocation):
        absolute(store.root, staging).mkdir(parents=True, exist_ok=True)
    quarantine = None
    if target is not None and target.on_cast_error == OnCastError.QUARANTINE:
        quarantine = quarantine_target(catalog, table.name, target.job_id, version)
    plan = TaskPlan(table.name, version, txn_id, target, store.root, staging, source.file_order, settings.target_file_mb << 20, quarantine)
    written = _run_tasks(spark, source, plan)
    links = [w["error"] for w in written if w["error_kind"] == "link"]
    if links:
        raise LinkInWarehouse(links[0])
    errors = [w["error"] for w in written if w["error"]]
    if errors:
        raise source.first_bad_row(version, target) or BadRows(errors[0])
    crash_point("load_tasks_done")
    commit = _LoadCommit(catalog, store, table, version, target, txn_id, planned, quarantine)
    return _commit(commit, written, heavy)


@dataclass(frozen=True)
class _LoadCommit:
    """What the driver commits: the transaction, where its staged files go, and the list of the
    paths it made (the caller's, appended to as files move, so a failure can remove them)."""

    catalog: Catalog
    store: Warehouse
    table: TableInfo
    version: SchemaVersion
    target: DualWriteTarget | None
    txn_id: int
    planned: list[str]
    quarantine: QuarantineTarget | None


def _commit(commit: _LoadCommit, written: list[dict], heavy: HeavyJobs) -> LoadResult:
    """Record the staged files under the transaction, move them into their tablets, commit."""
    nulled = sum(w["nulled"] for w in written)
    written = [w for w in written if w["path"] is not None]
    _register_and_move(commit, written)
    crash_point("load_files_moved")
    store, txn_id, target = commit.store, commit.txn_id, commit.target
    sizes = {path: store.size(path) for path in commit.planned}
    store.sync_transaction(txn_id)  # durable before visible: what the tasks wrote, and the moves
    heavy.commit_load(txn_id, sizes, nulled, target.job_id if target is not None else None)
    return LoadResult(txn_id, sum(w["rows"] for w in written if not w["shadow"] and not w["quarantine"]), len(commit.planned))


def _run_tasks(spark, source: SparkInput, plan: TaskPlan) -> list[dict]:
    """The load's Spark job, under ARROW_CONF (the session's own values back afterwards)."""
    previous = {key: spark.conf.get(key) for key in ARROW_CONF}
    task = source.task
    try:
        for key, value in ARROW_CONF.items():
            spark.conf.set(key, value)
        result = source.frame.mapInArrow(lambda batches: task(plan, batches), RESULT_SCHEMA)
        return [row.asDict() for row in result.collect()]
    finally:
        for key, value in previous.items():
            spark.conf.set(key, value)


def _register_and_move(commit: _LoadCommit, written: list[dict]) -> None:
    """Record every staged file under the transaction, then move it into its tablet (the
    quarantined rows' into the quarantine table's)."""
    table, version, target, quarantine, txn_id = commit.table, commit.version, commit.target, commit.quarantine, commit.txn_id
    indexes = {"origin": (table.id, table.current_index_id, version, None)}
    if target is not None:
        indexes["shadow"] = (table.id, target.shadow_index_id, target.version, None)
    if quarantine is not None:
        indexes["quarantine"] = (quarantine.table_id, quarantine.index_id, quarantine.version, quarantine.job_id)
    moves, files = [], []
    for kind, (table_id, index_id, index_version, job_id) in indexes.items():
        mine = [w for w in written if ("quarantine" if w["quarantine"] else "shadow" if w["shadow"] else "origin") == kind]
        tablet_ids = commit.catalog.ensure_tablets(index_id, {(w["partition_key"], w["bucket"]) for w in mine})
        for w in mine:
            tablet_id = tablet_ids[(w["partition_key"], w["bucket"])]
            path = data_file_path(table_id, index_id, tablet_id, txn_id, int(w["seq"]))
            files.append(NewFile(tablet_id, index_version.version, path, w["rows"], 0, job_id))
            moves.append((commit.store.path(w["path"]), path))
    commit.catalog.register_files(txn_id, files)
    for staged, path in moves:
        commit.planned.append(path)
        commit.store.move(staged, path)


def _first_bad_row(
    table: TableInfo, version: SchemaVersion, batches: Iterable[pa.Table | pa.RecordBatch], target: DualWriteTarget | None
) -> BadRows | None:
    """The error a local load of `batches` gives: the first bad row, numbered in the whole input."""

    def conform(batch: pa.Table, first_row: int) -> pa.Table:
        return rows_from_arrow(version, table.name, batch, first_row=first_row)

    try:
        for data, first_row in numbered(batches, conform):
            if target is not None:
                if version.primary_key:
                    data = with_txn_column(data, 0)
                dual_write_rows(data, version, target, table.name, first_row)
    except BadRows as exc:
        return exc
    return None
