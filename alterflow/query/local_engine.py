"""Queries run in this process: DuckDB over the evolved Arrow reads (SPEC §7, "Engines").

`plan_local` binds every name a query reads as Spark's binding does (`read/query_binding.py`): a
table at its current version, a view as its own query over the table versions it pinned, nested
views recursively, each under a DuckDB name of its own so that a view's pinned `t` and the query's
current `t` never meet. It translates the query (`translation.py`) and counts the rows and bytes of
the files it would read. `run_local` reads those snapshots with `arrow_read` and runs the DuckDB
query. No pyspark here.
"""

from __future__ import annotations

import contextlib
import pathlib
import sys
import threading
from dataclasses import dataclass, field

import sqlglot
from sqlglot.dialects.spark import Spark

from alterflow.catalog.errors import UnknownObject
from alterflow.catalog.records import TableSnapshot, ViewInfo
from alterflow.catalog.schema import SchemaVersion
from alterflow.catalog.snapshot_reads import SnapshotReads
from alterflow.query import duckdb_macros
from alterflow.query.expressions import FALLBACK, NotLocal
from alterflow.query.sql_types import SqlType, from_column_type
from alterflow.query.translation import QueryTranslation, Relation, RelationColumn, Translated
from alterflow.sql.quoting import quote_string
from alterflow.store.layout import absolute
from alterflow.types import format_value

MAX_VIEW_DEPTH = 32


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

    def translate(self, relations: dict[str, Relation], sql: str) -> Translated:
        translation = QueryTranslation(relations)
        translated = translation.query(parse_query(sql))
        self.used |= translation.used
        return translated

    def table(self, snapshot: TableSnapshot, version: SchemaVersion) -> Relation:
        name = f"t{len(self.sources)}"
        self.sources.append(_Source(name, snapshot, version))
        columns = tuple(RelationColumn(c.name, from_column_type(c.type), f"c{i}") for i, c in enumerate(version.columns))
        return Relation(f'"{name}"', columns)

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
    try:
        tree = sqlglot.parse_one(sql, read=_SparkAsWritten)
    except sqlglot.errors.SqlglotError:
        raise NotLocal("a query the translation cannot parse") from None
    tree.meta["sql"] = sql  # the text, for the function names as written (expressions.written_name)
    return tree


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
    return LocalPlan(translated, binding.sources, binding.views, binding.used)


def run_local(warehouse: pathlib.Path, plan: LocalPlan, as_rows: bool = False) -> LocalResult:
    """The query's rows, as an Arrow table whose columns are named c0, c1, ... or, `as_rows`, as
    tuples of Python values (a DATE or TIMESTAMP past Python's years raises ValueError, as Arrow's
    conversion does). FileNotFoundError when a data file of the plan is gone."""
    import duckdb

    connection = duckdb.connect(config={"threads": 2})
    try:
        try:
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
    return LocalResult(plan.translated.names, plan.translated.types, rows=tuple(rows))


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
        scan = parquet_scan(warehouse, source, plan.columns(source))
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


def parquet_scan(warehouse: pathlib.Path, source: _Source, positions: list[int]) -> str | None:
    """DuckDB's own scan of the source's files, with the evolved read's semantics, where it has
    them: each column found by its Parquet field id (under whatever name it was written), a column
    a file lacks reading its initial default. None (the Arrow read runs instead) for a
    primary-key table (merge-on-read), a table without files, or a column some file stores in
    another type than the version's (a widening read)."""
    snapshot, version = source.snapshot, source.version
    if version.primary_key or not snapshot.files:
        return None
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
    files = ", ".join(quote_string(str(absolute(warehouse, f.path))) for f in snapshot.files)
    return f"SELECT * FROM read_parquet([{files}], schema = MAP {{{', '.join(entries)}}})"


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
