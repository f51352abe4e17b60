"""Queries run in this process: DuckDB over the tables' Parquet files (docs/semantics.md, "Queries: two engines").

`plan_local` binds every name a query reads as Spark's binding does (`read/query_binding.py`): a
table at its current version, a view as its own query over the table versions it pinned, nested
views recursively, each under a DuckDB name of its own so that a view's pinned `t` and the query's
current `t` never meet. It translates the query (`translation.py`) and counts the rows and bytes of
the files it would read. `run_local` has DuckDB scan each table's Parquet files itself
(`parquet_scan`, merge-on-read of a primary-key table included), or, where the scan cannot
reproduce the evolved read, reads the snapshot with `arrow_read`, and runs the DuckDB query.
No pyspark here.
"""

from __future__ import annotations

import contextlib
import pathlib
import re
import sys
import threading
from dataclasses import dataclass, field

import sqlglot
from sqlglot.dialects.spark import Spark

from alterflow.catalog.catalog_errors import UnknownObject
from alterflow.catalog.records import TableSnapshot, ViewInfo
from alterflow.catalog.schema import SchemaVersion
from alterflow.catalog.snapshot_reads import SnapshotReads
from alterflow.object_store import ObjectStoreLocation
from alterflow.query import duckdb_macros, udfs
from alterflow.query.expression_core import FALLBACK, NotLocal
from alterflow.query.spark_refusals import RefusedCall, RefusedCallError, refused_calls
from alterflow.query.sql_types import SqlType, from_column_type
from alterflow.query.translation import QueryTranslation, Relation, RelationColumn, Translated
from alterflow.sql.quoting import quote_string
from alterflow.store.layout import TXN_COLUMN, absolute
from alterflow.values.types import format_value

MAX_VIEW_DEPTH = 32
ROW_ORDER = "af_row"  # a table's column numbering its rows in its one file, for aggregates that read them in order
# Spark reads a file no larger than its open cost (spark.sql.files.openCostInBytes) in one task
ONE_TASK_BYTES = 4 * 1024 * 1024


class LocalQueryError(Exception):
    """An error the query raises at run time, worded as Spark words it (one line)."""


class SparkNeeded(Exception):
    """A value met at run time whose answer only Spark gives (a guarded expression); the query
    runs on Spark instead."""


@dataclass(frozen=True)
class _Source:
    name: str  # the DuckDB table it is registered as
    snapshot: TableSnapshot
    version: SchemaVersion


@dataclass
class LocalPlan:
    translated: Translated
    sources: list[_Source] = field(default_factory=list)
    views: list[tuple[str, str]] = field(default_factory=list)  # (DuckDB name, query), inner first
    used: set[tuple[str, str]] = field(default_factory=set)  # (relation, column) pairs read
    ordered: set[str] = field(default_factory=set)  # sources whose rows are read in order ('"t0"')

    def columns(self, source: _Source) -> list[int]:
        """Positions of the source's columns the query reads (at least one: it counts rows)."""
        read = [i for i in range(len(source.version.columns)) if (f'"{source.name}"', f"c{i}") in self.used]
        return read or [0]

    @property
    def rows(self) -> int:
        return sum(f.row_count for s in self.sources for f in s.snapshot.files)

    @property
    def nbytes(self) -> int:
        return sum(f.byte_size for s in self.sources for f in s.snapshot.files)


@dataclass(frozen=True)
class LocalResult:
    names: tuple[str, ...]
    types: tuple[SqlType, ...]
    table: object = None  # pa.Table, its columns named c0, c1, ... (run_local's default)
    rows: tuple[tuple, ...] | None = None  # Python values (run_local's as_rows): no pyarrow imported


class _Binding:
    def __init__(self, catalog: SnapshotReads):
        self.catalog = catalog
        self.sources: list[_Source] = []
        self.views: list[tuple[str, str]] = []
        self.used: set[tuple[str, str]] = set()
        self.ordered: set[str] = set()

    def translate(self, relations: dict[str, Relation], sql: str) -> Translated:
        translation = QueryTranslation(relations)
        tree = parse_query(sql)
        if tree.meta.get("lenient"):
            _refuse_leniently_read(translation, tree)
        translated = translation.query(tree)
        if any("spark_refusal" in node.meta for node in tree.walk()):
            # a call Spark refuses that the translation did not reach: Spark words the error
            raise NotLocal("a call Spark refuses, in a part of the query the local engine did not translate")
        self.used |= translation.used
        self.ordered |= translation.ordered
        return translated

    def table(self, snapshot: TableSnapshot, version: SchemaVersion) -> Relation:
        name = f"t{len(self.sources)}"
        self.sources.append(_Source(name, snapshot, version))
        columns = tuple(RelationColumn(c.name, from_column_type(c.type), f"c{i}") for i, c in enumerate(version.columns))
        return Relation(f'"{name}"', columns, row_order=ROW_ORDER)

    def view(self, view: ViewInfo, depth: int = 0) -> Relation:
        if depth > MAX_VIEW_DEPTH:
            raise NotLocal("views nested too deeply")
        relations = {}
        for dep in view.dependencies:
            if dep.dep_view_id is not None:
                relations[dep.ref_name] = self.view(self.catalog.view_by_id(dep.dep_view_id), depth + 1)
            else:
                snapshot = self.catalog.snapshot_by_id(dep.table_id)
                relations[dep.ref_name] = self.table(snapshot, self.catalog.schema_version(dep.table_id, dep.table_version))
        translated = self.translate(relations, view.query)
        name = f'"v{len(self.views)}"'
        self.views.append((name, translated.sql))
        columns = tuple(RelationColumn(n, t, f"c{i}") for i, (n, t) in enumerate(zip(translated.names, translated.types)))
        return Relation(name, columns)


class _SparkAsWritten(Spark):
    """Spark's dialect with datetime patterns ('yyyy-MM-dd') kept as written: sqlglot would turn
    them into strftime codes, merging patterns Spark tells apart (y and yyyy)."""

    TIME_MAPPING: dict[str, str] = {}


def parse_query(sql: str):
    """The query's tree, each call Spark refuses marked (`_mark_refused_calls`). A query sqlglot
    refuses only for the argument count of a call Spark refuses too is read leniently
    (`meta["lenient"]`): it is never run, only refused in Spark's words or handed to Spark."""
    try:
        tokens = _SparkAsWritten().tokenize(sql)
        refused = refused_calls(sql, tokens)
    except sqlglot.errors.SqlglotError:
        raise NotLocal("a query the local engine's parser cannot read") from None
    try:
        tree = sqlglot.parse_one(sql, read=_SparkAsWritten)
    except sqlglot.errors.ParseError as exc:
        if not refused or not all(_ARGUMENT_COUNT_ERRORS.match(e.get("description", "")) for e in exc.errors):
            raise NotLocal("a query the local engine's parser cannot read") from None
        tree = sqlglot.parse_one(sql, read=_SparkAsWritten, error_level=sqlglot.ErrorLevel.IGNORE)
        tree.meta["lenient"] = True
    except sqlglot.errors.SqlglotError:
        raise NotLocal("a query the local engine's parser cannot read") from None
    tree.meta["sql"] = sql  # the text, for the function names as written
    _tag_function_names(tree, sql)
    _mark_refused_calls(tree, refused)
    return tree


# sqlglot's words for a call with too many or too few arguments for its class
_ARGUMENT_COUNT_ERRORS = re.compile(r"The number of provided arguments|Required keyword: '\w+' missing for")


def _mark_refused_calls(tree, refused: list[RefusedCall]) -> None:
    """Each function call Spark refuses gets `meta["spark_refusal"]`: Spark's words and its
    arguments, each parsed on its own (the translation translates them, then refuses)."""
    by_start = {call.start: call for call in refused}
    for node in tree.walk():
        call = by_start.get(node.meta.get("start")) if isinstance(node, sqlglot.exp.Func) else None
        if call is None or isinstance(node, sqlglot.exp.SubqueryPredicate):
            continue
        try:
            arguments = [sqlglot.parse_one(text, read=_SparkAsWritten) for text in call.arguments]
        except sqlglot.errors.SqlglotError:
            continue  # an argument read only in its call's context: Spark words its own error
        node.meta["spark_refusal"] = (call.message, arguments)


def _tag_function_names(tree, sql: str) -> None:
    """Each function call's name as the query spells it, in `meta["name"]` (lower case): Spark
    names a column after the function called (nvl, ceiling, char_length), where sqlglot folds
    aliases into one class (Coalesce, Ceil, Length)."""
    spelled_char = re.search(r"\bchar\s*\(", sql, re.IGNORECASE) is not None
    spelled_chr = re.search(r"\bchr\s*\(", sql, re.IGNORECASE) is not None
    for node in tree.walk():
        start, end = node.meta.get("start"), node.meta.get("end")
        if isinstance(start, int) and isinstance(end, int) and re.fullmatch(r"\w+", sql[start : end + 1]):
            node.meta["name"] = sql[start : end + 1].lower()
        elif isinstance(node, sqlglot.exp.Chr) and spelled_char != spelled_chr:  # sqlglot keeps no position
            node.meta["name"] = "char" if spelled_char else "chr"


def _refuse_leniently_read(translation: QueryTranslation, tree) -> None:
    """A query sqlglot read only leniently (a call with an argument count its class refuses; the
    tree may hold calls without their arguments): refused as Spark refuses the call, when the
    translation reaches it; anything else, a failure of a call left incomplete included, hands
    the query to Spark. It never runs."""
    try:
        translation.query(tree)
    except RefusedCallError:
        raise
    except Exception as exc:  # noqa: BLE001 - an incomplete call of the lenient tree: Spark words the error
        raise NotLocal("a query the local engine's parser cannot read") from exc
    raise NotLocal("a query the local engine's parser cannot read")


def plan_local(catalog: SnapshotReads, sql: str, names: tuple[str, ...]) -> LocalPlan:
    """The query bound and translated; NotLocal when it must run on Spark."""
    binding = _Binding(catalog)
    relations = {}
    for name in names:
        kind = catalog.object_kind(name)
        if kind is None:
            raise UnknownObject(f"unknown table or view {name}")
        if kind == "view":
            relations[name] = binding.view(catalog.view(name))
        else:
            snapshot = catalog.snapshot(name)
            relations[name] = binding.table(snapshot, snapshot.current)
    translated = binding.translate(relations, sql)
    for source in binding.sources:
        if f'"{source.name}"' in binding.ordered:
            _check_one_task(source)
    return LocalPlan(translated, binding.sources, binding.views, binding.used, binding.ordered)


def _check_one_task(source: _Source) -> None:
    """An aggregate whose last bits depend on the order of its rows (a moment, a correlation)
    reproduces Spark's accumulation in one task, over the rows of one file in their order: a
    table of one file no larger than Spark's open cost, which Spark reads in one task, and
    without a primary key (whose merge on read has an order of its own)."""
    files = source.snapshot.files
    if len(files) > 1 or any(f.byte_size > ONE_TASK_BYTES for f in files) or source.snapshot.current.primary_key:
        raise NotLocal(
            "an aggregate whose floating-point result depends on the order of the rows, over a table Spark may read in several tasks"
        )


def run_local(warehouse: pathlib.Path, plan: LocalPlan, as_rows: bool = False) -> LocalResult:
    """The query's rows, as an Arrow table whose columns are named c0, c1, ... or, `as_rows`, as
    tuples of Python values (a DATE or TIMESTAMP past Python's years raises ValueError, as Arrow's
    conversion does). FileNotFoundError when a data file of the plan is gone."""
    import duckdb

    # Never an extension fetched at run time: DuckDB would otherwise download httpfs from the
    # internet for an s3:// or https:// path (its four built-in extensions are all the engine uses).
    connection = duckdb.connect(config={"threads": 2, "autoinstall_known_extensions": False, "autoload_known_extensions": False})
    try:
        try:
            udfs.register(connection, " ".join([plan.translated.sql, *(q for _n, q in plan.views)]))
            _register(connection, warehouse, plan)
            relation = connection.sql(plan.translated.sql)
            if not as_rows:
                return LocalResult(plan.translated.names, plan.translated.types, table=relation.to_arrow_table())
            rows = relation.fetchall()
        except duckdb.Error as exc:
            raise _run_time_error(exc) from None
    finally:
        connection.close()
    _check_dates(rows, plan.translated.types)
    rows = _as_spark_collects(rows, plan.translated.types)
    return LocalResult(plan.translated.names, plan.translated.types, rows=tuple(rows))


def _as_spark_collects(rows: list[tuple], types: tuple[SqlType, ...]) -> list[tuple]:
    """Decimals of a scale past 6 in the form PySpark gives them (udfs.spark_collected)."""
    wide = [i for i, t in enumerate(types) if t.name == "decimal" and t.scale > 6]
    if not wide:
        return rows
    converted = []
    for row in rows:
        row = list(row)
        for i in wide:
            if row[i] is not None:
                row[i] = udfs.spark_collected(row[i], types[i].scale)
        converted.append(tuple(row))
    return converted


def _check_dates(rows: list[tuple], types: tuple[SqlType, ...]) -> None:
    """DuckDB returns a date outside Python's years 1-9999 as its text; Spark's collect fails."""
    for i, t in enumerate(types):
        if t.name in ("date", "timestamp_ntz"):
            for row in rows:
                if isinstance(row[i], str):
                    raise ValueError(f"year {row[i]} is out of range")


@contextlib.contextmanager
def _pandas_hidden():
    """DuckDB's register() imports pandas (0.4 s, most of a small query's time) to ask whether the
    object is a DataFrame; an Arrow table is not one. While pandas is not loaded and no other
    thread could import it meanwhile, it is hidden for that call (DuckDB keeps no memory of it)."""
    if "pandas" in sys.modules or threading.active_count() > 1:
        yield
        return
    sys.modules["pandas"] = None  # import pandas raises ImportError: DuckDB takes it as absent
    try:
        yield
    finally:
        if sys.modules.get("pandas", 0) is None:
            del sys.modules["pandas"]


def _register(connection, warehouse: pathlib.Path, plan: LocalPlan) -> None:
    """Each source as a DuckDB relation named after it: a scan of its Parquet files by DuckDB when
    `parquet_scan` gives one, else the evolved Arrow read registered. Then the views' queries."""
    arrow_sources = []
    for source in plan.sources:  # only the columns the query reads: a pinned view never reads the rest
        ordered = f'"{source.name}"' in plan.ordered
        scan = parquet_scan(warehouse, source, plan.columns(source), ordered)
        if scan is None and ordered:
            raise SparkNeeded("rows in order from a table the local scan does not read")
        if scan is None:
            arrow_sources.append(source)
        else:
            connection.execute(f'CREATE TEMP VIEW "{source.name}" AS {scan}')
    if arrow_sources:
        _register_arrow(connection, warehouse, plan, arrow_sources)
    for statement in duckdb_macros.statements(plan.translated.sql, *(query for _name, query in plan.views)):
        connection.execute(statement)
    for name, query in plan.views:
        connection.execute(f"CREATE TEMP VIEW {name} AS {query}")


def parquet_scan(warehouse: pathlib.Path, source: _Source, positions: list[int], ordered: bool = False) -> str | None:
    """DuckDB's own scan of the source's files, with the evolved read's semantics, where it has
    them: each column found by its Parquet field id (under whatever name it was written), a column
    a file lacks reading its initial default, and for a primary-key table only the latest row of
    each key (`_latest_per_key`); a table without files is no rows of the version's types. None
    (the Arrow read runs instead) for a column some file stores in another type than the
    version's: a widening read, whose Arrow conversion checks each value (a narrowing REVERT
    fails on a value that does not fit) where DuckDB's cast in the scan would not. `ordered`: with
    the column ROW_ORDER numbering the rows of a table of one file (file_row_number)."""
    snapshot, version = source.snapshot, source.version
    if not snapshot.files:  # no rows, each column typed as a scan would type it
        typed = ", ".join(f"CAST(NULL AS {from_column_type(version.columns[i].type).duckdb}) AS c{i}" for i in positions)
        numbered = f", CAST(NULL AS BIGINT) AS {ROW_ORDER}" if ordered else ""
        return f"SELECT {typed}{numbered} LIMIT 0"
    if isinstance(warehouse, ObjectStoreLocation):
        return None  # DuckDB reads objects only through an extension it would download: pyarrow reads them
    key_ids = snapshot.current.primary_key
    if key_ids and (tuple(version.primary_key) != tuple(key_ids) or any(version.column_by_id(cid) is None for cid in key_ids)):
        return None  # a version whose key is not the table's: the Arrow read decides (never met: keys do not change)
    keys = [version.columns.index(version.column_by_id(cid)) for cid in key_ids]
    read = positions + [k for k in keys if k not in positions]  # the key decides which rows are visible
    entries = _field_id_entries(snapshot, version, read)
    if entries is None:
        return None
    # Files in the Arrow read's order (by file name): a later file's row wins between rows of one
    # transaction, and DuckDB's file_index numbers the files in the order they are listed.
    files = sorted(snapshot.files, key=lambda f: pathlib.PurePosixPath(f.path).name) if key_ids else snapshot.files
    listed = "[" + ", ".join(quote_string(str(absolute(warehouse, f.path))) for f in files) + "]"
    scan = f"read_parquet({listed}, schema = MAP {{{', '.join(entries)}}})"
    if not key_ids and ordered:
        numbered = f"read_parquet({listed}, schema = MAP {{{', '.join(entries)}}}, file_row_number = true)"
        return f"SELECT * EXCLUDE (file_row_number), file_row_number AS {ROW_ORDER} FROM {numbered}"
    if not key_ids:
        return f"SELECT * FROM {scan}"
    return _latest_per_key(scan, listed, snapshot.commit_seqs, positions, keys)


def _field_id_entries(snapshot: TableSnapshot, version: SchemaVersion, positions: list[int]) -> list[str] | None:
    """read_parquet's schema entries for the columns at `positions`, each found by field id and
    named c<position>; None when some file stores one of them in another type."""
    file_versions = [snapshot.versions[v] for v in {f.schema_version for f in snapshot.files}]
    entries = []
    for i in positions:
        column = version.columns[i]
        if any(stored.type != column.type for v in file_versions if (stored := v.column_by_id(column.id)) is not None):
            return None
        duckdb_type = from_column_type(column.type).duckdb
        default = (
            "NULL"
            if column.initial_default is None
            else f"CAST({quote_string(format_value(column.initial_default, column.type))} AS {duckdb_type})"
        )
        entries.append(f"{column.id}: {{name: 'c{i}', type: '{duckdb_type}', default_value: {default}}}")
    return entries


def _latest_per_key(scan: str, listed: str, commit_seqs: dict[int, int], positions: list[int], keys: list[int]) -> str:
    """Merge-on-read inside the DuckDB query, as `arrow_read._latest_per_key` decides it: per key,
    the row of the transaction committed last (a transaction the snapshot does not know ranks
    below every known one), then of the file listed last, then the row stored last in it. The
    hidden transaction column has no field id: a second scan reads it by name, matched to the
    row by (file_index, file_row_number)."""
    txn = f"read_parquet({listed}, schema = MAP {{{quote_string(TXN_COLUMN)}: {{name: 'txn', type: 'BIGINT', default_value: NULL}}}})"
    seqs = ", ".join(f"({int(t)}, {int(s)})" for t, s in sorted(commit_seqs.items())) or "(NULL, NULL)"
    wanted = ", ".join(f"d.c{i}" for i in positions)
    partition = ", ".join(f"d.c{k}" for k in keys)
    return (
        f"SELECT {wanted} FROM {scan} AS d"
        f" JOIN {txn} AS h USING (file_index, file_row_number)"
        f" LEFT JOIN (VALUES {seqs}) AS s(txn, seq) ON h.txn = s.txn"
        f" QUALIFY row_number() OVER (PARTITION BY {partition}"
        " ORDER BY coalesce(s.seq, -1) DESC, d.file_index DESC, d.file_row_number DESC) = 1"
    )


def _register_arrow(connection, warehouse: pathlib.Path, plan: LocalPlan, sources: list[_Source]) -> None:
    from alterflow.read.arrow_read import read_snapshot_arrow

    tables = []
    for source in sources:
        positions = plan.columns(source)
        names = [source.version.columns[i].name for i in positions]
        rows = read_snapshot_arrow(warehouse, source.snapshot, source.version, columns=names)
        tables.append((source.name, rows.rename_columns([f"c{i}" for i in positions])))
    with _pandas_hidden():
        for name, rows in tables:
            connection.register(name, rows)


_SPARK_ERRORS = {
    "More than one row returned by a subquery": "[SCALAR_SUBQUERY_TOO_MANY_ROWS] More than one row returned by a subquery used as an expression. SQLSTATE: 21000",
}


def _run_time_error(exc: Exception) -> Exception:
    text = str(exc)
    if "No files found that match" in text or "No such file or directory" in text:
        return FileNotFoundError(text.splitlines()[0])
    for needle, spark_line in _SPARK_ERRORS.items():
        if needle in text:
            return LocalQueryError(spark_line)
    if FALLBACK in text:
        return SparkNeeded("a value whose answer only Spark gives")
    # Anything else is a translation the engine's tests did not meet: Spark answers instead.
    return SparkNeeded(f"DuckDB: {text.splitlines()[0]}")
