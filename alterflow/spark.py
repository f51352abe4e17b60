"""`alterflow.spark`: an alterflow table as a DataFrame of the user's own SparkSession, and a
DataFrame written into a table as one transaction (the Python API's Spark door, docs/python.md).

    from alterflow.spark import read_table, write_table

    orders = read_table(spark, "orders")              # the current version; version=n for an older one
    result = write_table(orders_today, "orders")      # one transaction: executors write, the driver commits

- `read_table` is the evolved read of `alterflow sql` (alterflow.read.evolved_read): files grouped
  by the version they were written under, each column found by its field id, widened, renamed or
  filled with its default. It needs one setting when the DataFrame is computed,
  `spark.sql.parquet.fieldId.read.enabled`: it sets it to true on the session (it only changes
  reads whose read schema carries field ids), and refuses in one line when the session will not
  take it. It depends neither on `spark.sql.session.timeZone` (DATETIME is Spark's TIMESTAMP_NTZ,
  a wall-clock time, read and defaulted without a zone) nor on `spark.sql.ansi.enabled` (its casts
  are lossless widenings; a narrowing read is checked value by value on its own), and leaves them
  as the user set them.
- `write_table` is a Spark load (alterflow.load.spark_load) of the DataFrame: the driver begins
  the transaction and holds its lease, each task converts its partition with the local load's
  code and writes Parquet files into the transaction's staging folder, the driver moves them into
  the tablets and commits; a heavyweight job between PENDING and its swap gets every row
  dual-written, converted. Columns match the table's by name (case-insensitive) as in `alterflow
  load`; a column the table lacks, a type no value of which converts, or a NOT NULL column without
  a default left out is refused before anything starts; a bad value fails the transaction and is
  named by its row in the DataFrame (the order `collect()` gives). A TIMESTAMP (zoned) column is
  stored as its UTC time, whatever the session's time zone, as `alterflow load` stores a zoned
  Parquet timestamp; a TIMESTAMP_NTZ column as it is.

Both take `connection` (an `alterflow.Connection`); without one they open `alterflow.connect()`
(ALTERFLOW_CATALOG_URL, ALTERFLOW_WAREHOUSE, ALTERFLOW_HOME) and close it before returning. Every
refusal is a `UserError` with a one-line message.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
from collections.abc import Iterator
from typing import TYPE_CHECKING

from alterflow.catalog.catalog_errors import MAX_LABEL
from alterflow.errors import UserError, capped, first_line, shown

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow as pa

    from alterflow.api.connection import Connection
    from alterflow.catalog.catalog import TableInfo
    from alterflow.catalog.heavy_jobs import DualWriteTarget
    from alterflow.catalog.schema import SchemaVersion
    from alterflow.load.bad_rows import BadRows

__all__ = ["read_table", "write_table", "WriteResult", "SparkConfError", "SparkTableError", "FIELD_ID_READ"]

FIELD_ID_READ = "spark.sql.parquet.fieldId.read.enabled"


class SparkConfError(UserError):
    """The user's SparkSession lacks a setting alterflow needs and will not take it."""


class SparkTableError(UserError):
    """A bad argument to read_table or write_table (not a DataFrame, a view, an unknown version,
    a DataFrame column no value of which fits the table)."""


@dataclasses.dataclass(frozen=True)
class WriteResult:
    """What `write_table` committed: `rows` rows of the DataFrame into `table`, as transaction
    `txn_id`."""

    table: str
    rows: int
    txn_id: int


# -- read ----------------------------------------------------------------------------------------


def read_table(spark, name: str, version: int | None = None, connection: Connection | None = None):
    """The table `name` as a DataFrame of `spark` (the caller's SparkSession), under its current
    schema version or the committed `version`. The DataFrame reads the files that were live when
    it was made: compute it (or persist it) within GC's retention (default one hour)."""
    _check_session(spark, "read_table")
    name = _table_name(name, "read_table")
    if version is not None and (isinstance(version, bool) or not isinstance(version, int)):
        raise SparkTableError(f"read_table: version is a schema version number, not {shown(version)}")
    with _opened(connection, "read_table") as conn:
        from alterflow.read.evolved_read import read_snapshot

        catalog = conn.catalog
        if catalog.object_kind(name) == "view":
            raise SparkTableError(f"read_table: {name} is a view; read_table reads a table (query a view with connection.sql)")
        snapshot = catalog.snapshot(name)  # UnknownObject, one line, for a name the catalog lacks
        target = snapshot.current if version is None else _committed_version(catalog, snapshot.table, version)
        ensure_conf(spark, FIELD_ID_READ, "true", "read_table")
        return read_snapshot(spark, conn.warehouse, snapshot, target)


def _committed_version(catalog, table: TableInfo, version: int) -> SchemaVersion:
    versions = {v.version: v for v in catalog.schema_versions(table.id)}
    if version not in versions:
        known = ", ".join(str(v) for v in sorted(versions))
        raise SparkTableError(f"read_table: table {table.name} has no schema version {version} (its versions: {known})")
    return versions[version]


def ensure_conf(spark, key: str, value: str, caller: str) -> None:
    """Set `key` to `value` on the session unless it already is; one line naming the setting
    when the session refuses (a static or locked setting)."""
    try:
        if str(spark.conf.get(key, None)).lower() == value:
            return
        spark.conf.set(key, value)
        taken = str(spark.conf.get(key, None)).lower() == value
        reason = "the session kept its own value"
    except Exception as exc:  # AnalysisException (a static setting), a Connect server's refusal
        taken, reason = False, first_line(exc, 120)
    if not taken:
        raise SparkConfError(
            capped(f"{caller}: the SparkSession needs {key}={value} and did not take it ({reason}); start it with --conf {key}={value}")
        )


# -- write ---------------------------------------------------------------------------------------


def write_table(df, name: str, connection: Connection | None = None, label: str | None = None) -> WriteResult:
    """Write the DataFrame `df` into the table `name` as one transaction (`label` names it in the
    catalog; default `write_table <name>`). Spark's executors convert and write the files, so
    they need alterflow in their Python and the warehouse on a path they see (or, in object
    storage, the store's credentials in their environment: docs/storage.md); this process
    commits. A table with a heavyweight job between PENDING and its swap gets the rows in both
    versions (dual write); a value that cannot be converted fails the whole write, nothing of it
    visible."""
    _check_frame(df)
    name = _table_name(name, "write_table")
    if label is not None and (not isinstance(label, str) or not label.strip() or len(label) > MAX_LABEL or not label.isprintable()):
        raise SparkTableError(f"write_table: label is 1 to {MAX_LABEL} printable characters (no control characters), not {shown(label)}")
    with _opened(connection, "write_table") as conn:
        from alterflow.load.spark_load import query_result, spark_load

        info, version = conn.catalog.current_schema(name)  # UnknownObject for an unknown table
        check_columns(info, version, df.schema)
        source = query_result(info, df, list(df.columns))
        # The row a bad value is in, counted over the DataFrame in Spark tasks (query_result's own
        # search collects its input to this process, which a DataFrame of any size must not).
        source = dataclasses.replace(source, first_bad_row=functools.partial(first_bad_row, info, df))
        try:
            result = spark_load(
                df.sparkSession, conn.catalog, conn.warehouse, info, version, source, label or f"write_table {info.name}", conn.settings
            )
        except UserError:
            raise
        except Exception as exc:
            missing = _missing_module(exc)
            if missing is None:
                raise
            raise SparkConfError(
                f"write_table: the Spark executors' Python cannot import {missing}; give them a Python with alterflow installed "
                "(spark.pyspark.python, or PYSPARK_PYTHON)"
            ) from None
        return WriteResult(info.name, result.rows, result.txn_id)


def _missing_module(exc: BaseException) -> str | None:
    """`alterflow` or `pyarrow` when a task failed because its Python worker lacks it."""
    text = str(exc)
    for module in ("alterflow", "pyarrow"):
        if f"No module named '{module}" in text:
            return module
    return None


def check_columns(info: TableInfo, version: SchemaVersion, schema) -> None:
    """What can be known from the DataFrame's schema alone, refused before a transaction begins:
    a Spark type no alterflow column takes, the load's name checks (a column the table lacks, one
    named twice, a NOT NULL column without a default left out), and a pair of types no value of
    which converts (a boolean into INT)."""
    import pyarrow as pa

    from alterflow.load.rows import rows_from_arrow

    types = [_arrow_type(field.dataType) for field in schema.fields]
    # The load's own checks (names, defaults) and words, on no rows.
    rows_from_arrow(version, info.name, pa.schema([(name, t or pa.null()) for name, t in zip(schema.names, types)]).empty_table())
    for field, arrow_type in zip(schema.fields, types):
        if arrow_type is None:
            raise SparkTableError(
                capped(
                    f"write_table {info.name}: column {field.name} is {field.dataType.simpleString()} in the DataFrame; "
                    "a column takes numbers, strings, booleans, dates and timestamps"
                )
            )
    for field, arrow_type in zip(schema.fields, types):
        column = version.column(field.name)
        if not _converts(arrow_type, column.type):
            raise SparkTableError(
                f"write_table {info.name}: column {field.name} is {field.dataType.simpleString()} in the DataFrame, and no "
                f"{field.dataType.simpleString()} value converts to {column.type.sql()}; cast it in Spark first"
            )


def _arrow_type(spark_type) -> pa.DataType | None:
    """The Arrow type a task sees the column as, or None for a type the load does not convert
    (binary, nested, intervals, times, variants)."""
    import pyarrow as pa
    from pyspark.sql import types as st

    if isinstance(spark_type, st.NullType):
        return pa.null()
    if isinstance(spark_type, (st.CharType, st.VarcharType)):  # a table's CHAR(n) / VARCHAR(n) column read as such
        return pa.string()
    scalar = (st.BooleanType, st.ByteType, st.ShortType, st.IntegerType, st.LongType, st.FloatType, st.DoubleType)
    if not isinstance(spark_type, (*scalar, st.DecimalType, st.StringType, st.DateType, st.TimestampType, st.TimestampNTZType)):
        return None
    from pyspark.sql.pandas.types import to_arrow_type

    return to_arrow_type(spark_type, timezone="UTC")


def _converts(arrow_type: pa.DataType, column_type) -> bool:
    """False when no value of `arrow_type` converts to `column_type`: a zero of the type (within
    every range, a midnight) is refused. Texts, NULLs and length-limited columns depend on the
    values: the tasks check those."""
    import pyarrow as pa

    from alterflow.values.load_coercion import BadValue, coerce_array

    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type) or pa.types.is_null(arrow_type):
        return True
    if column_type.name in ("CHAR", "VARCHAR"):
        return True
    if pa.types.is_boolean(arrow_type):
        zero = pa.array([True])
    else:
        zero = pa.array([0], pa.int64()).cast(pa.int32() if pa.types.is_date(arrow_type) else pa.int64()).cast(arrow_type)
    try:
        coerce_array(zero, column_type)
    except BadValue:
        return False
    return True


def first_bad_row(info: TableInfo, frame, version: SchemaVersion, target: DualWriteTarget | None) -> BadRows | None:
    """The error of the DataFrame's first bad row (in `collect()`'s order: partition by partition),
    as a local load of its rows would word it, found by two Spark jobs that collect nothing but a
    few numbers and the message: each partition's row count, then each partition's first bad row,
    numbered from the rows of the partitions before it."""
    counts = dict(frame.mapInArrow(_count_rows, "partition int, rows long").collect())
    starts, seen = {}, 0
    for partition in sorted(counts):
        starts[partition] = seen + 1
        seen += counts[partition]
    task = functools.partial(_partition_error, info, version, target, starts)
    errors = [row for row in frame.mapInArrow(task, "partition int, error string").collect() if row.error]
    if not errors:
        return None
    from alterflow.load.bad_rows import BadRows

    return BadRows(min(errors, key=lambda row: row.partition).error)


def _partition() -> int:
    from pyspark import TaskContext

    return TaskContext.get().partitionId()


def _count_rows(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    import pyarrow as pa

    rows = sum(batch.num_rows for batch in batches)
    yield pa.RecordBatch.from_pylist(
        [{"partition": _partition(), "rows": rows}], schema=pa.schema([("partition", pa.int32()), ("rows", pa.int64())])
    )


def _partition_error(
    info: TableInfo, version: SchemaVersion, target: DualWriteTarget | None, starts: dict[int, int], batches: Iterator[pa.RecordBatch]
) -> Iterator[pa.RecordBatch]:
    """The partition's first bad row, converted as a load's task converts it (`_SplitFiles.add`)."""
    import pyarrow as pa

    from alterflow.load.bad_rows import BadRows
    from alterflow.load.local_load import dual_write_rows
    from alterflow.load.rows import rows_from_arrow
    from alterflow.store.tablets import with_txn_column

    partition = _partition()
    first_row, error = starts.get(partition, 1), None
    for batch in batches:
        if batch.num_rows == 0:
            continue
        try:
            data = rows_from_arrow(version, info.name, pa.Table.from_batches([batch]), first_row=first_row)
            if target is not None:
                dual_write_rows(with_txn_column(data, 0) if version.primary_key else data, version, target, info.name, first_row)
        except BadRows as exc:
            error = str(exc)
            break
        first_row += batch.num_rows
    yield pa.RecordBatch.from_pylist(
        [{"partition": partition, "error": error}], schema=pa.schema([("partition", pa.int32()), ("error", pa.string())])
    )


# -- shared --------------------------------------------------------------------------------------


@contextlib.contextmanager
def _opened(connection: Connection | None, caller: str) -> Iterator[Connection]:
    """The caller's connection, or one of the environment's settings closed afterwards."""
    from alterflow.api.connection import Connection, connect

    if connection is None:
        owned = connect()
        try:
            yield owned
        finally:
            owned.close()
        return
    if not isinstance(connection, Connection):
        raise SparkTableError(f"{caller}: connection is an alterflow.Connection (alterflow.connect()), not {type(connection).__name__}")
    yield connection


def _table_name(name, caller: str) -> str:
    from alterflow.sql.parser import SqlError, check_name

    if not isinstance(name, str):
        raise SparkTableError(f"{caller}: a table name is a string, not {type(name).__name__}")
    try:
        return check_name(name)
    except SqlError as exc:
        raise SparkTableError(f"{caller}: {exc}") from None


def _check_session(spark, caller: str) -> None:
    if not (hasattr(spark, "conf") and hasattr(spark, "read") and hasattr(spark, "createDataFrame")):
        raise SparkTableError(f"{caller}: spark is a SparkSession, not {type(spark).__name__}")


def _check_frame(df) -> None:
    if not (hasattr(df, "mapInArrow") and hasattr(df, "sparkSession") and hasattr(df, "schema")):
        raise SparkTableError(f"write_table: df is a PySpark DataFrame, not {type(df).__name__}")
