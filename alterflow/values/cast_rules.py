"""The conversion rules shared by the Arrow kernels (`arrow_columns`, the dual write and local
conversions) and the Spark kernels (`spark_kernels`, the rewrite of history) of a heavyweight ALTER: which family a type
change belongs to, which changes can fail, the text patterns (one source, valid both as a Python
`re` and a Java regex), the integer ranges, the two-digit-year pivot, and the Python reference of
every rule, value by value (`value_converter`).

Spark facts the Python side reproduces (Spark 4.3 on JDK 17, `spark.sql.ansi.enabled=false`;
each is checked by tests/conversion/test_convert_agreement.py):

- CAST(float/double AS STRING) is Java's `Float.toString` / `Double.toString`. On JDK 17 that is
  the old `FloatingDecimal` algorithm, which is *not* always the shortest text:
  2.82879384806159E17 prints "2.82879384806159008E17" and 1.0E23 prints "9.999999999999999E22".
  `java_double_to_string` / `java_float_to_string` port that algorithm (int, long and big-integer
  paths with their different stopping tests and Java's wrap-around arithmetic).
- CAST(double AS DECIMAL) rounds (HALF_UP) the decimal text of `Double.toString`, not the
  binary value; CAST(float AS DECIMAL) widens the float to double first (so FLOAT 0.1 becomes
  0.10000000149011612 before rounding).
- CAST(decimal AS FLOAT / DOUBLE) is `BigDecimal.floatValue()` / `doubleValue()`: correctly
  rounded. CAST(bigint AS FLOAT) and CAST(bigint AS DOUBLE) are Java's correctly rounded
  primitive conversions; CAST(string AS FLOAT / DOUBLE) is `Float.parseFloat` /
  `Double.parseDouble`: correctly rounded from the decimal text (no double rounding).
- CAST(decimal AS STRING) is `BigDecimal.toString()`: scientific notation when the adjusted
  exponent is below -6 ("1E-38", "0E-10"), which Python's `str(Decimal)` also does.
- With ANSI off a cast that overflows is NULL; make_date(0, 1, 1) is a valid date (year 0), so
  years below 1 are rejected explicitly.

Rules beyond the lists of docs/semantics.md (both sides):

- Non-finite FLOAT / DOUBLE values (NaN, +-Infinity) fail every conversion except to text
  ("NaN", "Infinity", "-Infinity") and the FLOAT -> DOUBLE widening (kept as they are).
- STRING -> FLOAT / DOUBLE keeps the sign of zero ("-0" is -0.0) and underflow is not a
  failure ("1e-400" is 0.0); STRING -> DECIMAL of an all-zero mantissa is 0 whatever its exponent.
- DOUBLE / FLOAT -> DECIMAL and -> LARGEINT round the `Double.toString` digits (Spark's cast),
  e.g. DOUBLE 1e23 -> LARGEINT 99999999999999990000000; -> TINYINT..BIGINT use the exact
  binary value (which for integral doubles is exact in both).
- A DECIMAL result of zero has no sign (-0.001 -> DECIMAL(5,2) is 0.00).
- "Whitespace" is ASCII only: space, \t, \n, \r, \v, \f; digits are ASCII only.
- Dates: years 1..9999; two-digit years 00..68 -> 20xx, 69..99 -> 19xx; a four-digit year
  "0000" fails.

This module never imports pyspark.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import functools
import math
import re
import struct
from collections.abc import Callable

from alterflow.errors import AlterflowError
from alterflow.values.text_patterns import DATE_PATTERN, DECIMAL_PATTERN, INT_PATTERN, NUMBER_PATTERN, WS, YEAR_PIVOT, two_digit_year
from alterflow.values.types import FLOAT_TYPES, INTEGER_RANGES, INTEGER_TYPES, Change, DataType, classify_conversion

__all__ = [
    "ConversionFailed",
    "INTEGER_RANGES",
    "WS",
    "INT_PATTERN",
    "NUMBER_PATTERN",
    "DECIMAL_PATTERN",
    "DATE_PATTERN",
    "YEAR_PIVOT",
    "FLOAT32_MAX",
    "BIG_EXPONENT_DIGITS",
    "family",
    "can_fail",
    "uses_java_float_text",
    "max_text_length",
    "value_converter",
    "java_double_to_string",
    "java_float_to_string",
    "round_to_float32",
    "two_digit_year",
    "days_in_month",
]


class ConversionFailed(AlterflowError):
    """A value that cannot be converted (internal signal of `value_converter`)."""


# --------------------------------------------------------------------------------------------
# Constants
# --------------------------------------------------------------------------------------------

# INTEGER_RANGES (type name -> inclusive range) is alterflow.values.types' table, exported here as well:
# the conversions on both sides take it from this module with the other rules.

FLOAT32_MAX = struct.unpack("<f", struct.pack("<I", 0x7F7FFFFF))[0]  # 3.4028234663852886e38

# STRING -> DECIMAL: an exponent with more digits than this (after leading zeros) is decided
# without parsing the number: a non-zero mantissa overflows (positive exponent) or rounds to
# zero (negative exponent). Java's BigDecimal cannot hold such exponents; Python's can.
BIG_EXPONENT_DIGITS = 5

# INT / BIGINT -> DATE: yyyymmdd with a four-digit year.
YYYYMMDD_RANGE = (10000101, 99991231)


def java_regex(pattern: str) -> str:
    """A whole-value pattern as a Java regex for Spark (find() semantics, so anchored)."""
    return "^" + pattern + r"\z"


_INT_RE = re.compile(INT_PATTERN)
_NUMBER_RE = re.compile(NUMBER_PATTERN)
_DECIMAL_RE = re.compile(DECIMAL_PATTERN)
_DATE_RE = re.compile(DATE_PATTERN)


# --------------------------------------------------------------------------------------------
# Families
# --------------------------------------------------------------------------------------------


def family(old: DataType, new: DataType) -> str:
    """The conversion family of a type change; ValueError when the change is rejected.

    "same", "widen" (a lossless widening), "string_to_integer", "string_to_float",
    "string_to_decimal", "string_to_date", "number_to_integer", "number_to_float",
    "number_to_decimal", "number_to_string", "integer_to_date", "datetime_to_date".
    """
    change, reason = classify_conversion(old, new)
    if change is Change.SAME:
        return "same"
    if change is Change.REJECTED:
        raise ValueError(reason)
    if change is Change.LIGHT:
        return "widen"
    kind = _heavy_family(old, new)
    if kind is None:
        raise ValueError(f"{old.sql()} -> {new.sql()} is not a supported type change")  # pragma: no cover
    return kind


# The family of a heavyweight change from a text or a number, by the new type's name.
_FROM_TEXT = {
    **dict.fromkeys(INTEGER_TYPES, "string_to_integer"),
    **dict.fromkeys(FLOAT_TYPES, "string_to_float"),
    "DECIMAL": "string_to_decimal",
    "DATE": "string_to_date",
}
_FROM_NUMBER = {
    **dict.fromkeys(INTEGER_TYPES, "number_to_integer"),
    **dict.fromkeys(FLOAT_TYPES, "number_to_float"),
    "DECIMAL": "number_to_decimal",
    "VARCHAR": "number_to_string",
    "STRING": "number_to_string",
}


def _heavy_family(old: DataType, new: DataType) -> str | None:
    """The family of a heavyweight type change, by the source's kind; None for none of them."""
    if old.is_string:
        return _FROM_TEXT.get(new.name)
    if old.is_number:
        if new.name == "DATE" and old.name in ("INT", "BIGINT"):
            return "integer_to_date"
        return _FROM_NUMBER.get(new.name)
    if old.name == "DATETIME" and new.name == "DATE":
        return "datetime_to_date"
    return None


def uses_java_float_text(old: DataType, new: DataType) -> bool:
    """Whether Spark's conversion goes through Java's Float/Double.toString (whose output
    depends on the JDK: `java_double_to_string` reproduces JDK 17)."""
    if not old.is_float:
        return False
    kind = family(old, new)
    return kind in ("number_to_string", "number_to_decimal") or (kind == "number_to_integer" and new.name == "LARGEINT")


def _integer_digits(t: DataType) -> int:
    """How many integer digits a number type can hold at most (its magnitude bound)."""
    if t.is_integer:
        return len(str(INTEGER_RANGES[t.name][1]))
    if t.name == "DECIMAL":
        return t.precision - t.scale
    return 39 if t.name == "FLOAT" else 309


def max_text_length(t: DataType) -> int:
    """An upper bound of the length of CAST(x AS STRING) for a value of number type `t`."""
    if t.is_integer:
        low, high = INTEGER_RANGES[t.name]
        return max(len(str(low)), len(str(high)))
    if t.name == "DECIMAL":
        return t.precision + 8  # sign, point, leading "0." or an exponent such as "E-38"
    return 26  # Java's Float/Double.toString: at most 26 characters ("-1.2345678901234567E-308")


def can_fail(old: DataType, new: DataType) -> bool:
    """Whether converting some non-NULL value of `old` to `new` can fail."""
    kind = family(old, new)
    if kind in ("same", "widen", "datetime_to_date"):
        return False
    if kind == "number_to_string":
        return new.name == "VARCHAR" and new.length < max_text_length(old)
    if kind == "number_to_integer":
        return True  # a narrower integer, a fraction, NaN
    if kind == "number_to_float":
        if new.name == "DOUBLE":
            return False  # integers and decimals: the nearest double (FLOAT -> DOUBLE is a widening)
        return old.name == "DOUBLE"  # integers and decimals stay below 1e38 < FLOAT's maximum
    if kind == "number_to_decimal":
        if old.is_float:
            return True
        old_scale = old.scale if old.name == "DECIMAL" else 0
        # only an overflow of the integer digits fails (rounding the fraction never does)
        return _integer_digits(old) > new.precision - new.scale or (
            old_scale > new.scale and _integer_digits(old) >= new.precision - new.scale
        )
    return True


# --------------------------------------------------------------------------------------------
# Small helpers
# --------------------------------------------------------------------------------------------

_BIG_CONTEXT = decimal.Context(prec=1000, rounding=decimal.ROUND_HALF_UP, Emax=10**9, Emin=-(10**9))


def days_in_month(year: int, month: int) -> int:
    if month == 2:
        leap = (year % 4 == 0 and year % 100 != 0) or year % 400 == 0
        return 29 if leap else 28
    return 30 if month in (4, 6, 9, 11) else 31


def _date_or_fail(year: int, month: int, day: int) -> _dt.date:
    if not (1 <= year <= 9999 and 1 <= month <= 12 and 1 <= day <= days_in_month(year, month)):
        raise ConversionFailed
    return _dt.date(year, month, day)


def _round_decimal(value: decimal.Decimal, t: DataType) -> decimal.Decimal:
    """`value` rounded HALF_UP to t's scale; ConversionFailed when the integer digits overflow."""
    integer_digits = t.precision - t.scale
    if value.is_zero():
        return decimal.Decimal(0).scaleb(-t.scale)
    if value.adjusted() >= integer_digits + 1:
        raise ConversionFailed  # too big even before rounding
    if value.adjusted() < -t.scale - 2:
        return decimal.Decimal(0).scaleb(-t.scale)  # rounds to zero
    result = value.quantize(decimal.Decimal(1).scaleb(-t.scale), context=_BIG_CONTEXT)
    if not result.is_zero() and result.adjusted() >= integer_digits:
        raise ConversionFailed
    return result.copy_abs() if result.is_zero() else result


def round_to_float32(value: int | decimal.Decimal) -> float:
    """The float32 nearest to an exact value (ties to even), as a Python float; +-inf on overflow.

    What Java's `(float) long`, `Float.parseFloat` and `BigDecimal.floatValue()` compute.
    """
    if isinstance(value, int):
        negative, numerator, denominator = value < 0, abs(value), 1
        if numerator == 0:
            return 0.0
    else:
        if value.is_zero():
            return -0.0 if value.is_signed() else 0.0
        negative = value.is_signed()
        adjusted = value.adjusted()
        if adjusted > 39:
            return -math.inf if negative else math.inf
        if adjusted < -47:
            return -0.0 if negative else 0.0
        _, digits, exponent = value.as_tuple()
        numerator = int("".join(map(str, digits)))
        denominator = 1
        if exponent >= 0:
            numerator *= 10**exponent
        else:
            denominator = 10**-exponent
    # e = floor(log2(numerator / denominator))
    e = numerator.bit_length() - denominator.bit_length()
    if (numerator << max(0, -e)) < (denominator << max(0, e)):
        e -= 1
    if e > 127:
        return -math.inf if negative else math.inf
    quantum = max(e, -126) - 23  # float32: 24-bit significand, subnormals below 2^-126
    num = numerator << max(0, -quantum)
    den = denominator << max(0, quantum)
    mantissa, remainder = divmod(num, den)
    if 2 * remainder > den or (2 * remainder == den and mantissa & 1):
        mantissa += 1
    result = math.ldexp(mantissa, quantum)
    if result > FLOAT32_MAX:
        result = math.inf
    return -result if negative else result


def _float32_of_double(value: float) -> float:
    """Java's (float) d: round to nearest even; +-inf beyond float32's range."""
    if not math.isfinite(value):
        return value
    try:
        return struct.unpack("<f", struct.pack("<f", value))[0]
    except OverflowError:
        return math.copysign(math.inf, value)


# --------------------------------------------------------------------------------------------
# Java's Double.toString / Float.toString on JDK 17 (jdk.internal.math.FloatingDecimal)
# --------------------------------------------------------------------------------------------

_N_5_BITS = (0, 3, 5, 7, 10, 12, 14, 17, 19, 21, 24, 26, 28, 31, 33, 35, 38, 40, 42, 45, 47, 49, 52, 54, 56, 59, 61)
_INSIGNIFICANT_DIGITS = (
    0,
    0,
    0,
    0,
    1,
    1,
    1,
    2,
    2,
    2,
    3,
    3,
    3,
    3,
    4,
    4,
    4,
    5,
    5,
    5,
    6,
    6,
    6,
    6,
    7,
    7,
    7,
    8,
    8,
    8,
    9,
    9,
    9,
    9,
    10,
    10,
    10,
    11,
    11,
    11,
    12,
    12,
    12,
    12,
    13,
    13,
    13,
    14,
    14,
    14,
    15,
    15,
    15,
    15,
    16,
    16,
    16,
    17,
    17,
    17,
    18,
    18,
    18,
    19,
)
_LONG_5_POW_LENGTH = 27  # 5^0 .. 5^26
_EXP_SHIFT = 52
_FRACT_HOB = 1 << _EXP_SHIFT


def _wrap32(x: int) -> int:
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x & 0x80000000 else x


def _wrap64(x: int) -> int:
    x &= 0xFFFFFFFFFFFFFFFF
    return x - (1 << 64) if x & 0x8000000000000000 else x


def _estimate_dec_exp(fract_bits: int, bin_exp: int) -> int:
    bits = (1023 << _EXP_SHIFT) | (fract_bits & (_FRACT_HOB - 1))
    d2 = struct.unpack("<d", struct.pack("<Q", bits))[0]
    d = (d2 - 1.5) * 0.289529654 + 0.176091259 + float(bin_exp) * 0.301029995663981
    return math.floor(d)


def _develop_long_digits(lvalue: int, insignificant: int) -> tuple[str, int]:
    dec_exponent = 0
    if insignificant != 0:
        pow10 = 10**insignificant
        residue = lvalue % pow10
        lvalue //= pow10
        dec_exponent += insignificant
        if residue >= (pow10 >> 1):
            lvalue += 1
    text = str(lvalue)
    digits = text.rstrip("0")
    return digits, dec_exponent + len(text)


def _dtoa(bin_exp: int, fract_bits: int, n_significant_bits: int) -> tuple[str, int]:  # noqa: C901 - a port, kept as the JDK writes it
    """(digits, decExponent): the value is 0.digits * 10^decExponent (isCompatibleFormat)."""
    tail_zeros = (fract_bits & -fract_bits).bit_length() - 1
    n_fract_bits = _EXP_SHIFT + 1 - tail_zeros
    n_tiny_bits = max(0, n_fract_bits - bin_exp - 1)
    if -21 <= bin_exp <= 62:
        if n_tiny_bits < _LONG_5_POW_LENGTH and n_fract_bits + _N_5_BITS[n_tiny_bits] < 64:
            if n_tiny_bits == 0:
                insignificant = 0
                if bin_exp > n_significant_bits:
                    p2 = bin_exp - n_significant_bits - 1
                    if 1 < p2 < len(_INSIGNIFICANT_DIGITS):
                        insignificant = _INSIGNIFICANT_DIGITS[p2]
                if bin_exp >= _EXP_SHIFT:
                    fract_bits <<= bin_exp - _EXP_SHIFT
                else:
                    fract_bits >>= _EXP_SHIFT - bin_exp
                return _develop_long_digits(fract_bits, insignificant)
    dec_exp = _estimate_dec_exp(fract_bits, bin_exp)
    b5 = max(0, -dec_exp)
    b2 = b5 + n_tiny_bits + bin_exp
    s5 = max(0, dec_exp)
    s2 = s5 + n_tiny_bits
    m5 = b5
    m2 = b2 - n_significant_bits
    fract_bits >>= tail_zeros
    b2 -= n_fract_bits - 1
    common2 = min(b2, s2)
    b2 -= common2
    s2 -= common2
    m2 -= common2
    if n_fract_bits == 1:
        m2 -= 1
    if m2 < 0:
        b2 -= m2
        s2 -= m2
        m2 = 0
    b_bits = n_fract_bits + b2 + (_N_5_BITS[b5] if b5 < len(_N_5_BITS) else b5 * 3)
    ten_s_bits = s2 + 1 + (_N_5_BITS[s5 + 1] if s5 + 1 < len(_N_5_BITS) else (s5 + 1) * 3)
    digits: list[int] = []
    if b_bits < 64 and ten_s_bits < 64:
        # Java int (or long) arithmetic. b stays in [0, 10*s) and never wraps; m and b + m can.
        small = b_bits < 32 and ten_s_bits < 32
        wrap = _wrap32 if small else _wrap64
        limit = 0x7FFFFFFF if small else 0x7FFFFFFFFFFFFFFF
        b = wrap(fract_bits * 5**b5 << b2)
        s = wrap(5**s5 << s2)
        m = wrap(5**m5 << m2)
        tens = wrap(s * 10)
        q, b = divmod(b, s)
        b *= 10
        m = wrap(m * 10)
        total = b + m
        high = (wrap(total) if total > limit or total < -limit else total) > tens
        low, high, dec_exp = _first_digit(digits, q, b < m, high, dec_exp)
        while not low and not high:
            q, b = divmod(b, s)
            b *= 10
            m *= 10
            if m > limit or m < -limit:
                m = wrap(m)
            if m > 0:
                low = b < m
                total = b + m
                high = (wrap(total) if total > limit else total) > tens
            else:
                low = high = True
            digits.append(q)
        low_digit_difference = wrap(wrap(b << 1) - tens)
    else:
        big_b = fract_bits * 5**b5 << b2
        big_s = 5**s5 << s2
        big_m = 5 ** (m5 + 1) << (m2 + 1)
        ten_s = 5 ** (s5 + 1) << (s2 + 1)
        q, big_b = divmod(big_b, big_s)
        big_b *= 10
        low, high, dec_exp = _first_digit(digits, q, big_b < big_m, big_b + big_m >= ten_s, dec_exp)
        while not low and not high:
            q, big_b = divmod(big_b, big_s)
            big_b *= 10
            big_m *= 10
            low = big_b < big_m
            high = big_b + big_m >= ten_s
            digits.append(q)
        if high and low:
            big_b <<= 1
            low_digit_difference = (big_b > ten_s) - (big_b < ten_s)
        else:
            low_digit_difference = 0
    dec_exponent = dec_exp + 1
    if high:
        if low:
            if low_digit_difference == 0:
                if digits[-1] & 1:
                    return _roundup(digits, dec_exponent)
            elif low_digit_difference > 0:
                return _roundup(digits, dec_exponent)
        else:
            return _roundup(digits, dec_exponent)
    return "".join(map(str, digits)), dec_exponent


def _first_digit(digits: list[int], q: int, low: bool, high: bool, dec_exp: int) -> tuple[bool, bool, int]:
    """dtoa's first digit `q`, with the stopping tests it gave: (low, high, dec_exp) for the loop of
    the other digits. A leading 0 is dropped (the exponent goes down one) unless it ends the number;
    E-form needs at least two digits, so there the first digit never stops the loop."""
    if q == 0 and not high:
        dec_exp -= 1
    else:
        digits.append(q)
    if dec_exp < -3 or dec_exp >= 8:
        low = high = False
    return low, high, dec_exp


def _roundup(digits: list[int], dec_exponent: int) -> tuple[str, int]:
    i = len(digits) - 1
    q = digits[i]
    if q == 9:
        while q == 9 and i > 0:
            digits[i] = 0
            i -= 1
            q = digits[i]
        if q == 9:
            digits[0] = 1
            return "".join(map(str, digits)), dec_exponent + 1
    digits[i] = q + 1
    return "".join(map(str, digits)), dec_exponent


def _java_chars(negative: bool, digits: str, dec_exponent: int) -> str:
    sign = "-" if negative else ""
    n = len(digits)
    if 0 < dec_exponent < 8:
        if n < dec_exponent:
            return sign + digits + "0" * (dec_exponent - n) + ".0"
        return sign + digits[:dec_exponent] + "." + (digits[dec_exponent:] or "0")
    if -3 < dec_exponent <= 0:
        return sign + "0." + "0" * -dec_exponent + digits
    exponent = dec_exponent - 1
    return sign + digits[0] + "." + (digits[1:] or "0") + "E" + str(exponent)


def java_double_to_string(value: float) -> str:
    """Java 17's Double.toString(value)."""
    return _double_text(struct.unpack("<Q", struct.pack("<d", value))[0])


@functools.lru_cache(maxsize=65536)  # keyed by the bits: 0.0 and -0.0 print differently
def _double_text(bits: int) -> str:
    return _binary_text(bits, 64, _EXP_SHIFT)


def java_float_to_string(value: float) -> str:
    """Java 17's Float.toString((float) value); `value` should be a float32 value."""
    if math.isnan(value):
        return "NaN"
    return _float_text(struct.unpack("<I", struct.pack("<f", value))[0])


@functools.lru_cache(maxsize=65536)
def _float_text(bits: int) -> str:
    return _binary_text(bits, 32, 23)


def _binary_text(bits: int, width: int, fraction_width: int) -> str:
    """Java's toString of an IEEE 754 binary number: `bits` of a `width`-bit value whose fraction
    has `fraction_width` bits (64 and 52 for a double, 32 and 23 for a float). Java's float path
    runs the double's dtoa on the fraction moved to the double's place, as here."""
    exponent_width = width - 1 - fraction_width
    all_ones = (1 << exponent_width) - 1  # the exponent of NaN and infinities; its half is the bias
    negative = bool(bits >> (width - 1))
    fract_bits = bits & ((1 << fraction_width) - 1)
    bin_exp = (bits >> fraction_width) & all_ones
    if bin_exp == all_ones:
        if fract_bits:
            return "NaN"
        return "-Infinity" if negative else "Infinity"
    if bin_exp == 0:
        if fract_bits == 0:
            return "-0.0" if negative else "0.0"
        leading_zeros = width - fract_bits.bit_length()
        shift = leading_zeros - exponent_width
        fract_bits <<= shift
        bin_exp = 1 - shift
        n_significant_bits = width - leading_zeros
    else:
        fract_bits |= 1 << fraction_width
        n_significant_bits = fraction_width + 1
    bin_exp -= all_ones >> 1
    digits, dec_exponent = _dtoa(bin_exp, fract_bits << (_EXP_SHIFT - fraction_width), n_significant_bits)
    return _java_chars(negative, digits, dec_exponent)


# --------------------------------------------------------------------------------------------
# Value by value: the reference of every rule
# --------------------------------------------------------------------------------------------


def _parse_integer_text(text: str, t: DataType) -> int:
    match = _INT_RE.fullmatch(text)
    if match is None:
        raise ConversionFailed
    sign, digits = match.groups()
    if len(digits) > 39:
        raise ConversionFailed
    value = -int(digits) if sign == "-" else int(digits)
    low, high = INTEGER_RANGES[t.name]
    if not low <= value <= high:
        raise ConversionFailed
    return value


def _parse_float_text(text: str, t: DataType) -> float:
    match = _NUMBER_RE.fullmatch(text)
    if match is None:
        raise ConversionFailed
    number = match.group(1)
    if t.name == "DOUBLE":
        result = float(number)  # correctly rounded, any exponent
    else:
        mantissa, _, exponent = number.lower().partition("e")
        negative = mantissa.startswith("-")
        if not mantissa.strip("+-0."):
            result = -0.0 if negative else 0.0
        elif len(exponent.lstrip("+-").lstrip("0")) > BIG_EXPONENT_DIGITS:
            result = 0.0 if exponent.startswith("-") else math.inf  # underflow / overflow
            result = -result if negative else result
        else:
            result = round_to_float32(decimal.Decimal(number))
    if math.isinf(result):
        raise ConversionFailed
    return result


def _parse_decimal_text(text: str, t: DataType) -> decimal.Decimal:
    match = _DECIMAL_RE.fullmatch(text)
    if match is None:
        raise ConversionFailed
    sign, mantissa, exponent_sign, exponent_digits = match.groups()
    zero = decimal.Decimal(0).scaleb(-t.scale)
    if not mantissa.strip("0."):
        return zero
    if exponent_digits is not None and len(exponent_digits) > BIG_EXPONENT_DIGITS:
        if exponent_sign == "-":
            return zero
        raise ConversionFailed
    number = sign + mantissa + ("" if exponent_digits is None else "e" + exponent_sign + exponent_digits)
    return _round_decimal(decimal.Decimal(number), t)


def _parse_date_text(text: str) -> _dt.date:
    match = _DATE_RE.fullmatch(text)
    if match is None:
        raise ConversionFailed
    year_text = match.group(1) or match.group(5)
    month_text = match.group(3) or match.group(6)
    day_text = match.group(4) or match.group(7)
    year = int(year_text) if len(year_text) == 4 else two_digit_year(int(year_text))
    return _date_or_fail(year, int(month_text), int(day_text))


def _number_of(value: object, old: DataType) -> object:
    """A source number as int (integers, LARGEINT), Decimal (DECIMAL) or float."""
    if old.name == "LARGEINT":
        return int(value)
    return value


def _to_integer(value: object, old: DataType, new: DataType) -> int:
    low, high = INTEGER_RANGES[new.name]
    if isinstance(value, float):
        if not math.isfinite(value) or not value.is_integer():
            raise ConversionFailed
        if new.name == "LARGEINT":
            # Spark: CAST(double AS DECIMAL(38,0)) goes through Double.toString's digits
            result = _round_decimal(decimal.Decimal(java_double_to_string(value)), DataType("DECIMAL", 38, 0))
            return int(result)
        result = int(value)
    elif isinstance(value, decimal.Decimal):
        if value != value.to_integral_value():
            raise ConversionFailed
        result = int(value)
    else:
        result = int(value)
    if not low <= result <= high:
        raise ConversionFailed
    return result


def _to_decimal(value: object, old: DataType, new: DataType) -> decimal.Decimal:
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ConversionFailed
        exact = decimal.Decimal(java_double_to_string(value))
    else:
        exact = decimal.Decimal(value)
    return _round_decimal(exact, new)


def _to_float(value: object, old: DataType, new: DataType) -> float:
    if isinstance(value, float):
        if new.name == "DOUBLE":
            return value
        if not math.isfinite(value):
            raise ConversionFailed
        result = _float32_of_double(value)
        if math.isinf(result):
            raise ConversionFailed
        return result
    if new.name == "DOUBLE":
        return float(value)  # correctly rounded for int and Decimal
    exact = value if isinstance(value, int) else decimal.Decimal(value)
    result = round_to_float32(exact)
    if math.isinf(result):  # pragma: no cover - magnitudes below 1e38 never overflow
        raise ConversionFailed
    return result


def number_text(value: object, old: DataType) -> str:
    """Spark's CAST(value AS STRING) for a number of type `old`."""
    if old.name == "FLOAT":
        return java_float_to_string(value)
    if old.name == "DOUBLE":
        return java_double_to_string(value)
    if old.name == "DECIMAL":
        exact = decimal.Decimal(value).quantize(decimal.Decimal(1).scaleb(-old.scale), context=_BIG_CONTEXT)
        return str(exact.copy_abs() if exact.is_zero() else exact)
    return str(int(value))


def value_converter(old: DataType, new: DataType) -> Callable[[object], object]:
    """A function converting one non-NULL Python value of `old` (as pyarrow's `as_py` gives it;
    LARGEINT may be a Decimal) to the Python value of `new`, raising ConversionFailed.
    ValueError when the type change is rejected."""
    return _CONVERTERS[family(old, new)](old, new)


def _unchanged(old: DataType, new: DataType) -> Callable[[object], object]:
    return lambda v: v


def _widening(old: DataType, new: DataType) -> Callable[[object], object]:
    if new.name == "DATETIME":
        return lambda v: _dt.datetime(v.year, v.month, v.day)
    if new.name == "LARGEINT":
        return lambda v: int(v)
    if new.name == "DECIMAL":
        return lambda v: _round_decimal(decimal.Decimal(v), new)
    return lambda v: v


def _number_to_string(old: DataType, new: DataType) -> Callable[[object], str]:
    limit = new.length if new.name == "VARCHAR" else None

    def to_text(v: object) -> str:
        text = number_text(v, old)
        if limit is not None and len(text) > limit:
            raise ConversionFailed
        return text

    return to_text


def _integer_to_date(v: int) -> _dt.date:
    """A yyyymmdd integer as the date it spells."""
    low, high = YYYYMMDD_RANGE
    if not low <= v <= high:
        raise ConversionFailed
    return _date_or_fail(v // 10000, v // 100 % 100, v % 100)


# family -> (old, new) -> the function converting one value (`value_converter`)
_CONVERTERS: dict[str, Callable[[DataType, DataType], Callable]] = {
    "same": _unchanged,
    "widen": _widening,
    "string_to_integer": lambda old, new: lambda v: _parse_integer_text(v, new),
    "string_to_float": lambda old, new: lambda v: _parse_float_text(v, new),
    "string_to_decimal": lambda old, new: lambda v: _parse_decimal_text(v, new),
    "string_to_date": lambda old, new: _parse_date_text,
    "number_to_integer": lambda old, new: lambda v: _to_integer(_number_of(v, old), old, new),
    "number_to_decimal": lambda old, new: lambda v: _to_decimal(_number_of(v, old), old, new),
    "number_to_float": lambda old, new: lambda v: _to_float(_number_of(v, old), old, new),
    "number_to_string": _number_to_string,
    "integer_to_date": lambda old, new: _integer_to_date,
    "datetime_to_date": lambda old, new: lambda v: v.date(),
}
