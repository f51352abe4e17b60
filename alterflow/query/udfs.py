"""Python functions the local engine's DuckDB queries call where Spark's answer is Java's
BigDecimal arithmetic, which DuckDB's own functions do not reproduce: decimal division and
remainder, decimal arithmetic past 38 digits, rounding of decimals and doubles, conv's base
conversion through an unsigned 64-bit value (docs/semantics.md, "Queries: two engines"); and
Spark's floating-point aggregates (`spark_moments`).

Each mirrors what Spark's `Decimal` does (ANSI mode off): `*` and `/` round to 38 significant
digits HALF_UP (its MathContext), `%` is exact (and fails where the quotient needs more than 38
digits), then the result is set to the result type's scale HALF_UP, NULL when it needs more digits
than its precision. Decimals travel as their exact text. A value whose answer is not determined
here raises FALLBACK, and the query runs on Spark.
"""

from __future__ import annotations

import decimal
import functools
import math
from decimal import Decimal

from alterflow.query import spark_moments

FALLBACK = "af$spark"  # the same marker as expression_core.FALLBACK (no import: this module stays leaf)

_SPARK = decimal.Context(prec=38, rounding=decimal.ROUND_HALF_UP, Emax=999999, Emin=-999999)  # Spark's MATH_CONTEXT
_EXACT = decimal.Context(prec=2000, rounding=decimal.ROUND_HALF_UP, Emax=999999, Emin=-999999)
_MODES = {
    "HALF_UP": decimal.ROUND_HALF_UP,
    "HALF_EVEN": decimal.ROUND_HALF_EVEN,
    "FLOOR": decimal.ROUND_FLOOR,
    "CEILING": decimal.ROUND_CEILING,
}


class _NeedsSpark(Exception):
    def __init__(self):
        super().__init__(FALLBACK)


def to_precision(value: Decimal, precision: int, scale: int, mode: str = "HALF_UP") -> Decimal | None:
    """Spark's Decimal.toPrecision: `value` at `scale`, None when it needs more than `precision` digits."""
    result = value.quantize(Decimal(1).scaleb(-scale), rounding=_MODES[mode], context=_EXACT)
    if abs(result.scaleb(scale, context=_EXACT)) >= Decimal(10) ** precision:
        return None
    return result


def _text(value: Decimal | None, scale: int) -> str | None:
    return None if value is None else f"{value:.{scale}f}"


def decimal_op(op: str, a: str, b: str, precision: int, scale: int) -> str | None:
    """a op b for op in + - * / % pmod, as Spark evaluates it into decimal(precision, scale)."""
    x, y = Decimal(a), Decimal(b)
    if op == "+":
        exact = _EXACT.add(x, y)
    elif op == "-":
        exact = _EXACT.subtract(x, y)
    elif op == "*":
        exact = _SPARK.multiply(x, y)
    elif y == 0:  # / % pmod by zero: NULL
        return None
    elif op == "/":
        exact = _SPARK.divide(x, y)
    else:
        exact = remainder_value(x, y)
        if op == "pmod" and exact < 0:
            exact = remainder_value(_EXACT.add(exact, y), y)
    return _text(to_precision(exact, precision, scale), scale)


def remainder_value(x: Decimal, y: Decimal) -> Decimal:
    try:
        return _SPARK.remainder(x, y)
    except decimal.InvalidOperation:  # Java's BigDecimal.remainder fails too ("Division impossible")
        raise _NeedsSpark() from None


def decimal_round(a: str, places: int, mode: str, precision: int, scale: int) -> str | None:
    """Spark's round/bround/floor/ceil of a decimal to `places` (negative: left of the point), into
    decimal(precision, scale)."""
    rounded = Decimal(a).quantize(Decimal(1).scaleb(-places), rounding=_MODES[mode], context=_EXACT)
    result = to_precision(rounded, precision, scale)
    if result is None:  # past 38 digits Spark fails the query (NUMERIC_VALUE_OUT_OF_RANGE): Spark words it
        raise _NeedsSpark()
    return _text(result, scale)


def double_round(x: float, places: int, mode: str) -> float:
    """Spark's round/bround of a double: `BigDecimal(x)` (the decimal of Java's Double.toString)
    set to `places` and read back as a double. Every decimal that reads as `x` lies between the
    midpoints to its neighbours; where all of them round to the same double, that is Spark's
    answer whatever digits Java prints. Otherwise (a tie such as 2.5) the shortest decimal is
    taken, which Java prints too when it has at most 15 digits; past that, Spark answers."""
    if math.isnan(x) or math.isinf(x):
        return x
    step = Decimal(1).scaleb(-places)
    rounding = _MODES[mode]

    def rounded(d: Decimal) -> float:
        return float(d.quantize(step, rounding=rounding, context=_EXACT))

    exact = Decimal(x)
    below, above = math.nextafter(x, -math.inf), math.nextafter(x, math.inf)
    if math.isinf(below):  # the largest doubles: the gap on the other side
        below = _EXACT.subtract(_EXACT.multiply(2, exact), Decimal(above))
    if math.isinf(above):
        above = _EXACT.subtract(_EXACT.multiply(2, exact), Decimal(below))
    # just inside the midpoints to the neighbours (a midpoint itself may read as the neighbour)
    low = _EXACT.subtract(exact, _EXACT.multiply(_EXACT.subtract(exact, Decimal(below)), Decimal("0.4999")))
    high = _EXACT.add(exact, _EXACT.multiply(_EXACT.subtract(Decimal(above), exact), Decimal("0.4999")))
    if rounded(low) == rounded(high):
        result = rounded(low)
    else:
        shortest = Decimal(repr(x))
        if len(shortest.as_tuple().digits) > 15:
            raise _NeedsSpark()
        result = rounded(shortest)
    return result + 0.0  # BigDecimal has no -0: -0.4 rounds to 0.0


_UNSIGNED_MAX = (1 << 64) - 1


def _digit(byte: int, radix: int) -> int:
    """Java's Character.digit of one byte of the text: ASCII digits and letters only (a byte of a
    multi-byte character is negative in Java, so never a digit), -1 where it is none in `radix`."""
    text = chr(byte)
    value = int(text, 36) if text.isascii() and text.isalnum() else -1
    return value if value < radix else -1


def _digits(value: int, radix: int) -> str:
    """An unsigned value's digits in `radix`, upper case, "0" for zero."""
    out = ""
    while value:
        value, d = divmod(value, radix)
        out = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"[d] + out
    return out or "0"


def conv(number: str, from_base: int, to_base: int) -> str | None:
    """Spark's conv (its NumberConverter, ANSI off): the text trimmed of spaces, an optional '-',
    then the longest run of digits of `from_base` read as an unsigned 64-bit value (2^64 - 1 where
    it overflows); a '-' negates it (2^64 - 1 where it is past 2^63); written in |to_base|,
    unsigned for a positive `to_base`, signed for a negative one. NULL for a base outside 2..36."""
    if not (2 <= from_base <= 36 and 2 <= abs(to_base) <= 36):
        return None
    text = number.encode("utf-8").strip(b" ")
    if not text:
        return None
    negative = text[:1] == b"-"
    value = 0
    for byte in text[1:] if negative else text:
        d = _digit(byte, from_base)
        if d < 0:
            break
        value = value * from_base + d
        if value > _UNSIGNED_MAX:
            value = _UNSIGNED_MAX
            break
    signed = value - (1 << 64) if value >> 63 else value
    if negative and to_base > 0:
        value = _UNSIGNED_MAX if signed < 0 else -signed % (1 << 64)
        signed = value - (1 << 64) if value >> 63 else value
    if to_base < 0 and signed < 0:
        value, negative = -signed, True
    return ("-" if negative and to_base < 0 else "") + _digits(value, abs(to_base))


def register(connection, sql: str) -> None:
    """Registers on `connection` the functions `sql` calls (registering costs a few ms each)."""
    from duckdb.sqltypes import DOUBLE, INTEGER, VARCHAR

    # the connection's own list_type: duckdb.list_type opens DuckDB's default database first (~30 ms)
    doubles = connection.list_type(DOUBLE)
    functions = {
        "af_decimal_op": (decimal_op, [VARCHAR, VARCHAR, VARCHAR, INTEGER, INTEGER], VARCHAR),
        "af_decimal_round": (decimal_round, [VARCHAR, INTEGER, VARCHAR, INTEGER, INTEGER], VARCHAR),
        "af_double_round": (double_round, [DOUBLE, INTEGER, VARCHAR], DOUBLE),
        "af_conv": (conv, [VARCHAR, INTEGER, INTEGER], VARCHAR),
        "af_spark_moment": (spark_moments.spark_moment, [VARCHAR, doubles, doubles], DOUBLE),
        "af_double_sum": (spark_moments.double_sum, [doubles], DOUBLE),
        "af_double_average": (spark_moments.double_average, [doubles], DOUBLE),
    }
    for name, (function, parameters, result) in functions.items():
        if name in sql:
            connection.create_function(name, _null_in_null_out(function), parameters, result, null_handling="special", side_effects=False)


def _null_in_null_out(function):
    """`function`, NULL for a NULL argument (DuckDB's own NULL handling forbids a NULL result)."""

    @functools.wraps(function)  # DuckDB counts the parameters through __wrapped__
    def called(*args):
        return None if any(a is None for a in args) else function(*args)

    return called


def spark_collected(value: Decimal, scale: int) -> Decimal:
    """A decimal as PySpark collects it: Java's BigDecimal.toEngineeringString read back, so that
    0.00000014 at scale 8 is Decimal('1.40E-7') (only values under 1e-6 at a scale past 6 differ)."""
    sign, digits, _exponent = value.as_tuple()
    coefficient = "".join(map(str, digits)).lstrip("0") or "0"
    adjusted = -scale + len(coefficient) - 1
    if scale <= 0 or adjusted >= -6:
        return value
    sig = adjusted % 3
    adjusted -= sig
    sig += 1
    if coefficient == "0":
        text, adjusted = ("0", adjusted) if sig == 1 else ("0.00" if sig == 2 else "0.0", adjusted + 3)
    elif sig >= len(coefficient):
        text = coefficient + "0" * (sig - len(coefficient))
    else:
        text = f"{coefficient[:sig]}.{coefficient[sig:]}"
    exponent = f"E{'+' if adjusted > 0 else ''}{adjusted}" if adjusted else ""
    return Decimal(f"{'-' if sign else ''}{text}{exponent}")
