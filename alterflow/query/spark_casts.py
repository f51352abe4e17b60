"""Spark's CAST (ANSI off) of a translated value to another type, as DuckDB text (`cast_sql`), for
the pairs of types whose answers DuckDB gives the same, a fractional value to an integral type as
the JVM narrows it, and a STRING through the macros of `string_casts`; any other pair raises
`NotLocal`. The CAST rule itself is in `expressions.py`; the math functions cast with it too.
"""

from __future__ import annotations

from alterflow.query import sql_types as st
from alterflow.query.expression_core import NotLocal, Value, cast, wrap
from alterflow.query.sql_types import SqlType
from alterflow.query.string_casts import from_string


def cast_sql(value: Value, to: SqlType) -> str:
    """Spark's CAST (ANSI off) of `value` to `to`, for the pairs whose answers DuckDB gives the same."""
    source = value.type
    if source == to:
        return value.sql
    if source.name == "void":
        return f"CAST(NULL AS {to.duckdb})"
    if source.integral and to.integral:
        return cast(value, to) if st.INTEGRAL_BITS[to.name] >= st.INTEGRAL_BITS[source.name] else wrap(value.sql, to)
    if (source.integral or source.name == "decimal") and to.name == "decimal":
        return f"TRY_CAST({value.sql} AS {to.duckdb})"  # NULL when it does not fit
    if source.integral and to.fractional or source.name == "float" and to.name == "double":
        return cast(value, to)
    if source.name == "double" and to.name == "float":  # past the float's range: an infinity, where DuckDB fails
        edge = "CAST('3.4028235677973366e38' AS DOUBLE)"  # half a unit past the largest float
        return (
            f"(CASE WHEN isnan({value.sql}) THEN CAST('NaN' AS FLOAT) WHEN {value.sql} >= {edge} THEN CAST('Infinity' AS FLOAT) "
            f"WHEN {value.sql} <= -{edge} THEN CAST('-Infinity' AS FLOAT) ELSE CAST({value.sql} AS FLOAT) END)"
        )
    if source.name == "decimal" and to.fractional and source.precision <= 15:
        return cast(value, to)  # the unscaled value and the power of ten are exact doubles
    if to == st.STRING and (source.integral or source.name in ("boolean", "decimal", "date")):
        return cast(value, to)
    if source.name == "date" and to == st.TIMESTAMP_NTZ or source == st.TIMESTAMP_NTZ and to.name == "date":
        return cast(value, to)
    if source.name == "boolean" and to.integral:
        return cast(value, to)
    if source.integral and to.name == "boolean":
        return cast(value, to)
    if source.fractional and to.integral:
        return _fractional_to_integral(value, to)
    if source == st.STRING:
        return from_string(value, to)
    raise NotLocal(f"CAST from {source} to {to}")


def _fractional_to_integral(value: Value, to: SqlType) -> str:
    """The JVM's narrowing (ANSI off): toward zero, NaN 0, saturated at the bounds of INT (of
    BIGINT for a BIGINT); TINYINT and SMALLINT through INT, then wrapped around. DuckDB's own
    CAST rounds and fails out of range."""
    wide = st.BIGINT if to == st.BIGINT else st.INT
    lo, hi = -(1 << (st.INTEGRAL_BITS[wide.name] - 1)), (1 << (st.INTEGRAL_BITS[wide.name] - 1)) - 1
    d = cast(value, st.DOUBLE)
    sql = (
        f"(CASE WHEN isnan({d}) THEN CAST(0 AS {wide.duckdb}) WHEN {d} >= CAST('{hi}' AS DOUBLE) THEN CAST('{hi}' AS {wide.duckdb}) "
        f"WHEN {d} <= CAST('{lo}' AS DOUBLE) THEN CAST('{lo}' AS {wide.duckdb}) ELSE CAST(trunc({d}) AS {wide.duckdb}) END)"
    )
    return sql if wide == to else wrap(sql, to)
