"""The catalog reads a query binds its names with (docs/semantics.md, "Queries: two engines, Spark's
answers"): what a name is, a table's snapshot (its current version and live committed files), a
schema version, a view and what it pinned.

Written once, as plain SQL over the catalog's tables, for two drivers: `Catalog` runs them through
SQLAlchemy (either database), `SqliteSnapshotReads` through Python's own sqlite3 module, so that a
small query on the default SQLite catalog imports no SQLAlchemy (0.16 s of a 0.2 s process). Each
read is one database transaction. No SQLAlchemy here.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from datetime import datetime

from alterflow.catalog.catalog_errors import UnknownObject
from alterflow.catalog.records import DataFile, TableInfo, TableSnapshot, ViewDependency, ViewInfo, decode_version
from alterflow.catalog.revisions import head_revision
from alterflow.catalog.schema import SchemaVersion, name_key
from alterflow.catalog.states import FileState, TransactionState
from alterflow.sql.names import named

# fetch(sql, params) -> rows: one statement of the read's transaction, parameters named `:name`.
Fetch = Callable[[str, dict], list[tuple]]

_TABLE = "SELECT id, name, current_version, next_column_id, current_index_id, created_at, name_key FROM af_tables"
_TABLE_BY_NAME = _TABLE + " WHERE name_key = :name_key"
_TABLE_BY_ID = _TABLE + " WHERE id = :table_id"
_LIVE_FILES = (
    "SELECT f.id, f.tablet_id, f.txn_id, f.schema_version, f.path, f.row_count, f.byte_size, t.commit_seq"
    " FROM af_data_files f JOIN af_transactions t ON t.id = f.txn_id JOIN af_tablets b ON b.id = f.tablet_id"
    " WHERE b.index_id = :index_id AND t.state = :committed AND f.state = :live ORDER BY f.id"
)
_VERSION = "SELECT table_id, version, spec, statement, created_at FROM af_schema_versions WHERE table_id = :table_id"
_ONE_VERSION = _VERSION + " AND version = :version"
_COMMIT_SEQS = "SELECT id, commit_seq FROM af_transactions WHERE table_id = :table_id AND state = :committed AND commit_seq IS NOT NULL"
_VIEW = "SELECT id, name, query, name_key FROM af_views"
_VIEW_BY_NAME = _VIEW + " WHERE name_key = :name_key"
_VIEW_BY_ID = _VIEW + " WHERE id = :view_id"
_VIEW_DEPENDENCIES = (
    "SELECT ref_name, table_id, table_version, column_ids, dep_view_id FROM af_view_dependencies WHERE view_id = :view_id ORDER BY id"
)


def _when(value) -> datetime | None:
    """A timestamp column as a datetime: SQLite returns the text SQLAlchemy stored it as."""
    return datetime.fromisoformat(value) if isinstance(value, str) else value


def _table_info(row: tuple) -> TableInfo:
    return TableInfo(row[0], row[1], row[2], row[3], row[4], _when(row[5]))


def _version(row: tuple) -> SchemaVersion:
    return decode_version(row[0], row[1], row[2], row[3], _when(row[4]))


def read_snapshot(fetch: Fetch, table: TableInfo, index_id: int | None = None, version: int | None = None) -> TableSnapshot:
    """The table's files in `index_id` (default: its current index) read as `version` (default: its
    current one), in the caller's transaction."""
    index_id = table.current_index_id if index_id is None else index_id
    version = table.current_version if version is None else version
    rows = fetch(_LIVE_FILES, {"index_id": index_id, "committed": str(TransactionState.COMMITTED), "live": str(FileState.LIVE)})
    files = tuple(DataFile(*row) for row in rows)
    needed = {f.schema_version for f in files} | {version}
    versions = {row[1]: _version(row) for row in fetch(_VERSION, {"table_id": table.id}) if row[1] in needed}
    current = versions[version]
    seqs: dict[int, int] = {}
    if current.primary_key:
        seqs = dict(fetch(_COMMIT_SEQS, {"table_id": table.id, "committed": str(TransactionState.COMMITTED)}))
    return TableSnapshot(table, current, files, versions, seqs)


def _view_info(fetch: Fetch, row: tuple) -> ViewInfo:
    deps = tuple(
        ViewDependency(ref, table_id, table_version, tuple(json.loads(column_ids)), dep_view_id)
        for ref, table_id, table_version, column_ids, dep_view_id in fetch(_VIEW_DEPENDENCIES, {"view_id": row[0]})
    )
    return ViewInfo(row[0], row[1], row[2], deps)


class SnapshotReads(ABC):
    """The reads of a query's binding, over a driver's `fetch` (`_reading`)."""

    @abstractmethod
    def _reading(self) -> contextlib.AbstractContextManager[Fetch]:
        """A read-only database transaction, as a fetch function."""

    def object_kind(self, name: str) -> str | None:
        """'table', 'view' or None."""
        key = {"name_key": name_key(name)}
        with self._reading() as fetch:
            if fetch(_TABLE_BY_NAME, key):
                return "table"
            if fetch(_VIEW_BY_NAME, key):
                return "view"
        return None

    def snapshot(self, name: str) -> TableSnapshot:
        """The table's current version and its visible files, read in one database transaction."""
        with self._reading() as fetch:
            rows = fetch(_TABLE_BY_NAME, {"name_key": name_key(name)})
            if not rows:
                raise UnknownObject(f"unknown table {named(name)}")
            return read_snapshot(fetch, _table_info(rows[0]))

    def snapshot_by_id(self, table_id: int) -> TableSnapshot:
        with self._reading() as fetch:
            rows = fetch(_TABLE_BY_ID, {"table_id": table_id})
            if not rows or rows[0][6] is None:
                raise UnknownObject(f"unknown table id {table_id}")
            return read_snapshot(fetch, _table_info(rows[0]))

    def index_snapshot(self, table_id: int, index_id: int, version: int) -> TableSnapshot:
        """Like `snapshot`, for any index of the table (a shadow index) read as `version`."""
        with self._reading() as fetch:
            rows = fetch(_TABLE_BY_ID, {"table_id": table_id})
            if not rows:
                raise UnknownObject(f"unknown table id {table_id}")
            return read_snapshot(fetch, _table_info(rows[0]), index_id, version)

    def schema_version(self, table_id: int, version: int) -> SchemaVersion:
        with self._reading() as fetch:
            rows = fetch(_ONE_VERSION, {"table_id": table_id, "version": version})
        if not rows:
            raise UnknownObject(f"table id {table_id} has no schema version {version}")
        return _version(rows[0])

    def view(self, name: str) -> ViewInfo:
        with self._reading() as fetch:
            rows = fetch(_VIEW_BY_NAME, {"name_key": name_key(name)})
            if not rows:
                raise UnknownObject(f"unknown view {named(name)}")
            return _view_info(fetch, rows[0])

    def view_by_id(self, view_id: int) -> ViewInfo:
        with self._reading() as fetch:
            rows = fetch(_VIEW_BY_ID, {"view_id": view_id})
            if not rows or rows[0][3] is None:
                raise UnknownObject(f"unknown view id {view_id}")
            return _view_info(fetch, rows[0])


class SqliteSnapshotReads(SnapshotReads):
    """The reads over a SQLite catalog file through Python's sqlite3 module. Each read opens the
    file, takes a read transaction (WAL: a consistent snapshot beside writers) and closes it."""

    def __init__(self, path: str):
        self.path = path

    @contextlib.contextmanager
    def _reading(self) -> Iterator[Fetch]:
        connection = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        try:
            connection.execute("BEGIN")
            yield lambda sql, params: connection.execute(sql, params).fetchall()
        finally:
            connection.close()  # a read transaction: nothing to commit


def sqlite_snapshot_reads(url: str) -> SqliteSnapshotReads | None:
    """The sqlite3 reads of a plain `sqlite:///path` catalog URL that names an existing catalog at
    this release's migration; None for any other (the `Catalog` opens, migrates and checks it)."""
    prefix = "sqlite:///"
    path = url[len(prefix) :] if url.startswith(prefix) else ""
    if not path or "?" in path or path.startswith(":memory:") or not os.path.isfile(path):
        return None
    try:
        connection = sqlite3.connect(path, timeout=30, isolation_level=None)
        try:
            revision = connection.execute("SELECT version_num FROM alembic_version").fetchall()
        finally:
            connection.close()
    except sqlite3.Error:
        return None
    if revision != [(head_revision(),)]:
        return None
    return SqliteSnapshotReads(path)
