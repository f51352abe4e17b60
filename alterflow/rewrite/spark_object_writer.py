"""Spark tasks that write Parquet files into a warehouse in object storage through pyarrow, in
their Python workers (`mapInArrow`): the pyspark wheel has no S3 connector, and none is needed.
A task writes each run of its rows that share a bucket as one file under a staging folder (a new
file past `roll_bytes`), with the field ids of the version it writes, and reports each file once it
is complete (docs/storage.md).

A file streams to the store as it is encoded, a row group at a time, so a task holds about one row
group however large its files grow. A task that fails part way ends the file it was writing without
its footer (pyarrow has no way to abandon an upload, and would otherwise complete the object with a
valid footer over part of the rows): the object left is not a Parquet file, nothing refers to it,
and it goes with the staging folder when its step ends (or with GC after a killed one)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from alterflow.object_store import ObjectStoreLocation
from alterflow.store.tablets import write_options

WRITTEN_SCHEMA = "path string, bucket int, rows long"
ROW_GROUP_ROWS = 1 << 20  # as pq.write_table's default, which every other alterflow writer uses
ROW_GROUP_BYTES = 64 << 20  # and sooner when this much Arrow data waits: a wide row's task stays small
# A conversion's file is rolled past this much Parquet: far below the 5 GiB one CopyObject may
# place (larger objects are copied in parts: alterflow.object_store), and a retried task redoes
# little. Compaction writes one file whatever its size (`roll_bytes=None`).
ROLL_BYTES = 1 << 30


@dataclass(frozen=True)
class ObjectFileWrites:
    """What the writing tasks of one staging folder need (pickled to the Python workers)."""

    warehouse: ObjectStoreLocation
    staging: str  # a folder relative to the warehouse
    schema: pa.Schema  # the files' columns, with their field ids
    bucket_column: str | None  # the rows' bucket, sorted by it within a task; None: every row in bucket 0
    roll_bytes: int | None = ROLL_BYTES  # a new file once one holds this many bytes; None: one file per bucket


def _written(path: str, bucket: int, rows: int) -> pa.RecordBatch:
    return pa.RecordBatch.from_pydict(
        {"path": [path], "bucket": [bucket], "rows": [rows]},
        schema=pa.schema([("path", pa.string()), ("bucket", pa.int32()), ("rows", pa.int64())]),
    )


class _OpenFile:
    """One file being streamed to the store: row groups written as they fill."""

    def __init__(self, writes: ObjectFileWrites, bucket: int, first: pa.Table):
        self.writes = writes
        self.bucket = bucket
        self.path = f"{writes.staging}/{uuid.uuid4().hex}.parquet"
        self.stream = writes.warehouse.filesystem.open_output_stream(writes.warehouse.key(self.path), metadata={})
        self.writer = pq.ParquetWriter(self.stream, writes.schema, **write_options(first))
        self.rows = 0

    def write(self, rows: pa.Table) -> None:
        self.writer.write_table(rows, row_group_size=ROW_GROUP_ROWS)
        self.rows += rows.num_rows

    @property
    def full(self) -> bool:
        return self.writes.roll_bytes is not None and self.stream.tell() >= self.writes.roll_bytes

    def close(self) -> pa.RecordBatch:
        """Complete the upload (the object appears whole) and report it."""
        self.writer.close()
        self.stream.close()
        return _written(self.path, self.bucket, self.rows)

    def abandon(self) -> None:
        """End a file a failure cut short, without its footer: the stream closes first, so the
        writer's footer (written when it is dropped) goes nowhere."""
        self.writer.is_open = False  # pq.ParquetWriter's own flag: no close() when it is dropped
        self.stream.close()


class _TaskFiles:
    """A task's rows of one bucket at a time, gathered into row groups and streamed to files."""

    def __init__(self, writes: ObjectFileWrites):
        self.writes = writes
        self.bucket: int | None = None
        self.pending: list[pa.RecordBatch] = []
        self.pending_rows = self.pending_bytes = 0
        self.file: _OpenFile | None = None

    def add(self, bucket: int, rows: pa.RecordBatch) -> Iterator[pa.RecordBatch]:
        if bucket != self.bucket:
            yield from self.close()
            self.bucket = bucket
        self.pending.append(rows)
        self.pending_rows += rows.num_rows
        self.pending_bytes += rows.nbytes
        if self.pending_rows >= ROW_GROUP_ROWS or self.pending_bytes >= ROW_GROUP_BYTES:
            yield from self._write_group()

    def _write_group(self) -> Iterator[pa.RecordBatch]:
        if not self.pending:
            return
        data = pa.Table.from_batches(self.pending)
        self.pending, self.pending_rows, self.pending_bytes = [], 0, 0
        data = pa.table([data.column(f.name).cast(f.type) for f in self.writes.schema], schema=self.writes.schema)
        if self.file is None:
            self.file = _OpenFile(self.writes, self.bucket, data)
        self.file.write(data)
        if self.file.full:
            yield self.file.close()
            self.file = None

    def abandon(self) -> None:
        if self.file is not None:
            self.file.abandon()
            self.file = None

    def close(self) -> Iterator[pa.RecordBatch]:
        """The bucket's last rows written and its file completed."""
        yield from self._write_group()
        if self.file is not None:
            yield self.file.close()
            self.file = None


def write_object_files(writes: ObjectFileWrites, batches) -> Iterator[pa.RecordBatch]:
    """A writing task: its rows, one file per bucket (the rows come sorted by bucket) rolled past
    `roll_bytes`, each reported as (path relative to the warehouse, bucket, rows) once complete."""
    files = _TaskFiles(writes)
    try:
        for batch in batches:
            if batch.num_rows == 0:
                continue
            if writes.bucket_column is None:
                yield from files.add(0, batch)
                continue
            buckets = batch.column(writes.bucket_column).to_numpy(zero_copy_only=False)
            cuts = [0, *(np.flatnonzero(buckets[1:] != buckets[:-1]) + 1).tolist(), len(buckets)]
            for start, end in zip(cuts[:-1], cuts[1:]):
                yield from files.add(int(buckets[start]), batch.slice(start, end - start))
        yield from files.close()
    except BaseException:
        files.abandon()
        raise


def write_frame(
    frame,
    warehouse: ObjectStoreLocation,
    staging: str,
    schema: pa.Schema,
    bucket_column: str | None = None,
    roll_bytes: int | None = ROLL_BYTES,
) -> list:
    """Write a Spark DataFrame's rows as files under `staging` (relative to the warehouse), each
    task through pyarrow; the files as (path, bucket, rows), in path order."""
    import functools

    writes = ObjectFileWrites(warehouse, staging, schema, bucket_column, roll_bytes)
    found = frame.mapInArrow(functools.partial(write_object_files, writes), WRITTEN_SCHEMA).collect()
    return sorted((row.path, row.bucket, row.rows) for row in found)


def file_schema(version, columns) -> pa.Schema:
    """The Arrow schema of a data file of `version` (field ids), with the hidden transaction column
    when the frame's `columns` hold it."""
    from alterflow.arrow_schema import arrow_field
    from alterflow.store.tablets import TXN_COLUMN

    fields = [arrow_field(c) for c in version.columns]
    if TXN_COLUMN in columns:
        fields.append(pa.field(TXN_COLUMN, pa.int64()))
    return pa.schema(fields)
