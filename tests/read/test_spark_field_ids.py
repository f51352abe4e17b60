"""What Spark's Parquet reader does with field ids (spark.sql.parquet.fieldId.read.enabled, set in
`alterflow.spark_session`): the behaviour `evolved_read.reads_directly` relies on when it lets
files of several schema versions share one scan.

- Values are found by id, in both readers, whatever the names (a rename, even a swap).
- The vectorized reader takes the Spark type of a file column from the read-schema field with
  the file column's NAME first, and by id only when no name matches: a file column whose name
  belongs to another column of the read schema is decoded as that column's type.
- Filters are pushed down by NAME: a filter on a read-schema column is checked against the
  statistics of the file column of the same name, even when that is another column (another id),
  and whole row groups are skipped on it.
- A column missing from a file (by id) gets the read schema's existence default.
- A file without any field id fails the read unless `spark.sql.parquet.fieldId.read.ignoreMissing`
  is set, which then reads every column as NULL; alterflow leaves it unset (every file it writes
  has field ids, tested here too).

So one scan is safe exactly when no name belongs to two different ids in the file's version and
the read schema. If a Spark upgrade changes any of this, these tests say so.
"""

from __future__ import annotations

import contextlib

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import functions as F
from pyspark.sql.types import IntegerType, LongType, StringType, StructField, StructType

from alterflow.arrow_schema import FIELD_ID_KEY

pytestmark = pytest.mark.spark


def _write(path, columns: list[tuple[str, int | None, pa.Array]]) -> str:
    """One Parquet file with the given (name, field id or None, values) columns."""
    fields = [
        pa.field(name, values.type, metadata=None if fid is None else {FIELD_ID_KEY: str(fid).encode()}) for name, fid, values in columns
    ]
    pq.write_table(pa.Table.from_arrays([v for _, _, v in columns], schema=pa.schema(fields)), path)
    return str(path)


def _field(name: str, spark_type, fid: int, exists_default: str | None = None) -> StructField:
    metadata = {"parquet.field.id": fid}
    if exists_default is not None:
        metadata.update({"EXISTS_DEFAULT": exists_default, "CURRENT_DEFAULT": exists_default})
    return StructField(name, spark_type, True, metadata)


@contextlib.contextmanager
def _conf(spark, **settings):
    before = {key: spark.conf.get(key, None) for key in settings}
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, value in before.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


READERS = pytest.mark.parametrize("vectorized", ["true", "false"], ids=["vectorized", "row-reader"])


def _rows(frame) -> list[tuple]:
    return [tuple(r) for r in frame.collect()]


def test_field_id_reading_is_on(spark):
    assert spark.conf.get("spark.sql.parquet.fieldId.read.enabled") == "true"
    assert spark.conf.get("spark.sql.parquet.fieldId.write.enabled") == "true"


@READERS
def test_values_are_found_by_id_when_two_names_swap(spark, tmp_path, vectorized):
    path = _write(
        tmp_path / "f.parquet",
        [
            ("id", 1, pa.array([1], pa.int32())),
            ("a", 2, pa.array([10], pa.int32())),
            ("b", 3, pa.array([20], pa.int32())),
        ],
    )
    schema = StructType([_field("id", IntegerType(), 1), _field("b", IntegerType(), 2), _field("a", IntegerType(), 3)])
    with _conf(spark, **{"spark.sql.parquet.enableVectorizedReader": vectorized}):
        assert _rows(spark.read.schema(schema).parquet(path)) == [(1, 10, 20)]
        assert _rows(spark.read.schema(schema).parquet(path).select("a")) == [(20,)]


@READERS
def test_a_rename_reads_by_id_also_with_a_widening(spark, tmp_path, vectorized):
    path = _write(
        tmp_path / "f.parquet",
        [
            ("id", 1, pa.array([1], pa.int32())),
            ("a", 2, pa.array([7], pa.int32())),
            ("b", 3, pa.array(["x"], pa.string())),
        ],
    )
    schema = StructType([_field("id", IntegerType(), 1), _field("x", LongType(), 2), _field("label", StringType(), 3)])
    with _conf(spark, **{"spark.sql.parquet.enableVectorizedReader": vectorized}):
        frame = spark.read.schema(schema).parquet(path)
        assert _rows(frame) == [(1, 7, "x")]
        assert _rows(frame.where(F.col("label") == "x")) == [(1, 7, "x")]  # no file column "label": nothing pushed
        assert _rows(frame.where(F.col("x") == 7)) == [(1, 7, "x")]
        assert _rows(frame.where(F.col("label").isNull())) == []


def test_the_vectorized_reader_takes_a_file_columns_type_by_name(spark, tmp_path):
    """File (a INT id 2, b STRING id 3) read as (b INT id 2, a STRING id 3): the values of id 2 are
    right, but the file's "a" is decoded as the read schema's "a" (a string): the read fails."""
    path = _write(tmp_path / "f.parquet", [("a", 2, pa.array([10], pa.int32())), ("b", 3, pa.array(["x"], pa.string()))])
    schema = StructType([_field("b", IntegerType(), 2), _field("a", StringType(), 3)])
    with _conf(spark, **{"spark.sql.parquet.enableVectorizedReader": "true"}):
        with pytest.raises(Exception, match="PARQUET_COLUMN_DATA_TYPE_MISMATCH"):
            spark.read.schema(schema).parquet(path).collect()
    with _conf(spark, **{"spark.sql.parquet.enableVectorizedReader": "false"}):
        assert _rows(spark.read.schema(schema).parquet(path)) == [(10, "x")]  # the row reader goes by id


@READERS
def test_filters_are_pushed_down_to_the_file_column_of_the_same_name(spark, tmp_path, vectorized):
    """The file's "c" (id 4) was dropped; the read schema's "c" (id 9) is a new column whose
    existence default is 5, so every row reads c = 5. Pushed down, `c = 5` is checked against the
    statistics of the file's old "c" (1..3) and the row group is skipped: no row comes back."""
    path = _write(tmp_path / "f.parquet", [("id", 1, pa.array([1, 2, 3], pa.int32())), ("c", 4, pa.array([1, 2, 3], pa.int32()))])
    schema = StructType([_field("id", IntegerType(), 1), _field("c", IntegerType(), 9, "CAST('5' AS INT)")])
    with _conf(spark, **{"spark.sql.parquet.enableVectorizedReader": vectorized}):
        frame = spark.read.schema(schema).parquet(path)
        assert sorted(_rows(frame)) == [(1, 5), (2, 5), (3, 5)]  # without a filter: by id, the default
        with _conf(spark, **{"spark.sql.parquet.filterPushdown": "true"}):
            assert _rows(frame.where(F.col("c") == 5)) == []  # wrong: skipped on the other column's statistics
        with _conf(spark, **{"spark.sql.parquet.filterPushdown": "false"}):
            assert len(_rows(frame.where(F.col("c") == 5))) == 3


def test_a_swap_with_a_filter_skips_the_wrong_row_groups(spark, tmp_path):
    path = _write(tmp_path / "f.parquet", [("a", 2, pa.array([10], pa.int32())), ("b", 3, pa.array([20], pa.int32()))])
    schema = StructType([_field("b", IntegerType(), 2), _field("a", IntegerType(), 3)])
    frame = spark.read.schema(schema).parquet(path)
    assert _rows(frame) == [(10, 20)]
    assert _rows(frame.where(F.col("a") == 20)) == []  # the file's "a" (10) decided


def test_a_column_missing_from_the_file_gets_the_existence_default(spark, tmp_path):
    path = _write(tmp_path / "f.parquet", [("id", 1, pa.array([1, 2], pa.int32()))])
    schema = StructType(
        [
            _field("id", IntegerType(), 1),
            _field("d", IntegerType(), 5, "CAST('7' AS INT)"),
            _field("e", StringType(), 6, "CAST('y' AS STRING)"),
            _field("n", LongType(), 7),
        ]
    )
    assert sorted(_rows(spark.read.schema(schema).parquet(path))) == [(1, 7, "y", None), (2, 7, "y", None)]


def test_a_file_without_field_ids_fails_unless_missing_ids_are_ignored(spark, tmp_path):
    path = _write(tmp_path / "f.parquet", [("id", None, pa.array([1], pa.int32())), ("b", None, pa.array(["x"], pa.string()))])
    schema = StructType([_field("id", IntegerType(), 1), _field("b", StringType(), 3)])
    assert spark.conf.get("spark.sql.parquet.fieldId.read.ignoreMissing", "false") == "false"
    with pytest.raises(Exception, match="fieldId.read.ignoreMissing"):
        spark.read.schema(schema).parquet(path).collect()
    with _conf(spark, **{"spark.sql.parquet.fieldId.read.ignoreMissing": "true"}):
        assert _rows(spark.read.schema(schema).parquet(path)) == [(None, None)]  # silently NULL: why it stays off


def test_every_file_alterflow_writes_has_field_ids(session, run):
    run("""
        CREATE TABLE t (id INT NOT NULL, a INT, b STRING);
        INSERT INTO t VALUES (1, 10, 'x');
        ALTER TABLE t RENAME COLUMN b TO label;
        INSERT INTO t VALUES (2, 20, 'y');
    """)
    from alterflow.store.layout import absolute

    snapshot = session.catalog.snapshot("t")
    assert len(snapshot.files) == 2
    for data_file in snapshot.files:
        schema = pq.read_schema(absolute(session.warehouse, data_file.path))
        version = snapshot.versions[data_file.schema_version]
        ids = {f.name: int(f.metadata[FIELD_ID_KEY]) for f in schema if f.name in {c.name for c in version.columns}}
        assert ids == {c.name: c.id for c in version.columns}
