"""CREATE TABLE: validate the statement and build the table's first schema version.

Each rule is a function; `plan_create_table` runs them in the order the user reads the statement
(the table, its column names, the primary key, each column, partitioning, distribution, buckets,
sort key), so the first broken rule is the one reported.
"""

from __future__ import annotations

from alterflow.catalog.schema import Column, SchemaVersion
from alterflow.planner.rejections import CreateTableRejected, one_line
from alterflow.planner.statement_parts import MAX_BUCKETS, declared_column, first_duplicate, is_floating
from alterflow.sql.ast import ColumnDef, CreateTable
from alterflow.sql.names import valid_name
from alterflow.values.types import DataType, InvalidType, InvalidValue, coerce_literal, parse_type

__all__ = ["plan_create_table"]


class _Broken(Exception):
    """A rule the statement breaks; the argument is the message without the "CREATE TABLE t: " prefix."""


def plan_create_table(stmt: CreateTable, table_id: int) -> tuple[SchemaVersion, int]:
    """Validate `stmt` and return (schema version 1, next free column id).

    Column ids start at 1 in declaration order. Raises CreateTableRejected with a one-line message
    naming the table, the column and the rule. `statement` of the version is left empty: the
    caller records the statement text.
    """
    try:
        version = _first_version(stmt, table_id)
    except _Broken as exc:
        raise CreateTableRejected(one_line(f"CREATE TABLE {stmt.name}: {exc}")) from None
    return version, len(version.columns) + 1


def _first_version(stmt: CreateTable, table_id: int) -> SchemaVersion:
    _check_table(stmt)
    by_name = _column_indexes(stmt)
    pk_idx = _resolve(tuple(stmt.primary_key), "primary key", by_name)
    columns = [_column(i, cdef, in_pk=i in pk_idx) for i, cdef in enumerate(stmt.columns)]
    part_idx = _resolve(tuple(stmt.partition_by), "partition", by_name)
    _check_in_primary_key(part_idx, pk_idx, columns, "partition")
    dist_idx = _distribution(stmt, pk_idx, by_name, columns)
    buckets = _buckets(stmt)
    sort_idx = _resolve(tuple(stmt.order_by), "ORDER BY", by_name)

    def ids(indexes: list[int]) -> tuple[int, ...]:
        return tuple(columns[i].id for i in indexes)

    return SchemaVersion(
        table_id=table_id,
        version=1,
        columns=tuple(columns),
        primary_key=ids(pk_idx),
        partition_by=ids(part_idx),
        distributed_by=ids(dist_idx),
        buckets=buckets,
        sort_key=ids(sort_idx),
        statement="",
    )


def _check_table(stmt: CreateTable) -> None:
    if not valid_name(stmt.name):
        raise _Broken("invalid table name: names match [A-Za-z_][A-Za-z0-9_]* and have at most 128 characters")
    if not stmt.columns:
        raise _Broken("a table needs at least one column")


def _column_indexes(stmt: CreateTable) -> dict[str, int]:
    """Lower-case column name -> its index in the statement; names valid and distinct."""
    by_name: dict[str, int] = {}
    for i, cdef in enumerate(stmt.columns):
        if not valid_name(cdef.name):
            raise _Broken(f"invalid column name {cdef.name!r}: names match [A-Za-z_][A-Za-z0-9_]* and have at most 128 characters")
        if cdef.name.lower() in by_name:
            raise _Broken(f"duplicate column name {cdef.name}")
        by_name[cdef.name.lower()] = i
    return by_name


def _resolve(names: tuple[str, ...], what: str, by_name: dict[str, int]) -> list[int]:
    """The indexes of the columns a key names, each once."""
    dup = first_duplicate(names)
    if dup is not None:
        raise _Broken(f"column {dup} appears twice in the {what}")
    out = []
    for name in names:
        if name.lower() not in by_name:
            raise _Broken(f"unknown column {name} in the {what}")
        out.append(by_name[name.lower()])
    return out


def _column(i: int, cdef: ColumnDef, in_pk: bool) -> Column:
    """Column id i + 1 as declared: a primary-key column is NOT NULL and not floating."""
    name = cdef.name
    if cdef.position is not None and (cdef.position.first or cdef.position.after is not None):
        raise _Broken(f"column {name}: FIRST / AFTER is only allowed in ALTER TABLE")
    try:
        dtype = parse_type(cdef.type)
    except InvalidType as exc:
        raise _Broken(f"column {name}: {exc}") from None
    if in_pk:
        if cdef.nullable is True:
            raise _Broken(f"column {name} cannot be NULL: it is a primary-key column")
        if is_floating(dtype):
            raise _Broken(f"column {name} cannot be in the primary key: {dtype.sql()} is not allowed in a key")
    nullable = not in_pk and cdef.nullable is not False
    default = _default(cdef, dtype, nullable)
    return declared_column(i + 1, cdef, dtype, nullable, default)


def _default(cdef: ColumnDef, dtype: DataType, nullable: bool):
    """The value of the column's DEFAULT (None when it states none)."""
    if cdef.default is None:
        return None
    if cdef.default.kind == "null":
        if not nullable:
            raise _Broken(f"column {cdef.name}: DEFAULT NULL does not fit a NOT NULL column")
        return None
    try:
        default = coerce_literal(cdef.default, dtype)
    except InvalidValue as exc:
        raise _Broken(f"column {cdef.name}: DEFAULT {exc}") from None
    if default is None and not nullable:
        raise _Broken(f"column {cdef.name}: DEFAULT NULL does not fit a NOT NULL column")
    return default


def _check_in_primary_key(indexes: list[int], pk_idx: list[int], columns: list[Column], what: str) -> None:
    """With a primary key, the partition and distribution columns are part of it."""
    if pk_idx:
        for i in indexes:
            if i not in pk_idx:
                raise _Broken(f"{what} column {columns[i].name} must be part of the primary key")


def _distribution(stmt: CreateTable, pk_idx: list[int], by_name: dict[str, int], columns: list[Column]) -> list[int]:
    """The distribution columns: the stated ones, or the primary key; none floating."""
    if stmt.distributed_by is None:
        dist_idx = list(pk_idx)
    else:
        if not stmt.distributed_by:
            raise _Broken("DISTRIBUTED BY HASH needs at least one column")
        dist_idx = _resolve(tuple(stmt.distributed_by), "distribution", by_name)
    for i in dist_idx:
        col = columns[i]
        if is_floating(col.type):
            raise _Broken(f"distribution column {col.name}: {col.type.sql()} cannot be a distribution column")
        _check_in_primary_key([i], pk_idx, columns, "distribution")
    return dist_idx


def _buckets(stmt: CreateTable) -> int:
    buckets = 1 if stmt.buckets is None else stmt.buckets
    if isinstance(buckets, bool) or not isinstance(buckets, int) or not 1 <= buckets <= MAX_BUCKETS:
        raise _Broken(f"BUCKETS must be between 1 and {MAX_BUCKETS}, got {buckets}")
    return buckets
