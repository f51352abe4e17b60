"""`Table`: one catalog table through the Python API: its schema versions and jobs, scans into
Arrow or pandas, appends, and ALTERs (`alterflow.connect(...).table(name)`).

A scan reads in this process, with the evolved read of the local engine
(`alterflow.read.arrow_read`): each file's columns are found by field id and read as the scan's
version, so a scan never starts a JVM. `to_batches()` streams: a table without a primary key one
data file at a time, a primary-key table one tablet at a time (a key lives in one tablet: its
partition and distribution columns are part of the key), so memory stays bounded by the largest
file or tablet, not the table.

An append is one load transaction, exactly as `alterflow load` makes it (`alterflow.load.local_load`):
columns matched by name, the same coercion and errors, a dual write into a running job's shadow.
"""

from __future__ import annotations

import dataclasses
import pathlib
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from alterflow.catalog.catalog_errors import MAX_LABEL
from alterflow.errors import UserError, shown

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    import pyarrow as pa
    import pyarrow.compute as pc

    from alterflow import sql as ast
    from alterflow.api.alter_job_handle import AlterJobHandle
    from alterflow.catalog.catalog import AlterJob, Catalog, TableSnapshot
    from alterflow.catalog.schema import SchemaVersion
    from alterflow.engine.session import Session
    from alterflow.results import Result, ResultSet


class OpenConnection(Protocol):
    """What a `Table` uses of the `alterflow.Connection` that handed it out (each refuses once the
    connection is closed)."""

    @property
    def catalog(self) -> Catalog: ...

    @property
    def session(self) -> Session: ...

    def sql(self, text: str) -> Result: ...


class ScanError(UserError):
    """A scan that cannot be made (an unknown column or version); nothing was read."""


class ScanGone(ScanError):
    """A data file of the scan's snapshot was deleted by GC while the scan ran (it outlived the
    retention period), and planning again did not help or rows were already handed out."""


class AppendError(UserError):
    """Data `append` does not take; nothing was written."""


@dataclasses.dataclass(frozen=True)
class AppendResult:
    """What one append wrote: its rows, in one transaction."""

    table: str
    rows: int
    txn_id: int


class Table:
    """A table of a connection's catalog. Its methods read the catalog each time they are called:
    a `Table` never holds a stale schema."""

    def __init__(self, connection: OpenConnection, name: str):
        self._connection = connection
        self.name = name

    def __repr__(self) -> str:
        return f"<alterflow.Table {self.name}>"

    # -- schema -----------------------------------------------------------------------------------
    def schema(self, version: int | None = None) -> SchemaVersion:
        """The current schema version, or version `version` (`SHOW SCHEMA VERSIONS` lists them)."""
        catalog = self._connection.catalog
        info = catalog.table(self.name)
        if version is None:
            return catalog.schema_version(info.id, info.current_version)
        return self._version(info, version)

    def versions(self) -> list[SchemaVersion]:
        """Every schema version of the table, oldest first."""
        catalog = self._connection.catalog
        return catalog.schema_versions(catalog.table(self.name).id)

    def jobs(self) -> list[AlterJob]:
        """The table's alter jobs, as `SHOW ALTER TABLE COLUMN` lists them."""
        catalog = self._connection.catalog
        return catalog.jobs(catalog.table(self.name).id)

    def _version(self, info, version: int) -> SchemaVersion:
        if isinstance(version, bool) or not isinstance(version, int):
            raise ScanError(f"{self.name}: a schema version is a whole number, not {shown(version)}")
        if not 1 <= version <= info.current_version:
            raise ScanError(f"{self.name} has no schema version {version}; its versions are 1 to {info.current_version}")
        return self._connection.catalog.schema_version(info.id, version)

    # -- reads ------------------------------------------------------------------------------------
    def scan(self, columns: Sequence[str] | None = None, where: str | pc.Expression | None = None, version: int | None = None) -> Scan:
        """The table's rows as of now, read as schema version `version` (default: the current
        one): only `columns` (default: all), only the rows `where` keeps (a SQL condition, see
        `alterflow.read.scan_condition`, or a `pyarrow.compute.Expression` over the version's
        column names). Nothing is read until `to_arrow()`, `to_batches()` or `to_pandas()`."""
        target = self.schema(version)
        if columns is not None:
            if isinstance(columns, str) or not all(isinstance(c, str) for c in columns):
                raise ScanError(f"scan of {self.name}: columns is a list of column names")
            names = []
            for name in columns:
                column = target.column(name)
                if column is None:
                    raise ScanError(f"scan of {self.name}: unknown column {shown(name)} in version {target.version}")
                names.append(column.name)
        else:
            names = [c.name for c in target.columns]
        return Scan(self, target, names, _condition(where, target, self.name))

    # -- writes -----------------------------------------------------------------------------------
    def append(self, data: Any, label: str | None = None) -> AppendResult:
        """Write `data` (a pyarrow Table or RecordBatch, a RecordBatchReader, an iterable of
        batches or tables, or a pandas DataFrame) as one transaction: all rows or none. Columns
        are matched by name (case-insensitive), missing ones take their default, and values are
        converted by the rules of `alterflow load`; a bad value is one line naming its row and
        column. While a heavyweight ALTER of the table runs, the rows are also written, converted,
        into its new index (dual write)."""
        from alterflow.load.bad_rows import BadRows

        batches = _batches_of(data, self.name)
        label = label if label is not None else f"append into {self.name}"
        if not isinstance(label, str) or not label.strip() or len(label) > MAX_LABEL or not label.isprintable():
            what = shown(label) if isinstance(label, str) else f"a {type(label).__name__}"
            raise AppendError(f"append into {self.name}: label {what} is not 1 to {MAX_LABEL} printable characters (no control characters)")
        try:
            result = self._connection.session.load_result(self.name, batches, label)
        except BadRows as exc:
            raise AppendError(str(exc)) from None
        return AppendResult(self.name, result.rows, result.txn_id)

    # -- schema changes ---------------------------------------------------------------------------
    def alter(self, statement_or_clauses: str, **properties: Any) -> AlterJobHandle:
        """Start an ALTER of this table: a whole `ALTER TABLE <name> ...` statement or its clauses
        (`"ADD COLUMN c INT, MODIFY COLUMN v BIGINT"`); `properties` add to (and override) the
        statement's PROPERTIES (`timeout=600`, `postpone_swap=True`). A rejected change raises
        its one line and changes nothing. A lightweight change is done when this returns; a
        heavyweight one runs on (in this process, or as a DAG run with ALTERFLOW_AIRFLOW_URL):
        the returned handle reports its state and progress, waits for it or cancels it."""
        from alterflow.api.alter_job_handle import start_alter

        connection = self._connection
        statement, parsed = self._statement(statement_or_clauses, "alter")
        driver = connection.session.alter_driver()
        return start_alter(connection.catalog, driver, driver.request(self.name, statement, _properties(properties), parsed=parsed))

    def explain(self, statement_or_clauses: str, analyze: bool = False) -> ResultSet:
        """`EXPLAIN [ANALYZE] ALTER TABLE ...`: the plan of a change (lightweight or a rewrite, per
        clause), with ANALYZE the values that would fail their cast and the estimated time. Changes
        nothing."""
        statement, _parsed = self._statement(statement_or_clauses, "explain")
        result = self._connection.sql(("EXPLAIN ANALYZE " if analyze else "EXPLAIN ") + statement)
        return result  # a ResultSet: EXPLAIN always returns rows

    def _statement(self, text: str, what: str) -> tuple[str, ast.AlterTable]:
        """A whole ALTER TABLE statement of this table, from one or from its clauses: its text and
        the statement parsed."""
        from alterflow import sql as ast

        if not isinstance(text, str) or not text.strip():
            raise UserError(f"{what} of {self.name}: give an ALTER TABLE statement or its clauses")
        stripped = text.strip().rstrip(";").strip()
        one = f"{what} of {self.name}: give one ALTER TABLE statement or its clauses"
        if len(ast.split_statements(stripped)) != 1 or stripped.split(None, 1)[0].upper() == "EXPLAIN":
            raise UserError(one)
        whole = stripped if stripped[:5].upper() == "ALTER" else f"ALTER TABLE {self.name} {stripped}"
        statements = ast.parse_statements(whole)
        if len(statements) != 1 or not isinstance(statements[0], ast.AlterTable) or statements[0].explain:
            raise UserError(one)
        named = self._connection.catalog.table(statements[0].table).name
        if named != self.name:
            raise UserError(f"{what} of {self.name}: the statement alters {named}, not {self.name}")
        return whole, statements[0]


class Scan:
    """The rows a `Table.scan` selects, read when asked for. Each `to_*` call reads the table as it
    is then (a new snapshot): rows committed between two calls are seen by the second."""

    def __init__(self, table: Table, version: SchemaVersion, columns: list[str], condition):
        self.table = table
        self.version = version
        self.columns = columns
        self._condition = condition  # (expression, the columns it reads) or None

    def __repr__(self) -> str:
        return f"<alterflow.Scan of {self.table.name} version {self.version.version}: {', '.join(self.columns)}>"

    @property
    def schema(self) -> pa.Schema:
        from alterflow.arrow_schema import arrow_field

        return _pa().schema([arrow_field(self.version.column(name)) for name in self.columns])

    def to_batches(self) -> Iterator[pa.RecordBatch]:
        """The rows as Arrow record batches, read one data file (primary-key tables: one tablet)
        at a time. A data file that GC deleted meanwhile (the scan outlived the retention period)
        makes the scan plan again on a new snapshot, up to READ_ATTEMPTS times, while no batch
        has been handed out; after that it is a ScanGone line (rows handed out stand)."""
        from alterflow.engine.session import READ_ATTEMPTS
        from alterflow.read.arrow_read import read_snapshot_arrow

        read = self._read_columns()
        attempt, handed_out = 1, False
        while True:
            snapshot, warehouse = self._snapshot()
            try:
                for files in _units(snapshot):
                    part = read_snapshot_arrow(warehouse, dataclasses.replace(snapshot, files=files), self.version, columns=read)
                    if self._condition is not None:
                        part = part.filter(self._condition[0])
                    for batch in part.select(self.columns).to_batches():
                        handed_out = True
                        yield batch
                return
            except FileNotFoundError:
                if handed_out or attempt >= READ_ATTEMPTS:
                    raise ScanGone(
                        f"scan of {self.table.name}: a data file it read is gone (GC deleted it: the scan ran longer than the "
                        f"retention period, ALTERFLOW_GC_RETENTION){' after rows were handed out' if handed_out else ''}; "
                        "run the scan again"
                    ) from None
                attempt += 1

    def to_arrow(self) -> pa.Table:
        """The rows as one Arrow table. It holds every batch until the end, so a file gone midway
        makes it read again from a new snapshot (up to READ_ATTEMPTS times) before ScanGone."""
        from alterflow.engine.session import READ_ATTEMPTS

        attempt = 1
        while True:
            try:
                return _pa().Table.from_batches(list(self.to_batches()), schema=self.schema)
            except ScanGone:
                if attempt >= READ_ATTEMPTS:
                    raise
                attempt += 1

    def to_pandas(self) -> pd.DataFrame:
        """The rows as a pandas DataFrame (Arrow's conversion: LARGEINT and DECIMAL become Python
        Decimals, DATETIME pandas timestamps)."""
        return self.to_arrow().to_pandas()

    def _snapshot(self) -> tuple[TableSnapshot, pathlib.Path]:
        connection = self.table._connection
        snapshot = connection.catalog.snapshot(self.table.name)
        if snapshot.table.id != self.version.table_id:
            raise ScanError(f"scan of {self.table.name}: the table was dropped and created again since the scan was made")
        return snapshot, connection.warehouse

    def _read_columns(self) -> list[str]:
        """The scan's columns and those its condition reads, in the version's order."""
        wanted = set(self.columns) | set(self._condition[1] if self._condition else ())
        return [c.name for c in self.version.columns if c.name in wanted]


def _units(snapshot: TableSnapshot) -> Iterator[tuple]:
    """The snapshot's files in the groups a streaming read reads together: one file each, or, for
    a primary-key table, a tablet's files (merge-on-read keeps the latest row per key in it)."""
    if not snapshot.current.primary_key:
        for data_file in sorted(snapshot.files, key=lambda f: pathlib.PurePosixPath(f.path).name):
            yield (data_file,)
        return
    tablets: dict[int, list] = {}
    for data_file in snapshot.files:
        tablets.setdefault(data_file.tablet_id, []).append(data_file)
    for tablet_id in sorted(tablets):
        yield tuple(tablets[tablet_id])


def _condition(where, version: SchemaVersion, table: str):
    """(Arrow expression, the columns it reads) of a scan's `where`, or None."""
    if where is None:
        return None
    if isinstance(where, str):
        from alterflow.read.scan_condition import ScanCondition

        condition = ScanCondition(where, version, table)
        return condition.expression, condition.columns
    import pyarrow.compute as pc

    if isinstance(where, pc.Expression):
        names = [c.name for c in version.columns]
        return where, names  # an expression may read any column of the version
    raise ScanError(f"scan of {table}: where is a SQL condition or a pyarrow.compute.Expression, not {type(where).__name__}")


def _batches_of(data: Any, table: str) -> Iterable:
    """`append`'s data as a stream of Arrow tables or record batches."""
    pa = _pa()
    if isinstance(data, pa.Table | pa.RecordBatch):
        return [data]
    if isinstance(data, pa.RecordBatchReader):
        return data
    module = type(data).__module__
    if module.startswith("pandas") and type(data).__name__ == "DataFrame":
        try:
            return [pa.Table.from_pandas(data, preserve_index=False)]
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            raise AppendError(f"append into {table}: the DataFrame does not convert to Arrow: {_first(exc)}") from None
    if isinstance(data, str | bytes | dict) or not isinstance(data, Iterable):
        raise AppendError(
            f"append into {table}: data is a pyarrow Table, RecordBatch or RecordBatchReader, an iterable of them, "
            f"or a pandas DataFrame, not {type(data).__name__}"
        )
    if isinstance(data, list | tuple):  # held in memory: a load a schema change overtook writes it again
        return list(_checked(data, table))
    return _checked(data, table)


def _checked(batches: Iterable, table: str) -> Iterator:
    pa = _pa()
    for number, batch in enumerate(batches, start=1):
        if not isinstance(batch, pa.Table | pa.RecordBatch):
            raise AppendError(
                f"append into {table}: item {number} of the data is a {type(batch).__name__}, not a pyarrow Table or RecordBatch"
            )
        yield batch


def _properties(properties: dict[str, Any]) -> dict[str, str]:
    """Keyword properties as the statement's PROPERTIES take them: text, booleans as true/false."""
    from alterflow.workflow.request import property_text

    out = {}
    for key, value in properties.items():
        text = property_text(value)
        if text is None:
            raise UserError(f"alter: property {key} takes text, a number or a boolean, not {type(value).__name__}")
        out[key] = text
    return out


def _first(exc: BaseException) -> str:
    from alterflow.errors import first_line

    return first_line(exc, 150)


def _pa():
    import pyarrow

    return pyarrow
