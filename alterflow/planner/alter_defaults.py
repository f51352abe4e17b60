"""Column defaults in ALTER TABLE: a DEFAULT literal checked against its column, a stored default
carried over to a column's new type, and a default as a reason shows it."""

from __future__ import annotations

from alterflow.planner.alter_state import ClauseRejected
from alterflow.sql.ast import Literal
from alterflow.sql.quoting import quote_string
from alterflow.values.types import DataType, InvalidValue, coerce_literal, coerce_value, format_value

__all__ = ["converted_default", "default_sql", "default_value"]


def default_value(lit: Literal, dtype: DataType, nullable: bool, what: str):
    """The value a DEFAULT literal gives a column of `dtype`; `what` starts the rejection's message."""
    if lit.kind == "null":
        if not nullable:
            raise ClauseRejected(f"{what}: DEFAULT NULL does not fit a NOT NULL column")
        return None
    try:
        value = coerce_literal(lit, dtype)
    except InvalidValue as exc:
        raise ClauseRejected(f"{what}: DEFAULT {exc}") from None
    if value is None and not nullable:
        raise ClauseRejected(f"{what}: DEFAULT NULL does not fit a NOT NULL column")
    return value


def default_sql(value, dtype: DataType) -> str:
    """A default value as SQL text (strings quoted)."""
    text = format_value(value, dtype)
    if isinstance(value, str):
        return quote_string(text)
    return text


def converted_default(value, old: DataType, new: DataType):
    """A stored default of type `old` as a value of type `new` (InvalidValue when it does not fit)."""
    if value is None:
        return None
    if new.is_string and not isinstance(value, str):
        value = format_value(value, old)
    elif old.name == "DATETIME" and new.name == "DATE":
        value = value.date()  # the conversion drops the time of day
    return coerce_value(value, new)
