"""Vectorised number -> number, number -> text and INT / BIGINT -> DATE conversions: the same
values and failures as `cast_rules.value_converter`, computed with numpy and Arrow's decimal kernels.

DECIMAL values whose unscaled integer fits an int64 (precision <= 18) are rescaled in numpy;
wider ones with Arrow's decimal casts and `round` (mode half_towards_infinity is Java's HALF_UP).
Values whose exact result these cannot reach are deferred to the reference (see `arrow_kernels`):

- FLOAT / DOUBLE -> DECIMAL and -> LARGEINT follow Spark, which rounds the digits of Java's
  Double.toString. Those digits read back as the double, so they are within half a gap of it:
  a value clearly away from a rounding tie rounds as the binary value does, and an exact
  binary tie (0.125 to 2 places) is printed exactly. A double merely near a tie (12.35 is
  12.3499999...) rounds as Java's digits say: those values, and integral doubles of 2**53 and
  beyond (-> LARGEINT), go to the reference.
- DECIMAL / LARGEINT -> FLOAT / DOUBLE: one correctly rounded division when the unscaled value
  and the power of ten are exact doubles (|u| <= 2**53, scale <= 22); FLOAT also needs the
  double quotient not to sit on a float32 rounding midpoint. Anything else: the reference.
- FLOAT / DOUBLE -> STRING / VARCHAR is Java's Double.toString / Float.toString (not the
  shortest text, see rules): not vectorised at all, `number_to_string` returns None.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from alterflow.values.arrow_kernels import (
    POW10,
    Outcome,
    arrow_array,
    date_outcome,
    decimal_from_unscaled,
    decimal_scalar,
    decimal_unscaled,
    fits_integer_digits,
    half_up_rescale,
    keep_only,
    numpy_values,
    valid_mask,
)
from alterflow.values.cast_rules import INTEGER_RANGES, YYYYMMDD_RANGE
from alterflow.values.types import DataType, to_arrow

__all__ = ["number_to_integer", "number_to_float", "number_to_decimal", "number_to_string", "integer_to_date"]

_INT64_MIN, _INT64_MAX = INTEGER_RANGES["BIGINT"]

_Kernel = Callable[[pa.Array, DataType], Outcome]  # one kind of source number to one target type


def _by_source(old: DataType, from_float: _Kernel, from_decimal: _Kernel, from_integer: _Kernel) -> _Kernel:
    """The kernel for the source's kind of number: FLOAT / DOUBLE, a decimal (DECIMAL, and LARGEINT
    stored as DECIMAL(38,0): they share the decimal kernels), or TINYINT .. BIGINT."""
    if old.is_float:
        return from_float
    if old.name in ("DECIMAL", "LARGEINT"):
        return from_decimal
    return from_integer


def _flags(array: pa.Array) -> np.ndarray:
    return numpy_values(array, False)


def _integers(array: pa.Array) -> np.ndarray:
    return numpy_values(array, 0).astype(np.int64)


def _doubles(array: pa.Array) -> np.ndarray:
    return numpy_values(array, 0.0).astype(np.float64)


# --------------------------------------------------------------------------------------------
# -> TINYINT .. LARGEINT
# --------------------------------------------------------------------------------------------


def number_to_integer(array: pa.Array, old: DataType, new: DataType) -> Outcome:
    """Integral and in range (number narrowing, decimals, floating values)."""
    return _by_source(old, _float_to_integer, _decimal_to_integer, _integer_to_integer)(array, new)


def _float_to_integer(array: pa.Array, new: DataType) -> Outcome:
    """The exact binary value must be integral and in range. -> LARGEINT rounds Double.toString's
    digits, which are the exact integer below 2**53 only; larger values are deferred."""
    valid = valid_mask(array)
    value = _doubles(array)
    with np.errstate(invalid="ignore"):
        integral = np.isfinite(value) & (np.floor(value) == value)
    if new.name == "LARGEINT":
        exact = integral & (np.abs(value) < 2.0**53)
        keep = valid & exact
        unscaled = np.where(keep, value, 0.0).astype(np.int64)
        values = decimal_from_unscaled(unscaled, keep, to_arrow(new))
        return Outcome(values, valid & ~integral, valid & integral & ~exact)
    low, high = INTEGER_RANGES[new.name]
    keep = valid & integral & (value >= float(low)) & (value < float(high + 1))  # both powers of two: exact
    return Outcome(arrow_array(np.where(keep, value, 0.0).astype(np.int64), keep, to_arrow(new)), valid & ~keep)


def _decimal_to_integer(array: pa.Array, new: DataType) -> Outcome:
    """Integral (no fraction digits) and in range. In numpy when the unscaled values fit an
    int64 (precision <= 18), or for scale 0 to a type within BIGINT (a value beyond int64 is out
    of range anyway); with Arrow's decimal kernels otherwise."""
    precision, scale = array.type.precision, array.type.scale
    low, high = INTEGER_RANGES[new.name]
    valid = valid_mask(array)
    if precision <= 18 or (scale == 0 and new.name != "LARGEINT"):
        unscaled, fits = decimal_unscaled(array)
        if scale <= 18:
            integral = unscaled % POW10[scale] == 0
            value = unscaled // POW10[scale]
        else:  # 10**scale is beyond every int64: only 0 is integral
            integral, value = unscaled == 0, np.zeros_like(unscaled)
        keep = valid & fits & integral & (value >= max(low, _INT64_MIN)) & (value <= min(high, _INT64_MAX))
        if new.name == "LARGEINT":
            return Outcome(decimal_from_unscaled(value, keep, to_arrow(new)), valid & ~keep)
        return Outcome(arrow_array(value, keep, to_arrow(new)), valid & ~keep)
    wider = array.cast(pa.decimal256(precision + 1, scale))  # round wants an integer digit (DECIMAL(38,38))
    keep = valid & _flags(pc.equal(pc.round(wider, 0, round_mode="towards_zero"), wider))
    largest = 10 ** (precision - scale)  # every value is below it in magnitude
    if high < largest:
        keep &= _flags(pc.less_equal(array, decimal_scalar(high, array.type)))
    if -low < largest:
        keep &= _flags(pc.greater_equal(array, decimal_scalar(low, array.type)))
    return Outcome(keep_only(array, keep).cast(to_arrow(new)), valid & ~keep)


def _integer_to_integer(array: pa.Array, new: DataType) -> Outcome:
    """In range (a narrowing)."""
    valid = valid_mask(array)
    value = _integers(array)
    low, high = INTEGER_RANGES[new.name]
    keep = valid & (value >= low) & (value <= high)
    return Outcome(arrow_array(value, keep, to_arrow(new)), valid & ~keep)


# --------------------------------------------------------------------------------------------
# -> FLOAT / DOUBLE
# --------------------------------------------------------------------------------------------


def number_to_float(array: pa.Array, old: DataType, new: DataType) -> Outcome:
    """Correctly rounded (some decimals deferred, see `_decimal_to_float`); DOUBLE -> FLOAT fails
    beyond FLOAT's range and for NaN / +-inf."""
    return _by_source(old, _float_to_float, _decimal_to_float, _integer_to_float)(array, new)


def _float_to_float(array: pa.Array, new: DataType) -> Outcome:
    """DOUBLE -> FLOAT rounds to nearest and fails beyond FLOAT's range (and NaN, +-inf)."""
    valid = valid_mask(array)
    value = _doubles(array)
    with np.errstate(over="ignore", invalid="ignore"):
        narrowed = value.astype(np.float32)
    keep = valid & np.isfinite(value) & np.isfinite(narrowed)
    return Outcome(arrow_array(narrowed, keep, to_arrow(new)), valid & ~keep)


def _float32_midpoints(quotient: np.ndarray, narrowed: np.ndarray) -> np.ndarray:
    """Per row, whether the double `quotient` lies exactly halfway between two float32 values:
    only there can rounding the double to float32 differ from rounding the exact value."""
    back = narrowed.astype(np.float64)
    toward = np.where(quotient > back, np.inf, -np.inf).astype(np.float32)
    neighbour = np.nextafter(narrowed, toward).astype(np.float64)
    return (back != quotient) & (quotient == (back + neighbour) / 2)


def _decimal_to_float(array: pa.Array, new: DataType) -> Outcome:
    """BigDecimal.doubleValue / floatValue (correctly rounded). Scale 0 within int64: numpy's
    integer conversion. Otherwise |u| <= 2**53 and scale <= 22 make u and 10**scale exact
    doubles, so u / 10**scale is one correctly rounded division. The rest is deferred."""
    valid = valid_mask(array)
    scale = array.type.scale
    unscaled, fits = decimal_unscaled(array)
    target = to_arrow(new)
    if scale == 0:
        exact = fits
        converted = unscaled.astype(target.to_pandas_dtype())
    else:
        exact = fits & (unscaled >= -(2**53)) & (unscaled <= 2**53) & (scale <= 22)
        quotient = unscaled.astype(np.float64) / 10.0**scale
        converted = quotient
        if new.name == "FLOAT":
            converted = quotient.astype(np.float32)
            exact &= ~_float32_midpoints(quotient, converted)
    keep = valid & exact
    return Outcome(arrow_array(converted, keep, target), np.zeros(len(array), dtype=bool), valid & ~exact)


def _integer_to_float(array: pa.Array, new: DataType) -> Outcome:
    """Correctly rounded: numpy's int64 -> float32 / float64 is one rounding. Never fails."""
    target = to_arrow(new)
    converted = _integers(array).astype(target.to_pandas_dtype())
    return Outcome(arrow_array(converted, valid_mask(array), target), np.zeros(len(array), dtype=bool))


# --------------------------------------------------------------------------------------------
# -> DECIMAL
# --------------------------------------------------------------------------------------------


def number_to_decimal(array: pa.Array, old: DataType, new: DataType) -> Outcome:
    """HALF_UP to the target's scale; a failure when the integer digits overflow."""
    return _by_source(old, _float_to_decimal, _decimal_to_decimal, _integer_to_decimal)(array, new)


def _decimal_to_decimal(array: pa.Array, new: DataType) -> Outcome:
    """Rescale the unscaled integers: multiply by 10**shift, or divide HALF_UP. numpy when both
    precisions are <= 18; Arrow's decimal cast and round otherwise (rounding in a decimal256 one
    digit wider, so a carry such as 9.99 -> 10.0 always has room)."""
    old_precision, old_scale = array.type.precision, array.type.scale
    precision, scale = new.precision, new.scale
    target = to_arrow(new)
    valid = valid_mask(array)
    if old_precision <= 18 and precision <= 18:
        unscaled = decimal_unscaled(array)[0]
        shift = scale - old_scale
        if shift >= 0:
            keep = valid & (np.abs(unscaled) < 10 ** (precision - shift))  # precision >= scale >= shift
            result = np.where(keep, unscaled, 0) * POW10[shift]
        else:
            result, fits = half_up_rescale(unscaled, -shift, precision)
            keep = valid & fits
        return Outcome(decimal_from_unscaled(result, keep, target), valid & ~keep)
    keep = valid
    if scale >= old_scale:
        if precision - scale < old_precision - old_scale:
            keep = valid & fits_integer_digits(array, precision - scale)
        return Outcome(keep_only(array, keep).cast(target), valid & ~keep)
    wider = array.cast(pa.decimal256(old_precision + 1, old_scale))
    rounded = pc.round(wider, scale, round_mode="half_towards_infinity")
    if precision - scale <= old_precision - old_scale:
        keep = valid & fits_integer_digits(rounded, precision - scale)
    return Outcome(keep_only(rounded, keep).cast(target), valid & ~keep)


def _float_to_decimal(array: pa.Array, new: DataType) -> Outcome:
    """HALF_UP of Double.toString(v)'s digits t (FLOAT widened to double first) to the scale s.

    |t - v| is at most half the gap between v and its neighbours (t reads back as v), so with
    X = |v| * 10**s the result is known when every value within `spread` of the computed X (that
    half gap plus rounding errors) rounds to one integer, and for exact binary ties
    (`_exact_ties`). Other values near a tie are deferred: only Java's digits settle them."""
    precision, scale = new.precision, new.scale
    valid = valid_mask(array)
    value = _doubles(array)
    finite = np.isfinite(value)
    magnitude = np.where(finite, np.abs(value), 0.0)
    factor = 10.0**scale
    with np.errstate(over="ignore", invalid="ignore"):
        scaled = magnitude * factor
        # X's rounding errors (10**s: 1, product: 1, the +-0.5 sums: 2 at most) are below 2**-51 of
        # it; np.spacing (the larger gap) covers half a gap twice
        spread = scaled * 2.0**-50 + np.spacing(magnitude) * factor + 2.0**-30
        low = np.floor(scaled - spread + 0.5)
        high = np.floor(scaled + spread + 0.5)
    tie, tie_result = _exact_ties(magnitude, scale, scaled)
    decided = finite & (((high < 2.0**50) & (low == high)) | tie)
    result = np.where(tie, tie_result, high)
    too_big = finite & (magnitude >= 2.0 * 10.0 ** (precision - scale))  # t >= 10**(p-s) for sure
    overflow = decided & (result >= float(10**precision))
    failed = valid & (~finite | too_big | overflow)
    keep = valid & decided & ~overflow & ~too_big
    unscaled = np.where(keep, np.where(value < 0, -result, result), 0.0).astype(np.int64)
    return Outcome(decimal_from_unscaled(unscaled, keep, to_arrow(new)), failed, valid & ~keep & ~failed)


def _exact_ties(magnitude: np.ndarray, scale: int, scaled: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(tie, result): where X = magnitude * 10**scale is exactly k + 1/2 (0.125 to 2 places,
    2.5 to 0), the HALF_UP result k + 1, when half the gap around the magnitude is at most 1/8
    of a unit of the scale.

    The magnitude is odd * 2**e (odd: its significand without trailing zero bits), so
    X = odd * 5**s * 2**(e+s) is k + 1/2 exactly when e = -(s+1): when the magnitude's lowest
    set bit is 2**-(s+1); then 2X = odd * 5**s. The decimal digits of such a value end with
    that 5, and Java, which emits the exact value's digits until the rest is within half a
    gap, cannot stop before it (the rest is at least half a unit there, the half gap at most
    1/8) and stops right after it (the rest is 0): t = v, which HALF_UP rounds away from 0."""
    if scale > 21:  # X < 2**50 needs 5**s < 2X < 2**51: no tie qualifies
        return np.zeros(len(magnitude), dtype=bool), np.zeros(len(magnitude))
    mantissa, exponent = np.frexp(magnitude)  # magnitude = mantissa * 2**exponent, 0.5 <= mantissa < 1
    significand = (mantissa * 2.0**53).astype(np.int64)  # exact: 53 bits
    lowest_bit = significand & -significand
    lowest_exponent = exponent - 53 + (np.frexp(lowest_bit.astype(np.float64))[1] - 1)
    with np.errstate(over="ignore", invalid="ignore"):
        small_gap = np.spacing(magnitude) * 10.0**scale <= 0.25
    tie = (significand > 0) & (lowest_exponent == -(scale + 1)) & small_gap & (scaled < 2.0**50)
    odd = np.where(tie, significand // np.where(tie, lowest_bit, 1), 0)
    return tie, ((odd * 5**scale + 1) // 2).astype(np.float64)


def _integer_to_decimal(array: pa.Array, new: DataType) -> Outcome:
    """Exact; a failure when the integer has more digits than the target's integer part."""
    valid = valid_mask(array)
    value = _integers(array)
    keep = valid
    if new.precision - new.scale <= 18:
        limit = 10 ** (new.precision - new.scale)
        keep = valid & (value > -limit) & (value < limit)
    # via DECIMAL(38,0): Arrow's int64 -> DECIMAL(p,s) cast wants room for any int64
    exact = arrow_array(value, keep, pa.int64()).cast(pa.decimal128(38, 0))
    return Outcome(exact.cast(to_arrow(new)), valid & ~keep)


# --------------------------------------------------------------------------------------------
# -> STRING / VARCHAR(n), INT / BIGINT -> DATE
# --------------------------------------------------------------------------------------------


def number_to_string(array: pa.Array, old: DataType, new: DataType) -> Outcome | None:
    """Integers print as Python and Java do; Arrow prints decimals as BigDecimal.toString (plain,
    or scientific when the adjusted exponent is below -6: "1E-38", "0E-10"). FLOAT / DOUBLE:
    None, Java's float-to-text stays with the reference. VARCHAR(n) fails longer texts."""
    if old.is_float:
        return None
    valid = valid_mask(array)
    text = pc.cast(array, pa.string())
    keep = valid
    if new.name == "VARCHAR":
        keep = valid & (numpy_values(pc.utf8_length(text), 0) <= new.length)
    return Outcome(keep_only(text, keep), valid & ~keep)


def integer_to_date(array: pa.Array, old: DataType, new: DataType) -> Outcome:
    """yyyymmdd with a four-digit year, a real date."""
    valid = valid_mask(array)
    value = _integers(array)
    first, last = YYYYMMDD_RANGE
    year, month, day = value // 10000, value // 100 % 100, value % 100
    return date_outcome(year, month, day, valid & (value >= first) & (value <= last), valid)
