"""The object store's writing task (alterflow.rewrite.spark_object_writer), called as a Spark task
calls it, against the test run's S3 server: a file per run of a bucket, rolled past `roll_bytes`,
every row once, field ids kept, and a task cut short reporting nothing it did not complete."""

from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from alterflow.object_store import ObjectStoreFiles, parse_object_store_uri
from alterflow.rewrite import spark_object_writer
from alterflow.rewrite.spark_object_writer import ObjectFileWrites, write_object_files

SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False, metadata={b"PARQUET:field_id": b"1"}),
        pa.field("note", pa.string(), metadata={b"PARQUET:field_id": b"3"}),
    ]
)


def batches(buckets: list[int], rows_each: int) -> list[pa.RecordBatch]:
    """Batches of rows sorted by bucket, a bucket's run crossing batch boundaries, as Spark hands them."""
    ids = [i for i in range(len(buckets) * rows_each)]
    bucket_of = [buckets[i // rows_each] for i in ids]
    data = pa.table({"id": ids, "note": [f"note {i}" for i in ids], "b": pa.array(bucket_of, pa.int32())})
    return data.to_batches(max_chunksize=rows_each // 3 + 1)


@pytest.fixture
def warehouse(s3_bucket):
    return parse_object_store_uri(f"s3://{s3_bucket}/wh", "ALTERFLOW_WAREHOUSE", os.environ)


def read_back(warehouse, reported: list[pa.RecordBatch]) -> dict[int, list[int]]:
    files = ObjectStoreFiles(warehouse)
    ids: dict[int, list[int]] = {}
    for row in pa.Table.from_batches(reported).to_pylist():
        with files.open_input(row["path"]) as stream:
            table = pq.read_table(stream)
        assert table.num_rows == row["rows"]
        assert table.schema.field("id").metadata[b"PARQUET:field_id"] == b"1" and table.schema.names == ["id", "note"]
        ids.setdefault(row["bucket"], []).extend(table.column("id").to_pylist())
    return ids


def test_a_task_writes_a_file_per_bucket_run_with_every_row_once(warehouse, monkeypatch):
    monkeypatch.setattr(spark_object_writer, "ROW_GROUP_ROWS", 1000)  # several row groups per file
    writes = ObjectFileWrites(warehouse, "t1/i2/_conversion/o1-a", SCHEMA, "b")
    reported = list(write_object_files(writes, batches([0, 0, 2, 5], 3000)))
    assert [b.column("bucket")[0].as_py() for b in reported] == [0, 2, 5]
    ids = read_back(warehouse, reported)
    assert ids == {0: list(range(6000)), 2: list(range(6000, 9000)), 5: list(range(9000, 12000))}


def test_files_roll_past_roll_bytes_and_compaction_keeps_one(warehouse, monkeypatch):
    monkeypatch.setattr(spark_object_writer, "ROW_GROUP_ROWS", 500)
    rolled = list(write_object_files(ObjectFileWrites(warehouse, "s/rolled", SCHEMA, None, roll_bytes=1), batches([0], 3000)))
    assert [b.column("rows")[0].as_py() for b in rolled] == [1001, 1001, 998]  # a file per row group (a batch of 1001 fills one)
    assert read_back(warehouse, rolled) == {0: list(range(3000))}
    one = list(write_object_files(ObjectFileWrites(warehouse, "s/one", SCHEMA, None, roll_bytes=None), batches([0], 3000)))
    assert len(one) == 1 and read_back(warehouse, one) == {0: list(range(3000))}


def test_a_task_cut_short_reports_only_the_files_it_completed(warehouse, monkeypatch):
    monkeypatch.setattr(spark_object_writer, "ROW_GROUP_ROWS", 1000)

    def failing():
        yield from batches([0, 1], 3000)
        raise RuntimeError("the task's input failed")

    reported = []
    with pytest.raises(RuntimeError, match="input failed"):
        for batch in write_object_files(ObjectFileWrites(warehouse, "s/cut", SCHEMA, "b"), failing()):
            reported.append(batch)
    assert read_back(warehouse, reported) == {0: list(range(3000))}  # bucket 1's file was never reported
    files = ObjectStoreFiles(warehouse)
    left = [o.path for o in files.list("s/cut") if o.path != reported[0].column("path")[0].as_py()]
    assert len(left) == 1  # bucket 1's row groups went up before the failure
    for path in left:  # and what they make is no Parquet file: no reader takes part of the rows for a file
        with files.open_input(path) as stream, pytest.raises(pa.ArrowInvalid):
            pq.read_metadata(stream)
