"""Parsed statements. Plain, immutable dataclasses: the parser builds them, the session runs them.

Literals are carried as `Literal` (the SQL text kind plus the Python value the parser read), so the
planner decides whether a literal fits a column's type. Names keep the spelling the user typed;
comparisons are case-insensitive elsewhere.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from typing import Literal as TypingLiteral

__all__ = [
    "Literal",
    "ColumnDef",
    "Position",
    "CreateTable",
    "DropObject",
    "DropTable",
    "Insert",
    "Query",
    "Select",
    "ExplainSelect",
    "SetOption",
    "CreateView",
    "DropView",
    "TableStatement",
    "Describe",
    "ColumnDefClause",
    "ColumnClause",
    "AddColumn",
    "AddColumns",
    "DropColumn",
    "ModifyColumn",
    "RenameColumn",
    "SetDefault",
    "DropDefault",
    "LayoutClause",
    "OrderBy",
    "DistributeBy",
    "RevertToVersion",
    "AlterClause",
    "AlterTable",
    "ShowAlter",
    "CancelAlter",
    "ResumeAlter",
    "ShowSchemaVersions",
    "Statement",
]


@dataclass(frozen=True)
class Literal:
    """A SQL literal: kind is 'null', 'bool', 'int', 'decimal' (any numeric text with a dot or
    exponent; value keeps the text), 'string'. `value` is None, bool, int, or str."""

    kind: TypingLiteral["null", "bool", "int", "decimal", "string"]
    value: Any
    text: str  # the literal as written, for messages (e.g. "'abc'", "-1.5", "NULL")


@dataclass(frozen=True)
class Position:
    """FIRST (after is None, first is True) or AFTER col."""

    first: bool = False
    after: str | None = None


@dataclass(frozen=True)
class ColumnDef:
    """A column as a statement defines it: CREATE TABLE's, ADD COLUMN's, MODIFY COLUMN's."""

    name: str
    type: str  # the type as written, normalised to upper case, e.g. "DECIMAL(10,2)", "VARCHAR(20)", "INT"
    nullable: bool | None = None  # None: not stated (CREATE TABLE treats as NULL; MODIFY keeps)
    default: Literal | None = None  # None: not stated. Literal(kind='null') for DEFAULT NULL
    comment: str | None = None  # None: not stated
    position: Position | None = None


@dataclass(frozen=True)
class CreateTable:
    """CREATE TABLE [IF NOT EXISTS] name (columns) [keys, PARTITION BY, DISTRIBUTED BY, ORDER BY]."""

    name: str
    columns: tuple[ColumnDef, ...]
    primary_key: tuple[str, ...] = ()
    partition_by: tuple[str, ...] = ()
    distributed_by: tuple[str, ...] | None = None  # None: not stated
    buckets: int | None = None
    order_by: tuple[str, ...] = ()
    if_not_exists: bool = False
    sql: str = ""  # the statement text as written (recorded as version 1's statement)


@dataclass(frozen=True)
class DropObject:
    """DROP TABLE / DROP VIEW [IF EXISTS] name."""

    name: str
    if_exists: bool = False


@dataclass(frozen=True)
class DropTable(DropObject):
    """DROP TABLE [IF EXISTS] name."""


@dataclass(frozen=True)
class Insert:
    """INSERT INTO table [(columns)] VALUES (...), ... or INSERT INTO table [(columns)] SELECT ..."""

    table: str
    columns: tuple[str, ...] | None  # None: all columns of the current version, in order
    rows: tuple[tuple[Literal, ...], ...] | None = None  # VALUES rows (literals only)
    query: str | None = None  # INSERT ... SELECT: the SELECT's SQL text, Spark dialect


@dataclass(frozen=True)
class Query:
    """A query statement: SELECT, or EXPLAIN SELECT."""

    sql: str  # Spark SQL text of the whole query (EXPLAIN SELECT's without EXPLAIN)
    tables: tuple[str, ...]  # names of the tables/views it reads (catalog objects, CTE names excluded)
    # sqlglot could not parse it: `tables` are the query's words, some of them catalog objects,
    # and Spark, not the local engine, reads the text as written (docs/semantics.md, "Queries")
    unparsed: bool = False


@dataclass(frozen=True)
class Select(Query):
    """A query (SELECT, WITH ..., set operations), run on one of two engines."""


@dataclass(frozen=True)
class ExplainSelect(Query):
    """EXPLAIN SELECT ...: which engine would run the query, and why."""


@dataclass(frozen=True)
class SetOption:
    """SET name = value: a setting of this session (only `engine`: auto, local or spark)."""

    name: str
    value: str


@dataclass(frozen=True)
class CreateView:
    """CREATE VIEW name AS SELECT ...: pinned to the table versions current now."""

    name: str
    query: str  # Spark SQL text of the SELECT
    tables: tuple[str, ...]  # as Query.tables: guessed words where sqlglot could not parse it
    unparsed: bool = False


@dataclass(frozen=True)
class DropView(DropObject):
    """DROP VIEW [IF EXISTS] name."""


@dataclass(frozen=True)
class TableStatement:
    """A statement on one table that takes nothing else: DESCRIBE, CANCEL / RESUME ALTER, SHOW SCHEMA VERSIONS."""

    table: str


@dataclass(frozen=True)
class Describe(TableStatement):
    """DESCRIBE table: its current version's columns."""


@dataclass(frozen=True)
class ColumnDefClause:
    """A clause that states a column definition: ADD COLUMN, MODIFY COLUMN."""

    column: ColumnDef


@dataclass(frozen=True)
class AddColumn(ColumnDefClause):
    """ADD COLUMN def [FIRST | AFTER col]."""


@dataclass(frozen=True)
class AddColumns:
    """ADD COLUMN (def, def, ...)."""

    columns: tuple[ColumnDef, ...]


@dataclass(frozen=True)
class ColumnClause:
    """A clause on one existing column, by name: DROP COLUMN, SET / DROP DEFAULT."""

    name: str


@dataclass(frozen=True)
class DropColumn(ColumnClause):
    """DROP COLUMN name."""


@dataclass(frozen=True)
class ModifyColumn(ColumnDefClause):
    """MODIFY COLUMN def: a new type, nullability, default or comment (attributes of the def left None
    were not restated and are kept)."""


@dataclass(frozen=True)
class RenameColumn:
    """RENAME COLUMN old [TO] new (TO is optional, as in Doris)."""

    old: str
    new: str


@dataclass(frozen=True)
class SetDefault(ColumnClause):
    """ALTER COLUMN name SET DEFAULT literal."""

    default: Literal


@dataclass(frozen=True)
class DropDefault(ColumnClause):
    """ALTER COLUMN name DROP DEFAULT."""


@dataclass(frozen=True)
class LayoutClause:
    """A clause that lays the data out anew by columns (a heavyweight change): ORDER BY, DISTRIBUTED BY."""

    columns: tuple[str, ...]


@dataclass(frozen=True)
class OrderBy(LayoutClause):
    """ORDER BY (columns): a new sort key."""


@dataclass(frozen=True)
class DistributeBy(LayoutClause):
    """DISTRIBUTED BY HASH(columns) BUCKETS n: a new bucketing."""

    buckets: int


@dataclass(frozen=True)
class RevertToVersion:
    """REVERT TO VERSION n: version n's columns and layout again, as a new version number."""

    version: int


AlterClause = (
    AddColumn | AddColumns | DropColumn | ModifyColumn | RenameColumn | SetDefault | DropDefault | OrderBy | DistributeBy | RevertToVersion
)


@dataclass(frozen=True)
class AlterTable:
    """[EXPLAIN [ANALYZE]] ALTER TABLE table clause, ... [PROPERTIES (...)]."""

    table: str
    clauses: tuple[AlterClause, ...]
    properties: dict[str, str] = field(default_factory=dict)
    explain: bool = False
    sql: str = ""  # the statement text as written (recorded in SHOW SCHEMA VERSIONS)
    analyze: bool = False  # EXPLAIN ANALYZE: also scan what a rewrite would read (explain is then True)


@dataclass(frozen=True)
class ShowAlter:
    """SHOW ALTER TABLE COLUMN [FROM table]: the alter jobs and their states."""

    table: str | None = None


@dataclass(frozen=True)
class CancelAlter(TableStatement):
    """CANCEL ALTER TABLE COLUMN FROM table: its running heavyweight job."""


@dataclass(frozen=True)
class ResumeAlter(TableStatement):
    """RESUME ALTER TABLE COLUMN FROM table: a postponed swap or an orphaned job."""


@dataclass(frozen=True)
class ShowSchemaVersions(TableStatement):
    """SHOW SCHEMA VERSIONS FROM table."""


Statement = (
    CreateTable
    | DropTable
    | Insert
    | Select
    | ExplainSelect
    | SetOption
    | CreateView
    | DropView
    | Describe
    | AlterTable
    | ShowAlter
    | CancelAlter
    | ResumeAlter
    | ShowSchemaVersions
)
