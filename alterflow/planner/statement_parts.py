"""What both planners check, build and render: names and their limits, literals, column definitions."""

from __future__ import annotations

from collections.abc import Iterable

from alterflow.catalog.schema import Column
from alterflow.sql.ast import ColumnDef, Literal
from alterflow.sql.quoting import quote_string
from alterflow.values.types import DataType

MAX_BUCKETS = 1024
FLOATING = frozenset({"FLOAT", "DOUBLE"})


def is_floating(dtype) -> bool:
    return str(getattr(dtype, "name", "")).upper() in FLOATING


def literal_sql(lit: Literal) -> str:
    if lit.text:
        return lit.text
    if lit.kind == "null" or lit.value is None:
        return "NULL"
    if lit.kind == "string":
        return quote_string(str(lit.value))
    if lit.kind == "bool":
        return "TRUE" if lit.value else "FALSE"
    return str(lit.value)


def column_def_sql(col: ColumnDef) -> str:
    parts = [col.name, col.type]
    if col.nullable is True:
        parts.append("NULL")
    elif col.nullable is False:
        parts.append("NOT NULL")
    if col.default is not None:
        parts.append("DEFAULT " + literal_sql(col.default))
    if col.comment is not None:
        parts.append("COMMENT " + quote_string(col.comment))
    if col.position is not None:
        if col.position.first:
            parts.append("FIRST")
        elif col.position.after is not None:
            parts.append("AFTER " + col.position.after)
    return " ".join(parts)


def declared_column(column_id: int, cdef: ColumnDef, dtype: DataType, nullable: bool, default: object) -> Column:
    """A new column as `cdef` declares it: its DEFAULT (None when it states none) is both the value
    of the rows written before it existed and that of the inserts that omit it."""
    return Column(
        id=column_id,
        name=cdef.name,
        type=dtype,
        nullable=nullable,
        initial_default=default,
        write_default=default,
        comment=cdef.comment,
    )


def name_list(names: Iterable[str]) -> str:
    return "(" + ", ".join(names) + ")"


def first_duplicate(names: Iterable[str]) -> str | None:
    seen: set[str] = set()
    for name in names:
        key = name.lower()
        if key in seen:
            return name
        seen.add(key)
    return None
