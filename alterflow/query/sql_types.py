"""Spark SQL's types, as the local engine reasons about them: what a query's column is in Spark
(`SqlType`, named as Spark's `simpleString` names it), the same type in DuckDB, and Spark's rules
for the type two operands meet in (its `TypeCoercion` with `spark.sql.ansi.enabled=false`, the
setting every alterflow session runs with, and `DecimalPrecision`).

No pyspark and no duckdb here: the translation is plain Python over these values.
"""

from __future__ import annotations

from dataclasses import dataclass

from alterflow.values.types import DataType

MAX_PRECISION = 38

# Spark's name -> DuckDB's name, for every type but DECIMAL.
_DUCKDB = {
    "boolean": "BOOLEAN",
    "tinyint": "TINYINT",
    "smallint": "SMALLINT",
    "int": "INTEGER",
    "bigint": "BIGINT",
    "float": "FLOAT",
    "double": "DOUBLE",
    "string": "VARCHAR",
    "date": "DATE",
    "timestamp_ntz": "TIMESTAMP",
    "void": "INTEGER",  # an untyped NULL: only ever cast to the type it meets
}
INTEGRAL_BITS = {"tinyint": 8, "smallint": 16, "int": 32, "bigint": 64}
# The decimal an integral value fits in (Spark's DecimalType.forType).
_INTEGRAL_DECIMAL = {"tinyint": 3, "smallint": 5, "int": 10, "bigint": 20}
_NUMERIC_ORDER = ("tinyint", "smallint", "int", "bigint", "float", "double")


@dataclass(frozen=True)
class SqlType:
    name: str  # Spark's simpleString name: int, bigint, decimal, string, timestamp_ntz, void...
    precision: int = 0  # decimal only
    scale: int = 0

    def __str__(self) -> str:
        return f"decimal({self.precision},{self.scale})" if self.name == "decimal" else self.name

    @property
    def duckdb(self) -> str:
        return f"DECIMAL({self.precision},{self.scale})" if self.name == "decimal" else _DUCKDB[self.name]

    @property
    def integral(self) -> bool:
        return self.name in INTEGRAL_BITS

    @property
    def fractional(self) -> bool:
        return self.name in ("float", "double")

    @property
    def numeric(self) -> bool:
        return self.integral or self.fractional or self.name == "decimal"

    @property
    def orderable(self) -> bool:
        return self.name != "void"


BOOLEAN = SqlType("boolean")
INT = SqlType("int")
BIGINT = SqlType("bigint")
DOUBLE = SqlType("double")
STRING = SqlType("string")
DATE = SqlType("date")
TIMESTAMP_NTZ = SqlType("timestamp_ntz")
VOID = SqlType("void")


def decimal(precision: int, scale: int) -> SqlType:
    return SqlType("decimal", precision, scale)


def from_column_type(t: DataType) -> SqlType | None:
    """The Spark type a stored column reads as; None for LARGEINT (a DECIMAL(38,0) that Spark's
    session turns back into integers by column metadata, which the local engine does not carry)."""
    if t.name == "LARGEINT":
        return None
    if t.name == "DECIMAL":
        return decimal(t.precision, t.scale)
    if t.name in ("CHAR", "VARCHAR", "STRING"):
        return STRING
    if t.name == "DATETIME":
        return TIMESTAMP_NTZ
    return SqlType({"INT": "int"}.get(t.name, t.name.lower()))


def as_decimal(t: SqlType) -> SqlType:
    """An integral type as the decimal that holds every value of it."""
    return decimal(_INTEGRAL_DECIMAL[t.name], 0) if t.integral else t


def literal_decimal(text: str) -> SqlType:
    """The decimal type Spark gives an integral literal meeting a decimal (DecimalType.fromLiteral)."""
    digits = len(text.lstrip("-").lstrip("0")) or 1
    return decimal(digits, 0)


def bounded(precision: int, scale: int) -> SqlType | None:
    """decimal(precision, scale), or None where Spark would have to reduce the scale to fit 38
    digits (its precision-loss rule, which the local engine does not reproduce)."""
    return decimal(precision, scale) if precision <= MAX_PRECISION else None


MINIMUM_ADJUSTED_SCALE = 6


def adjusted(precision: int, scale: int) -> SqlType:
    """decimal(precision, scale) as Spark's DecimalType.adjustPrecisionScale fits it in 38 digits
    (spark.sql.decimalOperations.allowPrecisionLoss, on by default): the integral digits kept, the
    scale cut down to what is left, but not below 6 (or the scale itself, if smaller)."""
    if precision <= MAX_PRECISION:
        return decimal(precision, scale)
    integral_digits = precision - scale
    return decimal(MAX_PRECISION, max(MAX_PRECISION - integral_digits, min(scale, MINIMUM_ADJUSTED_SCALE)))


def wider_numeric(a: SqlType, b: SqlType) -> SqlType | None:
    """The type two numbers meet in for arithmetic and comparison (None: not two numbers)."""
    if not (a.numeric and b.numeric):
        return None
    if a.name == "decimal" or b.name == "decimal":
        if a.fractional or b.fractional:
            return DOUBLE
        a, b = as_decimal(a), as_decimal(b)
        scale = max(a.scale, b.scale)
        return bounded(max(a.precision - a.scale, b.precision - b.scale) + scale, scale)
    return a if _NUMERIC_ORDER.index(a.name) >= _NUMERIC_ORDER.index(b.name) else b


def common_type(types: list[SqlType]) -> SqlType | None:
    """The type values of `types` meet in (CASE branches, COALESCE, IN lists, UNION columns):
    equal types, NULLs, numbers widened; None where Spark would cast a string or a date."""
    known = [t for t in types if t.name != "void"]
    if not known:
        return VOID
    result = known[0]
    for t in known[1:]:
        if t == result:
            continue
        widened = wider_numeric(result, t)
        if widened is None:
            if {result.name, t.name} == {"date", "timestamp_ntz"}:
                widened = TIMESTAMP_NTZ
            else:
                return None
        result = widened
    return result
