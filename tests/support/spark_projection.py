"""The evolved read's projection written with Spark's Column API, one call into the JVM per
column: the reference `evolved_read.projection_sql` (the SQL text `read_snapshot` uses) is held
equal to (tests/read/test_projection_sql.py, tests/read/test_narrowing_read.py)."""

from __future__ import annotations

from alterflow.catalog.schema import Column, SchemaVersion
from alterflow.read.evolved_read import _cast_sql, _sql_name
from alterflow.values.types import format_value, to_spark


def _default_literal(column: Column):
    from pyspark.sql import functions as F

    spark_type = to_spark(column.type)
    if column.initial_default is None:
        return F.lit(None).cast(spark_type)
    if column.type.is_string:
        return F.lit(column.initial_default).cast(spark_type)
    return F.lit(format_value(column.initial_default, column.type)).cast(spark_type)


def projection(source: SchemaVersion, target: SchemaVersion) -> list:
    """Spark columns that turn rows of `source` into rows of `target`, matched by column id."""
    from pyspark.sql import functions as F

    columns = []
    for column in target.columns:
        found = source.column_by_id(column.id)
        if found is None:
            expr = _default_literal(column)
        else:
            expr = F.col(f"`{found.name}`")
            if found.type != column.type:
                expr = F.expr(_cast_sql(_sql_name(found.name), found.type, column))
        columns.append(expr.alias(column.name, metadata={"alterflow.type": column.type.sql()}))
    return columns
