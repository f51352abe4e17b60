"""Spark tasks that write Parquet files into a warehouse in object storage through pyarrow, in
their Python workers (`mapInArrow`): the pyspark wheel has no S3 connector, and none is needed.
A task writes each run of its rows that share a bucket as one file under a staging folder, with
the field ids of the version it writes, and reports the file (docs/storage.md)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from alterflow.object_store import ObjectStoreLocation
from alterflow.store.tablets import write_parquet

WRITTEN_SCHEMA = "path string, bucket int, rows long"


@dataclass(frozen=True)
class ObjectFileWrites:
    """What the writing tasks of one staging folder need (pickled to the Python workers)."""

    warehouse: ObjectStoreLocation
    staging: str  # a folder relative to the warehouse
    schema: pa.Schema  # the files' columns, with their field ids
    bucket_column: str | None  # the rows' bucket, sorted by it within a task; None: every row in bucket 0


def _written(path: str, bucket: int, rows: int) -> pa.RecordBatch:
    return pa.RecordBatch.from_pydict(
        {"path": [path], "bucket": [bucket], "rows": [rows]},
        schema=pa.schema([("path", pa.string()), ("bucket", pa.int32()), ("rows", pa.int64())]),
    )


def write_object_files(writes: ObjectFileWrites, batches) -> Iterator[pa.RecordBatch]:
    """A writing task: its rows, one file per bucket (the rows come sorted by bucket), each
    reported as (path relative to the warehouse, bucket, rows)."""
    current: int | None = None
    pending: list[pa.RecordBatch] = []

    def flush() -> Iterator[pa.RecordBatch]:
        if not pending:
            return
        data = pa.Table.from_batches(pending)
        pending.clear()
        data = pa.table([data.column(f.name).cast(f.type) for f in writes.schema], schema=writes.schema)
        path = f"{writes.staging}/{uuid.uuid4().hex}.parquet"
        write_parquet(writes.warehouse, path, data)
        yield _written(path, current, data.num_rows)

    for batch in batches:
        if batch.num_rows == 0:
            continue
        if writes.bucket_column is None:
            current = 0
            pending.append(batch)
            continue
        buckets = batch.column(writes.bucket_column).to_numpy(zero_copy_only=False)
        cuts = [0, *(np.flatnonzero(buckets[1:] != buckets[:-1]) + 1).tolist(), len(buckets)]
        for start, end in zip(cuts[:-1], cuts[1:]):
            bucket = int(buckets[start])
            if bucket != current:
                yield from flush()
                current = bucket
            pending.append(batch.slice(start, end - start))
    yield from flush()


def write_frame(frame, warehouse: ObjectStoreLocation, staging: str, schema: pa.Schema, bucket_column: str | None = None) -> list:
    """Write a Spark DataFrame's rows as files under `staging` (relative to the warehouse), each
    task through pyarrow; the files as (path, bucket, rows), in path order."""
    import functools

    writes = ObjectFileWrites(warehouse, staging, schema, bucket_column)
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
