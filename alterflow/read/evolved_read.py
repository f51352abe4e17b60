"""Read a table as a Spark DataFrame under a target schema version (docs/semantics.md, "Reading old data under a newer schema").

Files are grouped by the version they were written under and each group is scanned and projected
once: a column of the target present in the group's version is read by id (under the name it had
then) and cast when its type was widened; a column absent from it reads its initial default or
NULL; columns the target no longer has are never read. The cost per row does not grow with the
number of versions. Primary-key tables keep, per key, the row of the latest committed transaction;
between rows of one transaction (a streaming load writes a tablet's rows in several files, each
holding a key once) the row of the file whose name sorts last wins (`layout.data_file_path`).

A warehouse in object storage is read by Spark tasks without an S3 connector in the JVM: each
task's Python worker reads its share of the files through pyarrow's S3 file system with the local
engine's reader (`arrow_read.read_file`: the same projection by field id, widening and initial
defaults) and hands Spark the rows as Arrow batches (`mapInArrow`); the merge on read is Spark's,
as on a disk.
"""

from __future__ import annotations

import pathlib
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial, reduce

from alterflow.catalog.records import DataFile, TableSnapshot
from alterflow.catalog.schema import Column, SchemaVersion
from alterflow.object_store import ObjectStoreLocation
from alterflow.store.layout import absolute
from alterflow.store.tablets import TXN_COLUMN
from alterflow.values.types import Change, DataType, classify_conversion, format_value, integer_range, to_spark

RANK_COLUMN = "af$rank"  # hidden helper column; "$" keeps it apart from every user-typed name
FILE_COLUMN = "af$file"  # hidden helper column: the data file a row was read from


def files_share_a_load(files) -> bool:
    """Whether one transaction wrote several files into one tablet, so that merge-on-read must
    rank rows of the same transaction by their file."""
    seen = set()
    for data_file in files:
        key = (data_file.tablet_id, data_file.txn_id)
        if key in seen:
            return True
        seen.add(key)
    return False


def spark_schema(version: SchemaVersion, with_txn: bool = False):
    from pyspark.sql.types import LongType, StructField, StructType

    fields = [StructField(c.name, to_spark(c.type), True, {"parquet.field.id": c.id}) for c in version.columns]
    if with_txn:
        fields.append(StructField(TXN_COLUMN, LongType(), True))
    return StructType(fields)


def _cast_sql(source: str, stored: DataType, column: Column) -> str:
    """`source` (stored as `stored`) as `column`'s type. A narrowing read (a REVERT of a widening,
    whose values were checked to fit) is checked again value by value: Spark's cast would wrap a
    value that does not fit, where the Arrow reader fails."""
    spark_type = to_spark(column.type).simpleString()
    cast = f"CAST({source} AS {spark_type})"
    if classify_conversion(stored, column.type)[0] is not Change.HEAVY or not (stored.is_integer and column.type.is_integer):
        return cast
    low, high = integer_range(column.type)
    message = _sql_string(f"column {column.name}: a stored value does not fit {column.type.sql()}")
    return f"CASE WHEN {source} IS NULL OR {source} BETWEEN {low} AND {high} THEN {cast} ELSE raise_error({message}) END"


def _sql_name(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _sql_string(text: str) -> str:
    """A Spark SQL string literal of `text` (backslash escapes, the parser's default)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def projection_sql(source: SchemaVersion, target: SchemaVersion) -> list[str]:
    """Spark SQL expressions that turn rows of `source` into rows of `target`, matched by column
    id, for one `selectExpr` per file group (tests/support/spark_projection.py keeps the same
    projection written with Spark's Column API, and the tests hold the two equal): the same
    expressions (read by the name the column had in `source`, CAST when widened, the initial
    default as CAST('text' AS type), else NULL), built in one call into the JVM instead of several
    per column."""
    columns = []
    for column in target.columns:
        spark_type = to_spark(column.type).simpleString()
        found = source.column_by_id(column.id)
        if found is None:
            value = column.initial_default
            if value is None:
                literal = "NULL"
            else:
                literal = _sql_string(value if column.type.is_string else format_value(value, column.type))
            expr = f"CAST({literal} AS {spark_type})"
        elif found.type != column.type:
            expr = _cast_sql(_sql_name(found.name), found.type, column)
        else:
            expr = _sql_name(found.name)
        columns.append(f"{expr} AS {_sql_name(column.name)}")
    return columns


def reads_directly(source: SchemaVersion, target: SchemaVersion) -> bool:
    """Whether files written under `source` can be read as `target` by the Parquet reader alone:
    no name means two different columns in the two versions, and every column both have is the
    same type or a lossless widening (docs/semantics.md).

    Spark 4.3 with `spark.sql.parquet.fieldId.read.enabled` finds a column's values by field id,
    but two things still go by name (pinned by tests/read/test_spark_field_ids.py): the vectorized
    reader takes the Spark type of a file column from the read-schema field of the same name
    before the one of the same id, and filters are pushed down to the file column of the same
    name (row groups are skipped on its statistics). A rename alone is safe (the old name is
    not in the target, the new one not in the file); a name that moved to another column is not."""
    for column in target.columns:
        found = source.column_by_id(column.id)
        holder = source.column(column.name)  # names compare case-insensitively, as Spark's do
        if holder is not None and holder.id != column.id:
            return False
        if found is not None and found.type != column.type:
            if classify_conversion(found.type, column.type)[0] is not Change.LIGHT:
                return False
        if found is None and column.initial_default is not None and column.type.name in ("DECIMAL", "LARGEINT"):
            return False  # Spark's reader fills a decimal existence default through a long: it can overflow
    return True


def direct_read_schema(target: SchemaVersion, with_txn: bool = False):
    """`target`'s columns with their field ids, and each initial default as the existence default
    Spark fills in for files that lack the column."""
    from pyspark.sql.types import LongType, StructField, StructType

    fields = []
    for column in target.columns:
        metadata = {"parquet.field.id": column.id}
        if column.initial_default is not None:
            value = column.initial_default if column.type.is_string else format_value(column.initial_default, column.type)
            literal = f"CAST({_sql_string(value)} AS {to_spark(column.type).simpleString()})"
            metadata.update({"EXISTS_DEFAULT": literal, "CURRENT_DEFAULT": literal})
        fields.append(StructField(column.name, to_spark(column.type), True, metadata))
    if with_txn:
        fields.append(StructField(TXN_COLUMN, LongType(), True))
    return StructType(fields)


def read_snapshot(
    spark,
    warehouse: pathlib.Path,
    snapshot: TableSnapshot,
    target: SchemaVersion | None = None,
    keep_txn: bool = False,
    commit_seqs: dict[int, int] | None = None,
    merge_keys: bool = True,
):
    """The table's visible rows under `target` (default: the current version).

    keep_txn keeps the hidden transaction column of primary-key tables (a rewrite carries it over);
    commit_seqs maps transaction ids to commit order (default: the snapshot's, every committed load
    of the table; rewritten files carry their rows' original transactions). merge_keys=False reads
    every stored row, without keeping only the latest per primary key."""
    target = target or snapshot.current
    keyed = bool(snapshot.current.primary_key)
    merge = keyed and merge_keys
    groups: dict[int, list[DataFile]] = defaultdict(list)
    for data_file in snapshot.files:
        groups[data_file.schema_version].append(data_file)
    if not groups:
        return spark.createDataFrame([], spark_schema(target, with_txn=keyed and keep_txn))
    by_file = merge and files_share_a_load(snapshot.files)
    frame = _union_of_groups(spark, warehouse, snapshot, groups, target, keyed, by_file)
    if not keyed:
        return frame
    seq = commit_seqs if commit_seqs is not None else snapshot.commit_seqs
    if merge and (len(set(seq.values())) > 1 or by_file):
        frame = _latest_per_key(frame, seq, by_file, target.names(snapshot.current.primary_key))
    if by_file:
        frame = frame.drop(FILE_COLUMN)
    return frame if keep_txn else frame.drop(TXN_COLUMN)


def _union_of_groups(spark, warehouse: pathlib.Path, snapshot: TableSnapshot, groups, target: SchemaVersion, keyed: bool, by_file: bool):
    """Every file group read as `target`, in one union: the target's columns, each labelled with
    its alterflow type, then the transaction column (primary-key tables) and the file column
    (`by_file`)."""
    from pyspark.sql import functions as F

    if isinstance(warehouse, ObjectStoreLocation):
        frame = _object_frame(spark, warehouse, snapshot, groups, target, keyed, by_file)
    else:
        frame = reduce(lambda a, b: a.unionAll(b), _group_frames(spark, warehouse, snapshot, groups, target, keyed, by_file))
    # Each column's alterflow type, once over the union (Spark keeps it through the plan).
    labelled = [F.col(_sql_name(c.name)).alias(c.name, metadata={"alterflow.type": c.type.sql()}) for c in target.columns]
    return frame.select(*labelled, *([F.col(TXN_COLUMN)] if keyed else []), *([F.col(_sql_name(FILE_COLUMN))] if by_file else []))


def _group_frames(
    spark, warehouse: pathlib.Path, snapshot: TableSnapshot, groups, target: SchemaVersion, keyed: bool, by_file: bool
) -> list:
    """One DataFrame per scan. Versions the Parquet reader can read as `target` directly share ONE
    scan: a file lacking a column gets its initial default (Spark's existence default) and every
    lossless widening is done by the reader. Any other version (renamed columns, one newer than a
    view's pinned target) keeps its own scan and projection by id."""
    from pyspark.sql import functions as F

    file_name = [F.col("_metadata.file_name").alias(FILE_COLUMN)] if by_file else []
    shared = [v for v in sorted(groups) if reads_directly(snapshot.versions[v], target)]
    parts = []
    if shared:
        paths = [str(absolute(warehouse, f.path)) for v in shared for f in groups[v]]
        frame = spark.read.schema(direct_read_schema(target, with_txn=keyed)).parquet(*paths)
        parts.append(frame.select("*", *file_name) if by_file else frame)
    for version_number in [v for v in sorted(groups) if v not in shared]:
        source = snapshot.versions[version_number]
        paths = [str(absolute(warehouse, f.path)) for f in groups[version_number]]
        frame = spark.read.schema(spark_schema(source, with_txn=keyed)).parquet(*paths)
        select = projection_sql(source, target)
        if keyed:
            select.append(_sql_name(TXN_COLUMN))
        if by_file:
            select.append(f"_metadata.file_name AS {_sql_name(FILE_COLUMN)}")
        parts.append(frame.selectExpr(*select))
    return parts


OBJECT_READ_BATCH_ROWS = 32768  # rows per Arrow batch a reading task hands Spark (spark_load's batch size)
FILES_PER_CORE = 16  # reading tasks per core at most: many small files share a task (a task per file below that)
# How Spark's own file source packs files into tasks (spark.sql.files.maxPartitionBytes and
# openCostInBytes): a task reads up to max(open cost, bytes per core) and at most 128 MiB, each file
# counted with the open cost. The object store's reader plans the same, so a tablet converted there
# is written as as many files as on a disk (one per task and bucket).
MAX_PARTITION_BYTES = 128 << 20
OPEN_COST_BYTES = 4 << 20


@dataclass(frozen=True)
class ObjectFileReads:
    """What the reading tasks of one snapshot need (pickled to the Python workers): the files,
    each with the version it was written under, and the version to read them as."""

    warehouse: ObjectStoreLocation
    files: tuple[tuple[DataFile, SchemaVersion], ...]
    target: SchemaVersion
    keyed: bool
    by_file: bool


def read_object_files(reads: ObjectFileReads, batches) -> Iterator:
    """A reading task: the files whose positions its input rows hold, as rows of the target (the
    transaction column for a primary-key table, the file's name where the merge ranks by file)."""
    import pyarrow as pa

    from alterflow.read.arrow_read import read_file

    for batch in batches:
        for position in batch.column(0).to_pylist():
            data_file, source = reads.files[position]
            table = read_file(reads.warehouse, data_file, source, reads.target, reads.keyed)
            if reads.by_file:
                name = data_file.path.rsplit("/", 1)[-1]  # as Spark's _metadata.file_name
                table = table.append_column(FILE_COLUMN, pa.array([name] * table.num_rows, pa.string()))
            yield from table.to_batches(max_chunksize=OBJECT_READ_BATCH_ROWS)


def reading_tasks(sizes: list[int], cores: int) -> int:
    """How many tasks read files of these sizes, as Spark's file source would split them (at least
    one; never more than a task per file or FILES_PER_CORE per core)."""
    if not sizes:
        return 1
    total = sum(size + OPEN_COST_BYTES for size in sizes)
    split = min(MAX_PARTITION_BYTES, max(OPEN_COST_BYTES, total // cores))
    return max(1, min(len(sizes), cores * FILES_PER_CORE, -(-total // split)))


def _object_frame(
    spark, warehouse: ObjectStoreLocation, snapshot: TableSnapshot, groups, target: SchemaVersion, keyed: bool, by_file: bool
):
    """Every file of the snapshot as rows of `target`, read in Spark tasks through pyarrow."""
    from pyspark.sql.types import StringType, StructField

    files = tuple((f, snapshot.versions[v]) for v in sorted(groups) for f in groups[v])
    schema = spark_schema(target, with_txn=keyed)
    if by_file:
        schema = schema.add(StructField(FILE_COLUMN, StringType(), True))
    try:
        cores = max(1, int(spark.sparkContext.defaultParallelism))
    except Exception:  # noqa: BLE001 - Spark Connect has no SparkContext
        cores = max(1, int(spark.conf.get("spark.default.parallelism", "2")))
    tasks = reading_tasks([f.byte_size for f, _ in files], cores)
    reads = ObjectFileReads(warehouse, files, target, keyed, by_file)
    return spark.range(0, len(files), 1, tasks).mapInArrow(partial(read_object_files, reads), schema)


def _latest_per_key(frame, seq: dict[int, int], by_file: bool, key_names):
    """Latest committed transaction wins: rank each row by its transaction's commit sequence, then
    (rows of one transaction) by its file, and keep the first per key."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    order = [F.create_map(*[F.lit(x) for pair in sorted(seq.items()) for x in pair])[F.col(TXN_COLUMN)].desc()]
    if by_file:
        order.append(F.col(_sql_name(FILE_COLUMN)).desc())
    keys = [F.col(f"`{name}`") for name in key_names]
    window = Window.partitionBy(*keys).orderBy(*order)
    return frame.withColumn(RANK_COLUMN, F.row_number().over(window)).where(F.col(f"`{RANK_COLUMN}`") == 1).drop(RANK_COLUMN)
