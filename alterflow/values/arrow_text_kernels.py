"""Vectorised STRING / VARCHAR / CHAR -> number and -> DATE conversions: the same values and the
same failures as `cast_rules.value_converter`, computed by Arrow kernels (RE2 matching, trimming,
parsing) and numpy, with no Python per value.

The texts are validated with the rules' own patterns (one source: RE2 reads them as Python does,
anchored to the whole value; INT_PATTERN, simple enough, with cheaper kernels), so a text that
passes is one the reference parses. Arrow's parsers are then only given texts they read
exactly: digits for integers, decimal numbers for FLOAT / DOUBLE (Arrow uses fast_float:
correctly rounded, to float32 directly), and, for DECIMAL, texts short enough that Arrow's
decimal parser holds every digit. DATE texts are parsed from their bytes in numpy (the date
pattern's back-reference is not RE2's).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from alterflow.values.arrow_kernels import (
    WHITESPACE,
    Outcome,
    arrow_array,
    as_mask,
    date_outcome,
    decimal_from_unscaled,
    decimal_unscaled,
    fits_integer_digits,
    half_up_rescale,
    keep_only,
    numpy_values,
    two_digit_years,
    valid_mask,
)
from alterflow.values.cast_rules import DECIMAL_PATTERN, INTEGER_RANGES, NUMBER_PATTERN
from alterflow.values.types import DataType, to_arrow

__all__ = ["string_to_integer", "string_to_float", "string_to_decimal", "string_to_date"]


def _matches(array: pa.Array, pattern: str) -> np.ndarray:
    """Per row, whether the whole text matches a rules pattern (False for NULL)."""
    return numpy_values(pc.match_substring_regex(array, "^(?:" + pattern + ")$"), False)


def _lengths(array: pa.Array) -> np.ndarray:
    return numpy_values(pc.binary_length(array), 0)


def _flags(array: pa.Array) -> np.ndarray:
    return numpy_values(array, False)


# --------------------------------------------------------------------------------------------
# Integers
# --------------------------------------------------------------------------------------------


def string_to_integer(array: pa.Array, old: DataType, new: DataType) -> Outcome:
    """INT_PATTERN, then the digits without leading zeros parsed by Arrow: as uint64 (up to 19
    digits covers BIGINT's magnitudes) or, for LARGEINT, as DECIMAL(38,0).

    INT_PATTERN is checked without a regex (the regex costs more than the rest): once the
    whitespace is trimmed, at most one sign, then only ASCII digits, at least one."""
    valid = valid_mask(array)
    text = pc.ascii_trim(array, WHITESPACE)
    unsigned = pc.ascii_ltrim(text, "+-")
    signs = _lengths(text) - _lengths(unsigned)
    ok = valid & (signs <= 1) & _flags(pc.ascii_is_decimal(unsigned))
    negative = _flags(pc.starts_with(text, "-"))
    digits = pc.ascii_ltrim(unsigned, "0")  # "" for zero
    count = _lengths(digits)
    if new.name == "LARGEINT":
        parsed = ok & (count <= 38)  # 39 digits are at least 10**38, beyond LARGEINT
        magnitude = pc.cast(pc.if_else(as_mask(parsed & (count > 0)), digits, "0"), pa.decimal128(38, 0))
        signed = pc.if_else(as_mask(negative), pc.negate(magnitude), magnitude)
        return Outcome(keep_only(signed, parsed), valid & ~parsed)
    low, high = INTEGER_RANGES[new.name]
    parsed = ok & (count <= 19)
    magnitude = numpy_values(pc.cast(pc.if_else(as_mask(parsed & (count > 0)), digits, "0"), pa.uint64()))
    keep = parsed & np.where(negative, magnitude <= -low, magnitude <= high)
    # two's complement: -magnitude wraps to the right int64 for every magnitude <= 2**63
    value = np.where(negative, (np.uint64(0) - magnitude).view(np.int64), magnitude.view(np.int64))
    return Outcome(arrow_array(value, keep, to_arrow(new)), valid & ~keep)


# --------------------------------------------------------------------------------------------
# FLOAT / DOUBLE
# --------------------------------------------------------------------------------------------


def string_to_float(array: pa.Array, old: DataType, new: DataType) -> Outcome:
    """NUMBER_PATTERN, then Arrow's parser (correctly rounded like Python's float() and Java's
    parseDouble / parseFloat; it keeps the sign of zero and underflows to zero). A text beyond
    the type's range parses to +-inf: a failure, as in the reference."""
    valid = valid_mask(array)
    ok = valid & _matches(array, NUMBER_PATTERN)
    text = pc.ascii_trim(array, WHITESPACE)
    parsed = pc.cast(pc.if_else(as_mask(ok), text, "0"), to_arrow(new))
    keep = ok & np.isfinite(numpy_values(parsed, 0.0))
    return Outcome(keep_only(parsed, keep), valid & ~keep)


# --------------------------------------------------------------------------------------------
# DECIMAL
# --------------------------------------------------------------------------------------------


def string_to_decimal(array: pa.Array, old: DataType, new: DataType) -> Outcome:
    """DECIMAL_PATTERN; the magnitude read as a double settles the texts that surely overflow or
    surely round to zero; the rest is parsed exactly by Arrow into one more fraction digit than
    the target (truncating the others: HALF_UP looks at the first dropped digit only) and
    rounded HALF_UP. Texts longer than Arrow's decimal parser holds are deferred."""
    precision, scale = new.precision, new.scale
    valid = valid_mask(array)
    ok = valid & _matches(array, DECIMAL_PATTERN)
    text = pc.ascii_trim(array, WHITESPACE)
    # |text| within a relative 2**-53 (inf when huge, 0.0 when tiny)
    magnitude = np.abs(numpy_values(pc.cast(pc.if_else(as_mask(ok), text, "0"), pa.float64()), 0.0))
    zero = ok & (magnitude <= 0.4 * 10.0**-scale)  # surely below half a unit: rounds to 0
    too_big = ok & (magnitude >= 2.0 * 10.0 ** (precision - scale))  # surely >= 10**(p-s)
    candidate = ok & ~zero & ~too_big
    # Candidates are below 2 * 10**(p-s): with s+1 fraction digits, at most p+2 digits in all.
    if precision <= 36:
        parse_type, max_length = pa.decimal128(38, scale + 1), 38
    else:
        parse_type, max_length = pa.decimal256(76, scale + 1), 76
    deferred = candidate & (_lengths(text) > max_length)  # more digits than the parser holds
    parsed = candidate & ~deferred
    options = pc.CastOptions(parse_type, allow_decimal_truncate=True)
    truncated = pc.if_else(as_mask(parsed), text, "0").cast(options=options)  # zero rows parse "0"
    values, overflow = _round_last_digit(truncated, new)
    keep = (parsed & ~overflow) | zero
    return Outcome(keep_only(values, keep), valid & ~keep & ~deferred, deferred)


def _round_last_digit(truncated: pa.Array, new: DataType) -> tuple[pa.Array, np.ndarray]:
    """(values of `new`, overflowed): decimals with one fraction digit more than `new` rounded
    HALF_UP to it; overflowed where the result needs more integer digits than `new` has. In
    numpy when the unscaled values fit an int64 (below 2 * 10**18 for precision <= 17), else
    with Arrow's round (half_towards_infinity is Java's HALF_UP)."""
    precision, scale = new.precision, new.scale
    if precision <= 17:
        rounded, fits = half_up_rescale(decimal_unscaled(truncated)[0], 1, precision)
        return decimal_from_unscaled(rounded, fits, to_arrow(new)), ~fits
    rounded = pc.round(truncated, scale, round_mode="half_towards_infinity")
    fits = fits_integer_digits(rounded, precision - scale)  # `truncated` has no NULL
    return keep_only(rounded, fits).cast(to_arrow(new)), ~fits


# --------------------------------------------------------------------------------------------
# DATE
# --------------------------------------------------------------------------------------------


def _date_layouts() -> list[tuple[int, tuple, tuple, tuple, tuple]]:
    """Every shape DATE_PATTERN accepts once trimmed, as (length, year positions, month
    positions, day positions, separator positions): Y-M-D and Y/M/D with a 4- or 2-digit year
    and 1- or 2-digit month and day, then YYYYMMDD and YYMMDD."""
    layouts = []
    for year_digits in (4, 2):
        for month_digits in (1, 2):
            for day_digits in (1, 2):
                first = year_digits
                second = first + 1 + month_digits
                layouts.append(
                    (
                        second + 1 + day_digits,
                        tuple(range(first)),
                        tuple(range(first + 1, second)),
                        tuple(range(second + 1, second + 1 + day_digits)),
                        (first, second),
                    )
                )
    layouts.append((8, (0, 1, 2, 3), (4, 5), (6, 7), ()))
    layouts.append((6, (0, 1), (2, 3), (4, 5), ()))
    return layouts


_DATE_LAYOUTS = _date_layouts()
_DATE_WIDTH = max(layout[0] for layout in _DATE_LAYOUTS)


def _shape_table() -> np.ndarray:
    """shape key -> index into _DATE_LAYOUTS (-1: no layout). A text's shape key has bit p set
    when byte p is a digit or '/', and bit _DATE_WIDTH + p when it is '-' or '/' (`_shape_keys`).
    A layout's keys have its digits where it has digits and the same separator at both of its
    separators, so DATE_PATTERN's back-reference is in the table. No two layouts share a key."""
    table = np.full(1 << (2 * _DATE_WIDTH), -1, dtype=np.int8)
    for index, (_, year_at, month_at, day_at, separators_at) in enumerate(_DATE_LAYOUTS):
        digits = sum(1 << p for p in year_at + month_at + day_at)
        separators = sum(1 << p for p in separators_at)
        keys = [digits]  # the all-digit shapes
        if separators_at:  # '-' at both separators, '/' at both
            keys = [digits | (separators << _DATE_WIDTH), digits | separators | (separators << _DATE_WIDTH)]
        for key in keys:
            if table[key] != -1:  # pragma: no cover - the layouts above never collide
                raise AssertionError(f"date layouts {table[key]} and {index} share a shape")
            table[key] = index
    return table


def _shape_keys(columns: np.ndarray) -> np.ndarray:
    """Each text's shape key (see `_shape_table`) from its bytes, `columns[p]` holding byte p of
    every text (contiguous per position: numpy is fast along a column, slow across a row)."""
    low = np.zeros(columns.shape[1], dtype=np.int64)
    high = np.zeros(columns.shape[1], dtype=np.int64)
    for position, column in enumerate(columns):
        slash = column == ord("/")
        low |= (((column - np.uint8(ord("0"))) < 10) | slash).astype(np.int64) << position  # uint8 wraps below '0'
        high |= ((column == ord("-")) | slash).astype(np.int64) << position
    return low | (high << _DATE_WIDTH)


_SHAPE_TABLE = _shape_table()
# each layout's length, indexed like _DATE_LAYOUTS; the last entry (-1) answers layout -1
_LAYOUT_LENGTHS = np.array([layout[0] for layout in _DATE_LAYOUTS] + [-1], dtype=np.int64)


def _fixed_width_bytes(text: pa.Array, keep: np.ndarray, width: int) -> np.ndarray:
    """The bytes of each kept text, right-padded with spaces to `width`, as an (n, width) uint8
    matrix (rows not kept are all spaces). Kept texts must be ASCII and at most `width` long:
    then every padded value has exactly `width` bytes and the values are one contiguous block."""
    padded = pc.ascii_rpad(pc.if_else(as_mask(keep), text, ""), width, " ")
    if len(padded) == 0:
        return np.zeros((0, width), dtype=np.uint8)
    offset_type = np.int64 if pa.types.is_large_string(padded.type) else np.int32
    buffers = padded.buffers()
    start = int(np.frombuffer(buffers[1], dtype=offset_type, count=padded.offset + 1)[padded.offset])
    data = np.frombuffer(buffers[2], dtype=np.uint8, count=start + width * len(padded))
    return data[start:].reshape(len(padded), width)


def _number(columns: np.ndarray, positions: tuple) -> np.ndarray:
    """The decimal number written by the digits at `positions` (rows of `columns`)."""
    value = np.zeros(columns.shape[1], dtype=np.int32)
    for position in positions:
        value = value * 10 + columns[position]  # the bytes, '0' counted as 48 ...
    return value.astype(np.int64) - ord("0") * int("1" * len(positions))  # ... taken back at once


def string_to_date(array: pa.Array, old: DataType, new: DataType) -> Outcome:
    """The trimmed text's bytes classified (digit, '-', '/', other) into a shape key, the key
    looked up among DATE_PATTERN's shapes, then each shape's digits read and the calendar
    checked."""
    valid = valid_mask(array)
    text = pc.ascii_trim(array, WHITESPACE)
    lengths = _lengths(text)
    short = valid & (lengths <= _DATE_WIDTH) & _flags(pc.string_is_ascii(text))  # longer ones never match
    columns = np.ascontiguousarray(_fixed_width_bytes(text, short, _DATE_WIDTH).T)
    layout = _SHAPE_TABLE[_shape_keys(columns)]
    matched = short & (layout >= 0) & (lengths == _LAYOUT_LENGTHS[layout])  # a shorter text padded looks alike
    year, month, day = (np.zeros(len(array), dtype=np.int64) for _ in range(3))
    for index in np.unique(layout[matched]):
        _, year_at, month_at, day_at, _ = _DATE_LAYOUTS[index]
        rows = np.flatnonzero(matched & (layout == index))
        part = columns if len(rows) == len(array) else columns[:, rows]
        years = _number(part, year_at)
        year[rows] = two_digit_years(years) if len(year_at) == 2 else years
        month[rows] = _number(part, month_at)
        day[rows] = _number(part, day_at)
    return date_outcome(year, month, day, matched, valid)
