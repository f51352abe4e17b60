"""Building blocks of the vectorised conversions (`vectorized_text`, `vectorized_numbers`): the
`Outcome` a family's kernel returns, moving values between Arrow and numpy, unscaled DECIMAL
values, and calendar arithmetic.

Every kernel reproduces `cast_rules.value_converter` exactly for the values it decides. A value it
cannot decide exactly (a tie that only Java's float-to-text digits settle, a text too long for
an exact Arrow parse, ...) is *deferred*: `arrow_columns.convert_array` hands those rows to the
reference, value by value. Deferral is for rare values only; the common case never leaves numpy
and Arrow's C++ kernels.
"""

from __future__ import annotations

import decimal
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from alterflow.values.cast_rules import YEAR_PIVOT

__all__ = [
    "Outcome",
    "WHITESPACE",
    "POW10",
    "valid_mask",
    "numpy_values",
    "arrow_array",
    "keep_only",
    "as_mask",
    "decimal_unscaled",
    "decimal_from_unscaled",
    "decimal_scalar",
    "fits_integer_digits",
    "half_up_divide",
    "half_up_rescale",
    "two_digit_years",
    "real_dates",
    "days_since_epoch",
    "date_array",
    "date_outcome",
]

# The characters of cast_rules.WS (ASCII whitespace), for pc.ascii_trim.
WHITESPACE = " \t\n\r\x0b\x0c"

# 10**0 .. 10**18: every power of ten an int64 holds.
POW10 = np.array([10**i for i in range(19)], dtype=np.int64)


@dataclass(frozen=True)
class Outcome:
    """A column converted by kernels.

    values: the new type's Arrow array; NULL where the source is NULL, failed or deferred.
    failed: per row, whether a non-NULL source value cannot be converted.
    deferred: per row, whether the kernels left the value to the reference (None: no row).
    """

    values: pa.Array
    failed: np.ndarray
    deferred: np.ndarray | None = None


def valid_mask(array: pa.Array) -> np.ndarray:
    """Per row, whether the value is not NULL."""
    if array.null_count == 0:
        return np.ones(len(array), dtype=bool)
    return array.is_valid().to_numpy(zero_copy_only=False)


def numpy_values(array: pa.Array, fill: object = 0) -> np.ndarray:
    """The values as a numpy array, NULL replaced by `fill` (so arithmetic on them is defined)."""
    if array.null_count:
        array = pc.fill_null(array, fill)
    return array.to_numpy(zero_copy_only=False)


def as_mask(mask: np.ndarray) -> pa.Array:
    """A numpy bool mask as an Arrow boolean array (the condition of pc.if_else)."""
    return pa.array(mask, type=pa.bool_())


def arrow_array(values: np.ndarray, keep: np.ndarray, arrow_type: pa.DataType) -> pa.Array:
    """An Arrow array of `arrow_type` from numpy values, NULL where `keep` is False. The values
    at dropped rows may be anything (they are zeroed so no cast can trip on them)."""
    values = np.where(keep, values, np.zeros((), dtype=values.dtype))
    if pa.types.is_date32(arrow_type):
        return pa.array(values.astype(np.int32), type=pa.date32(), mask=~keep)
    return pa.array(values, mask=~keep).cast(arrow_type)


def keep_only(array: pa.Array, keep: np.ndarray) -> pa.Array:
    """`array` with NULL where `keep` is False."""
    if keep.all():
        return array
    return pc.if_else(as_mask(keep), array, pa.scalar(None, array.type))


def decimal_scalar(value: int | decimal.Decimal, arrow_type: pa.DataType) -> pa.Scalar:
    """A decimal scalar of exactly `arrow_type` (Arrow compares decimals of one type only)."""
    return pa.scalar(decimal.Decimal(value), arrow_type)


def fits_integer_digits(array: pa.Array, digits: int) -> np.ndarray:
    """Per decimal value, whether its integer part has at most `digits` digits (|v| < 10**digits,
    as DECIMAL(p, s) asks with p - s digits); False for NULL."""
    limit = decimal_scalar(10**digits, array.type)
    return numpy_values(pc.less(pc.abs(array), limit), False)


# --------------------------------------------------------------------------------------------
# Unscaled DECIMAL values (the integer u of u * 10**-scale) in int64
# --------------------------------------------------------------------------------------------


def decimal_unscaled(array: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(u, fits): each decimal128 value's unscaled integer as int64, and whether it fits one.

    Read straight from the 16-byte little-endian two's-complement slots: the value fits an
    int64 when the high word is the sign extension of the low one. NULL slots hold anything.
    """
    n = len(array)
    data = array.buffers()[1]
    if data is None or n == 0:
        return np.zeros(n, dtype=np.int64), np.ones(n, dtype=bool)
    words = np.frombuffer(data, dtype=np.int64, count=2 * (array.offset + n))[2 * array.offset :]
    low, high = words[0::2], words[1::2]
    return low.copy(), high == (low >> 63)


def decimal_from_unscaled(unscaled: np.ndarray, keep: np.ndarray, arrow_type: pa.DataType) -> pa.Array:
    """A decimal128 array of `arrow_type` whose unscaled integers are `unscaled` (int64),
    NULL where `keep` is False. The unscaled values must have at most the type's precision."""
    as_integers = arrow_array(unscaled.astype(np.int64), keep, pa.int64())
    return as_integers.cast(pa.decimal128(38, 0)).view(arrow_type)


def half_up_divide(magnitude: np.ndarray, digits: np.ndarray | int) -> np.ndarray:
    """magnitude / 10**digits rounded HALF_UP, for magnitudes >= 0 and 1 <= digits <= 18.

    HALF_UP only looks at the first dropped digit: divide by 10**(digits-1), then the last
    digit decides (>= 5 rounds away from zero)."""
    shifted = magnitude // POW10[np.asarray(digits) - 1]
    return shifted // 10 + (shifted % 10 >= 5)


def half_up_rescale(unscaled: np.ndarray, digits: int, precision: int) -> tuple[np.ndarray, np.ndarray]:
    """(rescaled, fits): int64 unscaled decimal values with `digits` (1..18) fraction digits fewer,
    rounded HALF_UP (a tie away from zero), and per value whether the result has at most
    `precision` digits."""
    magnitude = half_up_divide(np.abs(unscaled), digits)
    return np.where(unscaled < 0, -magnitude, magnitude), magnitude < 10**precision


# --------------------------------------------------------------------------------------------
# Calendar
# --------------------------------------------------------------------------------------------


def two_digit_years(yy: np.ndarray) -> np.ndarray:
    """cast_rules.two_digit_year for arrays: 00..68 -> 20xx, 69..99 -> 19xx."""
    return np.where(yy < YEAR_PIVOT, 2000 + yy, 1900 + yy)


def _calendar_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(leap, year_start, month_start): per year 0..9999 whether it is a leap year and the days
    from 1970-01-01 to its January 1st (proleptic Gregorian), and per (leap, month 1..13) the
    days of the year before the month's first day. Tables make every date two lookups."""
    years = np.arange(10000, dtype=np.int64)
    leap = ((years % 4 == 0) & (years % 100 != 0)) | (years % 400 == 0)
    days_in_year = 365 + leap
    year_start = np.concatenate([[0], np.cumsum(days_in_year)[:-1]])  # from 0000-01-01
    year_start += -719162 - year_start[1]  # 0001-01-01 is 719162 days before 1970-01-01
    common = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
    lengths = np.array([common, [31, 29] + common[2:]])
    month_start = np.zeros((2, 14), dtype=np.int64)
    month_start[:, 2:] = np.cumsum(lengths, axis=1)
    return leap, year_start, month_start


_LEAP, _YEAR_START, _MONTH_START = _calendar_tables()


def real_dates(year: np.ndarray, month: np.ndarray, day: np.ndarray) -> np.ndarray:
    """Per row, whether (year, month, day) is a date of years 1..9999 (cast_rules._date_or_fail)."""
    year_ok = (year >= 1) & (year <= 9999)
    month_ok = (month >= 1) & (month <= 12)
    leap = _LEAP[np.where(year_ok, year, 1)].astype(np.int64)
    month = np.where(month_ok, month, 1)
    days_in_month = _MONTH_START[leap, month + 1] - _MONTH_START[leap, month]
    return year_ok & month_ok & (day >= 1) & (day <= days_in_month)


def days_since_epoch(year: np.ndarray, month: np.ndarray, day: np.ndarray) -> np.ndarray:
    """Days from 1970-01-01 of real dates (years 1..9999), the value of an Arrow date32."""
    return _YEAR_START[year] + _MONTH_START[_LEAP[year].astype(np.int64), month] + day - 1


def date_array(year: np.ndarray, month: np.ndarray, day: np.ndarray, keep: np.ndarray) -> pa.Array:
    """A date32 array of the given dates, NULL where `keep` is False (those rows may hold
    anything, they are not computed into a date)."""
    year, month, day = (np.where(keep, part, 1).astype(np.int64) for part in (year, month, day))
    return arrow_array(days_since_epoch(year, month, day), keep, pa.date32())


def date_outcome(year: np.ndarray, month: np.ndarray, day: np.ndarray, candidate: np.ndarray, valid: np.ndarray) -> Outcome:
    """A -> DATE kernel's outcome from the (year, month, day) it read: the `candidate` rows that are
    real dates become those dates, every other `valid` row fails."""
    keep = candidate & real_dates(year, month, day)
    return Outcome(date_array(year, month, day, keep), valid & ~keep)
