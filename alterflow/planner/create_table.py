"""CREATE TABLE: validate the statement and build the table's first schema version."""

from __future__ import annotations

from alterflow.catalog.schema import Column, SchemaVersion
from alterflow.planner.errors import CreateTableRejected, one_line
from alterflow.planner.statement_parts import (
    MAX_BUCKETS,
    first_duplicate,
    is_floating,
    valid_name,
)
from alterflow.sql.ast import CreateTable
from alterflow.types import InvalidType, InvalidValue, coerce_literal, parse_type

__all__ = ["plan_create_table"]


def plan_create_table(stmt: CreateTable, table_id: int) -> tuple[SchemaVersion, int]:
    """Validate `stmt` and return (schema version 1, next free column id).

    Column ids start at 1 in declaration order. Raises CreateTableRejected with a one-line message
    naming the table, the column and the rule. `statement` of the version is left empty: the
    caller records the statement text.
    """
    table = stmt.name

    def reject(message: str) -> CreateTableRejected:
        return CreateTableRejected(one_line(f"CREATE TABLE {table}: {message}"))

    if not valid_name(table):
        raise reject("invalid table name: names match [A-Za-z_][A-Za-z0-9_]* and have at most 128 characters")
    if not stmt.columns:
        raise reject("a table needs at least one column")

    by_name: dict[str, int] = {}  # lower-case name -> index in stmt.columns
    for i, cdef in enumerate(stmt.columns):
        if not valid_name(cdef.name):
            raise reject(f"invalid column name {cdef.name!r}: names match [A-Za-z_][A-Za-z0-9_]* and have at most 128 characters")
        if cdef.name.lower() in by_name:
            raise reject(f"duplicate column name {cdef.name}")
        by_name[cdef.name.lower()] = i

    def resolve(names: tuple[str, ...], what: str) -> list[int]:
        dup = first_duplicate(names)
        if dup is not None:
            raise reject(f"column {dup} appears twice in the {what}")
        out = []
        for name in names:
            if name.lower() not in by_name:
                raise reject(f"unknown column {name} in the {what}")
            out.append(by_name[name.lower()])
        return out

    pk_idx = resolve(tuple(stmt.primary_key), "primary key")
    pk_set = set(pk_idx)

    columns: list[Column] = []
    for i, cdef in enumerate(stmt.columns):
        name = cdef.name
        if cdef.position is not None and (cdef.position.first or cdef.position.after is not None):
            raise reject(f"column {name}: FIRST / AFTER is only allowed in ALTER TABLE")
        try:
            dtype = parse_type(cdef.type)
        except InvalidType as exc:
            raise reject(f"column {name}: {exc}") from None
        in_pk = i in pk_set
        if in_pk:
            if cdef.nullable is True:
                raise reject(f"column {name} cannot be NULL: it is a primary-key column")
            if is_floating(dtype):
                raise reject(f"column {name} cannot be in the primary key: {dtype.sql()} is not allowed in a key")
            nullable = False
        else:
            nullable = cdef.nullable is not False
        default = None
        if cdef.default is not None:
            if cdef.default.kind == "null":
                if not nullable:
                    raise reject(f"column {name}: DEFAULT NULL does not fit a NOT NULL column")
                default = None
            else:
                try:
                    default = coerce_literal(cdef.default, dtype)
                except InvalidValue as exc:
                    raise reject(f"column {name}: DEFAULT {exc}") from None
                if default is None and not nullable:
                    raise reject(f"column {name}: DEFAULT NULL does not fit a NOT NULL column")
        columns.append(
            Column(
                id=i + 1,
                name=name,
                type=dtype,
                nullable=nullable,
                initial_default=default,
                write_default=default,
                comment=cdef.comment,
            )
        )

    part_idx = resolve(tuple(stmt.partition_by), "partition")
    if pk_idx:
        for i in part_idx:
            if i not in pk_set:
                raise reject(f"partition column {columns[i].name} must be part of the primary key")

    if stmt.distributed_by is None:
        dist_idx = list(pk_idx)
    else:
        if not stmt.distributed_by:
            raise reject("DISTRIBUTED BY HASH needs at least one column")
        dist_idx = resolve(tuple(stmt.distributed_by), "distribution")
    for i in dist_idx:
        col = columns[i]
        if is_floating(col.type):
            raise reject(f"distribution column {col.name}: {col.type.sql()} cannot be a distribution column")
        if pk_idx and i not in pk_set:
            raise reject(f"distribution column {col.name} must be part of the primary key")
    buckets = 1 if stmt.buckets is None else stmt.buckets
    if isinstance(buckets, bool) or not isinstance(buckets, int) or not 1 <= buckets <= MAX_BUCKETS:
        raise reject(f"BUCKETS must be between 1 and {MAX_BUCKETS}, got {buckets}")

    sort_idx = resolve(tuple(stmt.order_by), "ORDER BY")

    def ids(indexes: list[int]) -> tuple[int, ...]:
        return tuple(columns[i].id for i in indexes)

    version = SchemaVersion(
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
    return version, len(columns) + 1
