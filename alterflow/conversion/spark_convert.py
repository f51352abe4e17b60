"""Converting rows from schema version OLD to version NEW in Spark (the history of a heavyweight
ALTER), value for value and failure for failure the same as `arrow_convert.convert_arrow`.

Each column is cast by its family's kernel in `alterflow.values.spark_kernels` (the Spark
kernels of `alterflow.values.cast_rules`); this module adds the table: columns matched by id,
defaults of added columns, extra columns kept, one failure flag per converted column, each value
computed once before its flag.

pyspark is imported inside the functions: importing this module starts nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from alterflow.catalog.schema import Column as SchemaColumn
from alterflow.catalog.schema import SchemaVersion, name_key
from alterflow.catalog.states import OnCastError
from alterflow.values.cast_rules import can_fail, family, uses_java_float_text
from alterflow.values.spark_kernels import SPARK_KERNELS, Stages, check_jvm_float_text, quoted, spark_type
from alterflow.values.types import encode_value

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import Column, DataFrame

__all__ = ["FAILED_PREFIX", "failure_column", "convert_frame"]

FAILED_PREFIX = "af$failed_"
VALUE_PREFIX = "af$value_"


def failure_column(column_id: int) -> str:
    """The name of the flag column of a converted column: "af$failed_<column id>"."""
    return f"{FAILED_PREFIX}{column_id}"


# --------------------------------------------------------------------------------------------
# Defaults of added columns
# --------------------------------------------------------------------------------------------


def _default_literal(column: SchemaColumn) -> Column:
    """The initial default of an added column (or NULL) as a literal of the column's Spark type."""
    from pyspark.sql import functions as F

    target = spark_type(column.type)
    value = column.initial_default
    if value is None:
        return F.lit(None).cast(target)
    t = column.type
    if t.name == "BOOLEAN":
        return F.lit(bool(value)).cast(target)
    if t.is_float:
        return F.lit(float(value)).cast(target)
    if t.name == "DATETIME":
        return F.lit(encode_value(value, t)).cast("timestamp_ntz")
    # integers, LARGEINT, DECIMAL, DATE and strings: their text, cast (exact)
    return F.lit(str(encode_value(value, t))).cast(target) if not t.is_string else F.lit(value)


# --------------------------------------------------------------------------------------------
# A frame
# --------------------------------------------------------------------------------------------


def convert_frame(frame: DataFrame, old: SchemaVersion, new: SchemaVersion, on_cast_error: OnCastError = OnCastError.FAIL):
    """Convert `frame` (OLD's columns, named as in OLD, plus extra columns such as "af$txn")
    to NEW: NEW's columns in NEW's order (names and `to_spark` types), then the extras
    unchanged, then one boolean column "af$failed_<column id>" per converted column that can
    fail, TRUE where a non-NULL value failed to convert (its value is NULL in both modes).

    Returns (converted frame, names of the flag columns). ValueError for a rejected type
    change, an unknown `on_cast_error` or a column of OLD missing from `frame`.
    """
    from pyspark.sql import functions as F

    if on_cast_error not in (OnCastError.FAIL, OnCastError.NULL):  # quarantine comes as null: its rows are flagged
        raise ValueError(f"on_cast_error must be 'fail' or 'null', not {on_cast_error!s}")
    frame_names = {name_key(name): name for name in frame.columns}
    old_by_id = {column.id: column for column in old.columns}
    old_keys = {name_key(column.name) for column in old.columns}
    for column in old.columns:
        if name_key(column.name) not in frame_names:
            raise ValueError(f"the rows have no column {column.name} of version {old.version}")

    if any(column.id in old_by_id and uses_java_float_text(old_by_id[column.id].type, column.type) for column in new.columns):
        check_jvm_float_text(frame)
    stages = Stages()
    values = []  # the converted values, computed once, after the stages
    outputs = []
    flags = []
    for column in new.columns:
        source = old_by_id.get(column.id)
        if source is None:
            outputs.append(_default_literal(column).alias(column.name))
            continue
        src = F.col(quoted(frame_names[name_key(source.name)]))
        expr = SPARK_KERNELS[family(source.type, column.type)](src, source.type, column.type, stages)
        value_name = f"{VALUE_PREFIX}{column.id}"
        values.append(expr.cast(spark_type(column.type)).alias(value_name))
        value = F.col(value_name)
        outputs.append(value.alias(column.name))
        if can_fail(source.type, column.type):
            flags.append((src.isNotNull() & value.isNull()).alias(failure_column(column.id)))
    extras = [F.col(quoted(name)) for name in frame.columns if name_key(name) not in old_keys]
    staged = stages.apply(frame).select("*", *values)
    converted = staged.select(*outputs, *extras, *flags)
    return converted, [failure_column(c.id) for c in new.columns if c.id in old_by_id and can_fail(old_by_id[c.id].type, c.type)]
