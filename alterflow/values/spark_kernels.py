"""The cast rules of `cast_rules` as Spark column expressions, one kernel per conversion family,
value for value and failure for failure the same as the Arrow kernels: every kernel gives an
expression that is NULL exactly when the conversion of a non-NULL value fails.

Only built-in column functions. Text is matched with the same patterns as the Python side
(`cast_rules.*_PATTERN`, anchored with ^...\\z), dates are built with explicit year arithmetic and
`make_date` only once the date is known to be valid, and numbers go through the casts whose Java
semantics `cast_rules` reproduces.

Sub-expressions used more than once (the groups of a regexp_extract, a parsed number, a date's
parts) are computed once per row in projections before the values (`Stages`); Spark keeps those
projections apart (they are not cheap to duplicate), so the plan stays small and runs at Spark
speed.

A conversion through Java's Double.toString (FLOAT / DOUBLE -> text, DECIMAL, LARGEINT) is refused
with RuntimeError when Spark's JVM does not print doubles the JDK 17 way that the Python side
reproduces (`check_jvm_float_text`).

A table's conversion (`alterflow.conversion.spark_convert.convert_frame`) applies these kernels
column by column. pyspark is imported inside the functions: importing this module starts nothing.
"""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING

from alterflow.values.cast_rules import (
    BIG_EXPONENT_DIGITS,
    DATE_PATTERN,
    DECIMAL_PATTERN,
    INT_PATTERN,
    INTEGER_RANGES,
    NUMBER_PATTERN,
    YEAR_PIVOT,
    YYYYMMDD_RANGE,
    java_double_to_string,
    java_regex,
)
from alterflow.values.types import DataType, to_spark

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import Column, DataFrame

__all__ = ["SPARK_KERNELS", "Stages", "check_jvm_float_text", "quoted", "spark_type"]

STAGE_PREFIX = "af$stage_"
_INFINITY = float("inf")


def spark_type(t: DataType) -> str:
    """The Spark type of `t` as text (a cast by name costs one JVM call, by DataType several)."""
    return to_spark(t).simpleString()


def quoted(name: str) -> str:
    """`name` as a Spark SQL identifier: in backquotes, a backquote doubled."""
    return "`" + name.replace("`", "``") + "`"


# --------------------------------------------------------------------------------------------
# One column: a kernel per conversion family (cast_rules.family)
# --------------------------------------------------------------------------------------------


class Stages:
    """Intermediate columns computed in projections before the values (so that an expression
    used several times, such as a regexp_extract, is evaluated once per row, and the plan stays
    small). Level 1 may only use the frame's columns, level k the levels below it."""

    def __init__(self) -> None:
        self.levels: dict[int, list] = {}
        self.count = 0

    def add(self, level: int, expr: Column) -> Column:
        from pyspark.sql import functions as F

        return F.col(self.add_named(level, expr))

    def add_named(self, level: int, expr: Column) -> str:
        """`add`, returning the stage's name as Spark SQL text, for expressions of later levels
        written in SQL (one call into the JVM instead of one per operator)."""
        name = f"{STAGE_PREFIX}{self.count}"
        self.count += 1
        self.levels.setdefault(level, []).append(expr.alias(name))
        return quoted(name)

    def apply(self, frame: DataFrame) -> DataFrame:
        for level in sorted(self.levels):
            frame = frame.select("*", *self.levels[level])
        return frame


def _same(src, old, new, stages):
    return src


def _widen(src, old, new, stages):
    if old.is_string:
        return src
    if new.name == "DATETIME":
        return src.cast("timestamp_ntz")
    return src.cast(spark_type(new))


def _in_range(value, new: DataType):
    from pyspark.sql import functions as F

    low, high = INTEGER_RANGES[new.name]
    return (value >= F.lit(Decimal(low))) & (value <= F.lit(Decimal(high)))


ASCII_WHITESPACE = " \t\n\r\x0b\x0c"
CONTROL_AND_SPACE = "".join(chr(c) for c in range(0x21))


def _decimal_length_sql(number: str, new: DataType) -> str:
    """Spark SQL for the length of the canonical text of `number` (SQL text of an integer of type
    `new`): its digits, plus one for a minus sign. Comparisons only: nothing is allocated per row."""
    low, high = INTEGER_RANGES[new.name]
    terms = [f"CAST({number} < 0 AS INT)"]
    terms += [f"CAST({number} >= {10**k} AS INT)" for k in range(1, len(str(high)))]
    terms += [f"CAST({number} <= -{10**k} AS INT)" for k in range(1, len(str(-low)))]
    return "1 + " + " + ".join(terms)


def _exact_string_to_integer(src, new: DataType):
    """INT_PATTERN's acceptance without a regex: ASCII whitespace trimmed, no '.', then TRY_CAST
    to BIGINT (which takes only an optional sign and ASCII digits, NULL for anything else or on
    overflow), then the range of `new`."""
    from pyspark.sql import functions as F

    text = F.btrim(src, F.lit(ASCII_WHITESPACE))
    # The cast itself also trims other control characters (chars up to 0x20): refuse those.
    plain = (F.instr(text, ".") == F.lit(0)) & (F.btrim(text, F.lit(CONTROL_AND_SPACE)) == text)
    number = F.when(plain, text.try_cast("bigint"))
    low, high = INTEGER_RANGES[new.name]
    return F.when((number >= F.lit(low)) & (number <= F.lit(high)), number.cast(spark_type(new)))


def _string_to_integer(src, old, new, stages):
    from pyspark.sql import functions as F

    if new.name != "LARGEINT":
        # The hot path of the rewrite. TRY_CAST to the target type accepts more than INT_PATTERN
        # (control characters around the number, a fraction), but when the text is exactly as
        # long as the canonical text of the number it gave ([-]digits, no leading zero, nothing
        # around), it is that canonical text, which INT_PATTERN accepts with the same value.
        # Every other text (rare: padding, a '+', leading zeros, failures) takes the exact path,
        # evaluated only for those rows.
        number = stages.add_named(1, src.try_cast(spark_type(new)))
        canonical = F.octet_length(src) == F.expr(_decimal_length_sql(number, new))
        return F.when(canonical, F.col(number)).otherwise(_exact_string_to_integer(src, new))

    pattern = java_regex(INT_PATTERN)
    sign = stages.add(1, F.regexp_extract(src, pattern, 1))
    digits = stages.add(1, F.regexp_extract(src, pattern, 2))
    max_digits = 38
    number = stages.add(
        2,
        F.when(
            (digits != F.lit("")) & (F.length(digits) <= F.lit(max_digits)),
            F.concat(F.when(sign == F.lit("-"), F.lit("-")).otherwise(F.lit("")), digits).cast("decimal(38,0)"),
        ),
    )
    return number  # LARGEINT: at most 38 digits, always inside its range


def _string_to_float(src, old, new, stages):
    from pyspark.sql import functions as F

    text = stages.add(1, F.regexp_extract(src, java_regex(NUMBER_PATTERN), 1))
    value = stages.add(2, text.cast(spark_type(new)))  # Double.parseDouble / Float.parseFloat
    return F.when((text != F.lit("")) & (F.abs(value) < F.lit(_INFINITY)), value)


def _string_to_decimal(src, old, new, stages):
    from pyspark.sql import functions as F

    target = spark_type(new)
    pattern = java_regex(DECIMAL_PATTERN)
    sign = stages.add(1, F.regexp_extract(src, pattern, 1))
    mantissa = stages.add(1, F.regexp_extract(src, pattern, 2))
    exponent_sign = stages.add(1, F.regexp_extract(src, pattern, 3))
    exponent_digits = stages.add(1, F.regexp_extract(src, pattern, 4))
    has_exponent = exponent_digits != F.lit("")
    text = F.concat(
        sign,
        mantissa,
        F.when(has_exponent, F.concat(F.lit("e"), exponent_sign, exponent_digits)).otherwise(F.lit("")),
    )
    zero = F.lit(Decimal(0)).cast(target)
    big_exponent = F.length(exponent_digits) > F.lit(BIG_EXPONENT_DIGITS)
    return (
        F.when(mantissa == F.lit(""), F.lit(None).cast(target))
        .when(mantissa.rlike(r"^[0.]*\z"), zero)
        .when(big_exponent & (exponent_sign == F.lit("-")), zero)
        .when(big_exponent, F.lit(None).cast(target))
        .otherwise(text.cast(target))  # BigDecimal, rounded HALF_UP, NULL on overflow
    )


def _days_in_month(year, month):
    from pyspark.sql import functions as F

    leap = ((year % 4 == 0) & (year % 100 != 0)) | (year % 400 == 0)
    return F.when(month == 2, F.when(leap, F.lit(29)).otherwise(F.lit(28))).when(month.isin(4, 6, 9, 11), F.lit(30)).otherwise(F.lit(31))


def _valid_date(year, month, day):
    """make_date(year, month, day) when it is a real date of years 1..9999, else NULL
    (checked first, so make_date never sees an invalid date, whatever the ANSI mode)."""
    from pyspark.sql import functions as F

    valid = (year >= 1) & (year <= 9999) & (month >= 1) & (month <= 12) & (day >= 1) & (day <= _days_in_month(year, month))
    return F.when(valid, F.make_date(year, month, day))


def _string_to_date(src, old, new, stages):
    from pyspark.sql import functions as F

    pattern = java_regex(DATE_PATTERN)
    group = lambda i: F.regexp_extract(src, pattern, i)  # noqa: E731 ("" when it did not take part)
    year_text = stages.add(1, F.concat(group(1), group(5)))
    month = stages.add(1, F.concat(group(3), group(6)).cast("int"))
    day = stages.add(1, F.concat(group(4), group(7)).cast("int"))
    short_year = year_text.cast("int")
    year = stages.add(
        2,
        (
            F.when(F.length(year_text) == 4, short_year).when(
                F.length(year_text) == 2, F.when(short_year < YEAR_PIVOT, short_year + 2000).otherwise(short_year + 1900)
            )
        ),
    )
    return _valid_date(year, month, day)


def _integer_to_date(src, old, new, stages):
    from pyspark.sql import functions as F

    low, high = YYYYMMDD_RANGE
    value = src.cast("long")
    inside = (value >= F.lit(low)) & (value <= F.lit(high))
    # inside the range the arithmetic is exact: a multiple of 100 divided by 100
    day = stages.add(1, F.when(inside, F.pmod(value, F.lit(100)).cast("int")))
    rest = stages.add(2, ((value - day) / 100).cast("int"))
    month = stages.add(3, F.pmod(rest, F.lit(100)))
    year = stages.add(3, ((rest - F.pmod(rest, F.lit(100))) / 100).cast("int"))
    return F.when(day.isNotNull(), _valid_date(year, month, day))


def _datetime_to_date(src, old, new, stages):
    return src.cast("date")


def _number_to_integer(src, old, new, stages):
    from pyspark.sql import functions as F

    target = spark_type(new)
    low, high = INTEGER_RANGES[new.name]
    if old.is_float:
        value = src.cast("double")
        integral = (value % F.lit(1.0)) == F.lit(0.0)  # NaN and +-Infinity give NaN
        if new.name == "LARGEINT":
            return F.when(integral, value.cast(target))  # NULL when beyond DECIMAL(38,0)
        in_range = (value >= F.lit(float(low))) & (value < F.lit(float(high + 1)))  # both exact
        return F.when(integral & in_range, value.cast(target))
    if old.is_integer and old.name != "LARGEINT":
        return F.when((src >= F.lit(low)) & (src <= F.lit(high)), src.cast(target))
    # LARGEINT and DECIMAL: integral, then exactly DECIMAL(38,0), then the range
    integral = F.lit(True) if old.name == "LARGEINT" or old.scale == 0 else (src % F.lit(1)) == F.lit(0)
    whole = src.cast("decimal(38,0)")
    if new.name == "LARGEINT":
        return F.when(integral, whole)
    return F.when(integral & _in_range(whole, new), whole.cast(target))


def _number_to_decimal(src, old, new, stages):
    # HALF_UP to the scale, NULL on overflow (and for NaN / Infinity); doubles through
    # Double.toString, floats widened to double first.
    return src.cast(spark_type(new))


def _number_to_float(src, old, new, stages):
    from pyspark.sql import functions as F

    value = src.cast(spark_type(new))
    if new.name == "FLOAT" and old.name == "DOUBLE":
        return F.when(~F.isnan(value) & (F.abs(value) < F.lit(_INFINITY)), value)
    return value


def _number_to_string(src, old, new, stages):
    from pyspark.sql import functions as F

    text = src.cast("string")
    if new.name == "VARCHAR":
        return F.when(F.length(text) <= F.lit(new.length), text)
    return text


SPARK_KERNELS = {
    "same": _same,
    "widen": _widen,
    "string_to_integer": _string_to_integer,
    "string_to_float": _string_to_float,
    "string_to_decimal": _string_to_decimal,
    "string_to_date": _string_to_date,
    "integer_to_date": _integer_to_date,
    "datetime_to_date": _datetime_to_date,
    "number_to_integer": _number_to_integer,
    "number_to_decimal": _number_to_decimal,
    "number_to_float": _number_to_float,
    "number_to_string": _number_to_string,
}


_JVM_PROBES = (1e23, 2.82879384806159e17, 2.0**60)
_jvm_checked: dict[int, bool] = {}


def check_jvm_float_text(frame: DataFrame) -> None:
    """Refuse conversions through Double.toString when Spark's JVM prints doubles differently
    from the JDK 17 algorithm that the Python side reproduces (JDK 19 and later print the
    shortest text). Skipped where the JVM cannot be reached (Spark Connect)."""
    try:
        session = frame.sparkSession
        jvm = session._jvm  # noqa: SLF001
        key = id(session)
        if key not in _jvm_checked:
            _jvm_checked[key] = all(jvm.java.lang.Double.toString(value) == java_double_to_string(value) for value in _JVM_PROBES)
    except Exception:  # pragma: no cover - no py4j gateway
        return
    if not _jvm_checked[key]:
        raise RuntimeError(
            "Spark's JVM formats doubles unlike JDK 17, so FLOAT/DOUBLE -> text/DECIMAL/LARGEINT conversions "
            "would differ from the dual-write path; run Spark on Java 17"
        )
