"""Loaded values converted to a column's type by Arrow compute kernels, under exactly the rules of
`alterflow.values.types.coerce_value` (the reference, value by value).

Why: a bulk load called coerce_value once per value, which was most of a load's time (33 s of a
42 s profile for 1M rows). Here an input array is converted by a handful of kernels, and the
reference runs once, and only when the kernels found a bad value: on the first one, for its
message (`BadValue`).

How the kernels stay exact:

- Texts (CSV columns, JSON strings) have two formulations per type. The *quick* one is one Arrow
  cast, used only when a whole-array check guarantees that Arrow's parser can have read nothing
  but texts of the reference's grammar (for example: only the bytes 0-9 and '-' for integers,
  which Arrow's int64 parser reads exactly as `[-]digits` and refuses otherwise). The *exact*
  one spells the reference's grammar with trims, lengths, text comparisons and RE2 patterns
  shared with alterflow.values.types; it decides any array the quick one cannot vouch for (a refused
  value, whitespace, exponents, other date formats, ...).
- Typed inputs (Parquet, JSON numbers) follow Python's semantics of the value as pyarrow's
  as_py gives it: a float into an integer type must be integral, into DECIMAL it is its shortest
  repr (Arrow's float-to-text gives the same digits), a decimal into DOUBLE is correctly rounded
  (through its text, as Arrow's own decimal-to-double is not), a zoned timestamp is its UTC
  value, and a type coerce_value refuses outright (bool into INT, int into STRING, ...) is
  refused here too.

Every formulation here is checked against the reference by tests/values/test_load_coercion.py.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import math
import struct
from collections.abc import Callable
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from alterflow.errors import AlterflowError
from alterflow.values.text_patterns import YEAR_PIVOT
from alterflow.values.types import (
    BOOLEAN_TEXTS,
    DATETIME_TEXT_PATTERN,
    MAX_EXPONENT_DIGITS,
    NUMBER_TEXT_PATTERN,
    TEXT_WHITESPACE,
    DataType,
    InvalidValue,
    coerce_value,
    integer_range,
    to_arrow,
    typed_text,
)

__all__ = ["BadValue", "coerce_array"]


class BadValue(AlterflowError):
    """The first value of an array that its column type refuses: its index (counted over all
    chunks) and coerce_value's message for it."""

    def __init__(self, index: int, message: str):
        super().__init__(message)
        self.index = index
        self.message = message


def coerce_array(values: pa.Array | pa.ChunkedArray, t: DataType) -> pa.Array | pa.ChunkedArray:
    """`values` as type `t` (Arrow type `to_arrow(t)`), each value what coerce_value makes of it;
    BadValue for the first value coerce_value refuses (its index in `values`). An array gives an
    array, a chunked array a chunked array (of pieces of _PIECE_ROWS rows)."""
    if isinstance(values, pa.ChunkedArray) and values.num_chunks > 2 * (len(values) // _PIECE_ROWS + 1):
        values = _regrouped(values)
    pieces = [_coerce_piece(_piece(values, start), t, start) for start in range(0, len(values), _PIECE_ROWS)]
    if isinstance(values, pa.ChunkedArray):
        return pa.chunked_array(pieces, type=to_arrow(t))
    if len(pieces) == 1:
        return pieces[0]
    return pa.concat_arrays(pieces) if pieces else pa.array([], to_arrow(t))


# --------------------------------------------------------------------------------------------
# One array
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Converted:
    """values: the column type's array, NULL where the input is NULL or refused.
    bad: per row, whether a non-NULL input value is refused (no NULLs); None: no row is."""

    values: pa.Array
    bad: pa.Array | None = None


# Rows converted at once. A refused value (or a text the quick formulation cannot vouch for)
# costs the exact formulation on its piece only, and the pieces after a refused value are not
# converted at all; a piece is still large enough that the kernels' own overhead is negligible,
# and chunks of a few rows (some readers make them) are gathered into one piece.
_PIECE_ROWS = 1 << 16


def _piece(values: pa.Array | pa.ChunkedArray, start: int) -> pa.Array:
    """Rows start.. of `values`, as one plain array: dictionary-encoded values decoded, every
    text type as `string` (one offset width for the text kernels; STRING is stored so anyway)."""
    piece = values.slice(start, _PIECE_ROWS)
    if pa.types.is_dictionary(piece.type):
        piece = pc.cast(piece, piece.type.value_type)
    if pa.types.is_large_string(piece.type) or pa.types.is_string_view(piece.type):
        piece = pc.cast(piece, pa.string())
    return piece.combine_chunks() if isinstance(piece, pa.ChunkedArray) else piece


def _regrouped(values: pa.ChunkedArray) -> pa.ChunkedArray:
    """Consecutive small chunks joined into chunks of about _PIECE_ROWS rows: slicing a chunked
    array costs a step per chunk, which thousands of tiny chunks make the larger cost."""
    if pa.types.is_dictionary(values.type):
        values = pc.cast(values, values.type.value_type)  # chunks may have different dictionaries
    groups, group, rows = [], [], 0
    for chunk in values.chunks:
        group.append(chunk)
        rows += len(chunk)
        if rows >= _PIECE_ROWS:
            groups.append(pa.concat_arrays(group))
            group, rows = [], 0
    if group:
        groups.append(pa.concat_arrays(group))
    return pa.chunked_array(groups, type=values.type)


def _coerce_piece(piece: pa.Array, t: DataType, start: int) -> pa.Array:
    converted = _converter(piece.type)(piece, t)
    if converted.bad is not None and converted.bad.true_count:
        index = pc.index(converted.bad, True).as_py()
        raise BadValue(start + index, _reference_message(piece, index, t))
    return converted.values


def _converter(source: pa.DataType) -> Callable[[pa.Array, DataType], _Converted]:
    """The kernel for an Arrow array of type `source`; `_refused` for any other type (times,
    durations, bytes, nested values)."""
    by_kind = (
        (pa.types.is_null, _from_nulls),
        (pa.types.is_string, _from_text),
        (pa.types.is_boolean, _from_booleans),
        (pa.types.is_integer, _from_integers),
        (pa.types.is_floating, _from_floats),
        (pa.types.is_decimal, _from_decimals),
        (pa.types.is_date, _from_dates),
        (pa.types.is_timestamp, _from_timestamps),
    )
    return next((convert for is_kind, convert in by_kind if is_kind(source)), _refused)


def _reference_message(array: pa.Array, index: int, t: DataType) -> str:
    """coerce_value's message for the value at `index`, which the kernels refused."""
    try:
        value = array[index].as_py()
    except (ValueError, OverflowError, pa.ArrowException):  # a date or time beyond Python's years 1..9999
        return f"value {_arrow_text(array, index)} does not fit {t.sql()}"
    try:
        coerce_value(value, t)
    except InvalidValue as exc:
        return str(exc)
    raise AssertionError(f"the vectorised coercion refused {value!r} as {t.sql()}, which coerce_value accepts")


def _arrow_text(array: pa.Array, index: int) -> str:
    try:
        return "'" + pc.cast(array.slice(index, 1), pa.string())[0].as_py() + "'"
    except pa.ArrowException:
        return f"of type {array.type}"


# --------------------------------------------------------------------------------------------
# Small helpers
# --------------------------------------------------------------------------------------------


def _bad(source: pa.Array, ok: pa.Array) -> pa.Array:
    """The rows whose value is not NULL and not ok (a NULL in `ok` is not ok)."""
    return pc.and_(pc.is_valid(source), pc.invert(pc.fill_null(ok, False)))


def _either(first: pa.Array | None, second: pa.Array | None) -> pa.Array | None:
    if first is None or second is None:
        return second if first is None else first
    return pc.or_(first, second)


def _null_unless(ok: pa.Array, values: pa.Array) -> pa.Array:
    return pc.if_else(ok, values, pa.scalar(None, values.type))


def _try_cast(values: pa.Array, target: pa.DataType) -> pa.Array | None:
    """Arrow's safe cast, or None when it refuses some value."""
    try:
        return pc.cast(values, target, safe=True)
    except pa.ArrowInvalid:
        return None


def _all(mask: pa.Array) -> bool:
    """Whether no row of a boolean array is false (NULL rows aside)."""
    return pc.all(mask).as_py() is not False


def _floor_divide(values: pa.Array, divisor: int) -> pa.Array:
    """Integer division rounding down (Arrow's rounds toward zero)."""
    quotient = pc.divide(values, divisor)
    return pc.if_else(pc.less(values, pc.multiply(quotient, divisor)), pc.subtract(quotient, 1), quotient)


def _remainder(values: pa.Array, divisor: int) -> pa.Array:
    """values mod divisor, for values >= 0."""
    return pc.subtract(values, pc.multiply(pc.divide(values, divisor), divisor))


# --------------------------------------------------------------------------------------------
# Whole-array checks of texts
# --------------------------------------------------------------------------------------------


def _text_bytes(text: pa.Array) -> bytes:
    """The UTF-8 bytes of all values of a `string` array, in one piece, for checks that look at
    every value in one pass. A NULL slot may hold bytes too: that only makes a check refuse an
    array it could have vouched for, never the opposite."""
    if len(text) == 0:
        return b""
    _validity, offsets, data = text.buffers()
    start = struct.unpack_from("<i", offsets, 4 * text.offset)[0]
    end = struct.unpack_from("<i", offsets, 4 * (text.offset + len(text)))[0]
    if data is None or end <= start:
        return b""
    return memoryview(data)[start:end].tobytes()


def _only_bytes(text: pa.Array, allowed: bytes) -> bool:
    return not _text_bytes(text).translate(None, allowed)


def _trim(text: pa.Array) -> pa.Array:
    """TEXT_WHITESPACE stripped from both ends of every value (ASCII only: a multi-byte UTF-8
    character never contains an ASCII byte, so trimming bytes is trimming characters)."""
    data = _text_bytes(text)
    if len(data.translate(None, TEXT_WHITESPACE.encode())) == len(data):
        return text
    return pc.ascii_trim(text, TEXT_WHITESPACE)


def _longest(text: pa.Array) -> int:
    """The most bytes of one value (at least its number of characters)."""
    return pc.max(pc.binary_length(text)).as_py() or 0


def _whole(pattern: str) -> str:
    """A pattern of alterflow.values.types matched against the whole text (RE2 searches otherwise)."""
    return f"^(?:{pattern})$"


def _number(digits: pa.Array) -> pa.Array:
    """ASCII digits (or '', read as 0) as int64."""
    return pc.cast(pc.if_else(pc.equal(pc.binary_length(digits), 0), "0", digits), pa.int64())


def _part(parts: pa.Array, name: str) -> pa.Array:
    """A named group of pc.extract_regex, NULL where the text did not match."""
    return pc.struct_field(parts, [name])


# --------------------------------------------------------------------------------------------
# Texts
# --------------------------------------------------------------------------------------------


def _from_text(text: pa.Array, t: DataType) -> _Converted:
    if t.is_string:
        return _text_to_string(text, t)
    trimmed = _trim(text)
    if t.name == "BOOLEAN":
        return _text_to_boolean(trimmed)
    if t.is_integer:
        return _quick_integers(trimmed, t) or _exact_integers(trimmed, t)
    if t.is_float:
        return _quick_floats(trimmed, t) or _exact_floats(trimmed, t)
    if t.name == "DECIMAL":
        return _text_to_decimal(trimmed, t)
    if t.name == "DATE":
        return _quick_dates(trimmed) or _exact_dates(trimmed)
    return _quick_datetimes(trimmed) or _exact_datetimes(trimmed)


def _text_to_string(text: pa.Array, t: DataType) -> _Converted:
    """Texts as they are; CHAR / VARCHAR refuse more characters than their length. Bytes bound
    characters from above, so the character count is only taken when some value is long."""
    if t.length is None or _longest(text) <= t.length:
        return _Converted(text)
    return _Converted(text, _bad(text, pc.less_equal(pc.utf8_length(text), t.length)))


_BOOLEAN_WORDS = pa.array(list(BOOLEAN_TEXTS), pa.string())
_TRUE_WORDS = pa.array([word for word, value in BOOLEAN_TEXTS.items() if value], pa.string())


def _text_to_boolean(trimmed: pa.Array) -> _Converted:
    """BOOLEAN_TEXTS, any case. ascii_lower equals Python's str.lower() wherever the result can
    be one of those ASCII words (no other character lower-cases to one of their letters)."""
    words = pc.ascii_lower(trimmed)
    known = pc.is_in(words, value_set=_BOOLEAN_WORDS)
    return _Converted(_null_unless(known, pc.is_in(words, value_set=_TRUE_WORDS)), _bad(trimmed, known))


def _quick_integers(trimmed: pa.Array, t: DataType) -> _Converted | None:
    """Texts made only of 0-9 and '-': Arrow's int64 parser reads exactly the `[-]digits` among
    them (leading zeros too) and refuses the rest ("5-", "--5", "-", "") and values past int64."""
    if not _only_bytes(trimmed, b"0123456789-"):
        return None
    wide = _try_cast(trimmed, pa.int64())
    return None if wide is None else _int64_to_integer(wide, t)


def _exact_integers(trimmed: pa.Array, t: DataType) -> _Converted:
    """INT_TEXT_PATTERN and the type's range, for any texts: the sign and the leading zeros are
    trimmed off, and the digits are compared with the range's bound as texts."""
    body = pc.ascii_ltrim(trimmed, "+-")
    one_sign = pc.less_equal(pc.subtract(pc.binary_length(trimmed), pc.binary_length(body)), 1)
    negative = pc.starts_with(trimmed, "-")
    digits = pc.ascii_ltrim(body, "0")
    ok = pc.and_(pc.and_(pc.ascii_is_decimal(body), one_sign), _digits_within_range(digits, negative, t))
    no_digit = pc.equal(pc.binary_length(digits), 0)
    signed = pc.binary_join_element_wise(pc.if_else(negative, "-", ""), pc.if_else(no_digit, "0", digits), "")
    wide = to_arrow(t) if t.name == "LARGEINT" else pa.int64()
    values = pc.cast(pc.cast(_null_unless(ok, signed), wide), to_arrow(t))
    return _Converted(values, _bad(trimmed, ok))


def _digits_within_range(digits: pa.Array, negative: pa.Array, t: DataType) -> pa.Array:
    """Whether [-]digits (without leading zeros) is in t's range: fewer digits than the bound on
    its side, or as many and not above it (texts of equal length compare like their numbers)."""
    low, high = integer_range(t)
    bound = pc.if_else(negative, str(-low), str(high))
    count, limit = pc.binary_length(digits), pc.binary_length(bound)
    return pc.or_(pc.less(count, limit), pc.and_(pc.equal(count, limit), pc.less_equal(digits, bound)))


def _quick_floats(trimmed: pa.Array, t: DataType) -> _Converted | None:
    """Texts made only of digits, signs, '.', 'e' and 'E': Arrow's float parser (fast_float,
    correctly rounded like float()) reads exactly the NUMBER_TEXT_PATTERN texts among them, any
    exponent, and refuses the rest."""
    if not _only_bytes(trimmed, b"0123456789+-.eE"):
        return None
    wide = _try_cast(trimmed, pa.float64())
    return None if wide is None else _double_to_float(wide, t)


def _exact_floats(trimmed: pa.Array, t: DataType) -> _Converted:
    number = pc.match_substring_regex(trimmed, _whole(NUMBER_TEXT_PATTERN))
    converted = _double_to_float(pc.cast(_null_unless(number, trimmed), pa.float64()), t)
    return _Converted(converted.values, _either(converted.bad, _bad(trimmed, number)))


def _text_to_decimal(text: pa.Array, t: DataType) -> _Converted:
    return _quick_decimals(text, t) or _exact_decimals(text, t)


def _quick_decimals(text: pa.Array, t: DataType) -> _Converted | None:
    """Texts of digits, signs and '.' only, short enough that Arrow's decimal cast cannot
    overflow 128 bits, where it silently wraps around (in parsing more than 38 digits, or in
    scaling to s fraction digits a text of more than 38 - s characters: "35" becomes
    0.97... as DECIMAL(38,37)). Such texts are read exactly (not so exponents, which Arrow reads
    more loosely than NUMBER_TEXT_PATTERN), and the safe cast refuses a value with non-zero
    digits beyond the scale or too many integer digits, as `_to_decimal` does."""
    if not _only_bytes(text, b"0123456789+-.") or _longest(text) > 38 - t.scale:
        return None
    values = _try_cast(text, to_arrow(t))
    return None if values is None else _Converted(values)


_DECIMAL_PARTS = (
    r"^(?P<sign>[+-]?)(?P<whole>[0-9]*)(?:\.(?P<fraction>[0-9]*))?"
    r"(?:[eE](?P<exponent_sign>[+-]?)0*(?P<exponent>[0-9]+))?$"
)  # NUMBER_TEXT_PATTERN in parts; "at least one digit" is checked apart


def _exact_decimals(text: pa.Array, t: DataType) -> _Converted:
    """NUMBER_TEXT_PATTERN as DECIMAL(p,s), exactly, for any texts. With the digits stripped of
    leading and trailing zeros, the exponents of the last and of the first of them decide, as
    quantize() and adjusted() do in `_to_decimal`: the last one must be at least -s, the first
    one below p-s. The value is then read by Arrow from a short text: sign, digits, 'e', exponent."""
    parts = pc.extract_regex(text, _DECIMAL_PARTS)
    whole, fraction, exponent_text = _part(parts, "whole"), _part(parts, "fraction"), _part(parts, "exponent")
    mantissa = pc.binary_join_element_wise(whole, fraction, "")
    significant = pc.ascii_ltrim(mantissa, "0")
    digits = pc.ascii_rtrim(significant, "0")
    zero = pc.equal(pc.binary_length(significant), 0)
    huge = pc.greater(pc.binary_length(exponent_text), MAX_EXPONENT_DIGITS)
    exponent = _number(pc.if_else(huge, "", exponent_text))
    exponent = pc.if_else(pc.equal(_part(parts, "exponent_sign"), "-"), pc.negate(exponent), exponent)
    trailing_zeros = pc.subtract(pc.binary_length(significant), pc.binary_length(digits))
    last = pc.add(pc.subtract(exponent, pc.binary_length(fraction)), trailing_zeros)
    first = pc.subtract(pc.add(last, pc.binary_length(digits)), 1)
    in_scale = pc.and_(pc.greater_equal(last, -t.scale), pc.less(first, t.precision - t.scale))
    fits = pc.or_(zero, pc.and_(pc.invert(huge), in_scale))
    ok = pc.and_(pc.greater(pc.binary_length(mantissa), 0), fits)
    exact = pc.binary_join_element_wise(_part(parts, "sign"), digits, "e", pc.cast(last, pa.string()), "")
    values = pc.cast(_null_unless(ok, pc.if_else(zero, "0", exact)), to_arrow(t))
    return _Converted(values, _bad(text, ok))


def _quick_dates(trimmed: pa.Array) -> _Converted | None:
    """Arrow's date32 parser reads exactly YYYY-MM-DD (ten ASCII characters, a real calendar day),
    the commonest of the date texts of docs/semantics.md, and refuses everything else; it also reads the year
    0000, which DATE does not hold. (Only tried when every text has ten bytes: a cast that
    refuses many values is slow, it formats an error for each.)"""
    if not _all(pc.equal(pc.binary_length(trimmed), 10)):
        return None
    days = _try_cast(trimmed, pa.date32())
    if days is None or not _all(pc.greater_equal(days, _FIRST_DATE)):
        return None
    return _Converted(days)


def _exact_dates(trimmed: pa.Array) -> _Converted:
    """The date texts of docs/semantics.md, as the reference's `_parse_date` reads them with cast_rules.DATE_PATTERN:
    6 or 8 ASCII digits (yymmdd, yyyymmdd), or a year of 2 or 4 digits, a month and a day of 1 or
    2 digits, joined by '-' twice or by '/' twice. Two-digit years by YEAR_PIVOT, then a
    real calendar day of years 1..9999. (Split and arithmetic: RE2 has no back-reference, and
    its captures are slow.)"""
    compact = pc.and_(pc.ascii_is_decimal(trimmed), _length_in(trimmed, (6, 8)))
    number = pc.cast(_null_unless(compact, trimmed), pa.int64())
    year, month, day = pc.divide(number, 10_000), _remainder(pc.divide(number, 100), 100), _remainder(number, 100)
    year_digits = pc.subtract(pc.cast(pc.binary_length(trimmed), pa.int64()), 4)
    separated = _two_same_separators(trimmed)
    if separated.true_count:
        fields = _separated_date_fields(pc.filter(trimmed, separated))
        year, month, day, year_digits = (
            pc.replace_with_mask(whole, separated, part) for whole, part in zip((year, month, day, year_digits), fields)
        )
    century = pc.if_else(pc.less(year, YEAR_PIVOT), 2000, 1900)
    year = pc.if_else(pc.equal(year_digits, 2), pc.add(year, century), year)
    days, real = _days_since_epoch(year, month, day)
    return _Converted(pc.cast(pc.cast(_null_unless(real, days), pa.int32()), pa.date32()), _bad(trimmed, real))


def _two_same_separators(text: pa.Array) -> pa.Array:
    """Whether a text holds two '-' and no '/', or two '/' and no '-'."""
    dashes, slashes = pc.count_substring(text, "-"), pc.count_substring(text, "/")
    two_dashes = pc.and_(pc.equal(dashes, 2), pc.equal(slashes, 0))
    return pc.fill_null(pc.or_(two_dashes, pc.and_(pc.equal(slashes, 2), pc.equal(dashes, 0))), False)


def _separated_date_fields(text: pa.Array) -> tuple[pa.Array, pa.Array, pa.Array, pa.Array]:
    """Year, month, day and the year's digit count of texts with two same separators; NULL where
    a part is not 2 or 4 digits (year) or 1 or 2 digits (month, day)."""
    parts = pc.split_pattern_regex(text, "[-/]")  # three parts each
    year, month, day = (pc.list_element(parts, i) for i in range(3))
    ok = pc.and_(
        pc.and_(pc.ascii_is_decimal(year), _length_in(year, (2, 4))),
        pc.and_(pc.and_(pc.ascii_is_decimal(month), _length_in(month, (1, 2))), pc.and_(pc.ascii_is_decimal(day), _length_in(day, (1, 2)))),
    )
    return (
        *(pc.cast(_null_unless(ok, part), pa.int64()) for part in (year, month, day)),
        _null_unless(ok, pc.cast(pc.binary_length(year), pa.int64())),
    )


def _length_in(text: pa.Array, lengths: tuple[int, ...]) -> pa.Array:
    return pc.is_in(pc.binary_length(text), value_set=pa.array(lengths, pa.int32()))


def _quick_datetimes(trimmed: pa.Array) -> _Converted | None:
    """Arrow's timestamp parser reads YYYY-MM-DD[( |T)hh[:mm[:ss[.f{1,9}]]]] plus zone suffixes.
    With only digits, '-', ':', '.', ' ' and 'T' (no zone) and the lengths of
    DATETIME_TEXT_PATTERN's forms (a date; seconds; 1..6 fraction digits), what it reads is
    exactly that pattern; it also reads the year 0000, which DATETIME does not hold."""
    if not _only_bytes(trimmed, b"0123456789-:. T"):
        return None
    if not _all(_datetime_lengths(trimmed)):
        return None
    stamps = _try_cast(trimmed, pa.timestamp("us"))
    if stamps is None or not _all(pc.greater_equal(stamps, _FIRST_STAMP)):
        return None
    return _Converted(stamps)


def _datetime_lengths(trimmed: pa.Array) -> pa.Array:
    """Whether each text is as long as one of DATETIME_TEXT_PATTERN's forms: 10, 19, 21..26."""
    lengths = pc.binary_length(trimmed)
    return pc.or_(pc.or_(pc.equal(lengths, 10), pc.equal(lengths, 19)), pc.and_(pc.greater_equal(lengths, 21), pc.less_equal(lengths, 26)))


def _exact_datetimes(trimmed: pa.Array) -> _Converted:
    """DATETIME_TEXT_PATTERN (the reference's `_parse_datetime`): a real day, hours below 24,
    minutes and seconds below 60, the fraction's digits padded to microseconds. The texts that
    match have their fields at fixed places (YYYY-MM-DD?hh:mm:ss.ffffff), taken by slicing."""
    text = _null_unless(pc.match_substring_regex(trimmed, _whole(DATETIME_TEXT_PATTERN)), trimmed)

    def field(start: int, stop: int) -> pa.Array:  # '' (so 0) where a bare date has no time
        return pc.utf8_slice_codeunits(text, start, stop)

    days, real = _days_since_epoch(_number(field(0, 4)), _number(field(5, 7)), _number(field(8, 10)))
    hour, minute, second = _number(field(11, 13)), _number(field(14, 16)), _number(field(17, 19))
    clock = pc.and_(pc.and_(pc.less(hour, 24), pc.less(minute, 60)), pc.less(second, 60))
    ok = pc.and_(real, clock)
    fraction = pc.cast(pc.utf8_rpad(field(20, 26), width=6, padding="0"), pa.int64())
    hours = pc.add(pc.multiply(days, 24), hour)
    seconds = pc.add(pc.multiply(pc.add(pc.multiply(hours, 60), minute), 60), second)
    micros = pc.add(pc.multiply(seconds, 1_000_000), fraction)
    return _Converted(pc.cast(_null_unless(ok, micros), pa.timestamp("us")), _bad(trimmed, ok))


# --------------------------------------------------------------------------------------------
# Calendar
# --------------------------------------------------------------------------------------------

_EPOCH = _dt.date(1970, 1, 1)
_FIRST_DAY = (_dt.date(1, 1, 1) - _EPOCH).days
_LAST_DAY = (_dt.date(9999, 12, 31) - _EPOCH).days
_FIRST_DATE = pa.scalar(_dt.date(1, 1, 1), pa.date32())
_FIRST_STAMP = pa.scalar(_dt.datetime(1, 1, 1), pa.timestamp("us"))
_MICROS_PER_DAY = 86_400_000_000
_MONTH_DAYS = pa.array([31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31], pa.int64())


def _days_since_epoch(year: pa.Array, month: pa.Array, day: pa.Array) -> tuple[pa.Array, pa.Array]:
    """Days from 1970-01-01 to a proleptic Gregorian date (H. Hinnant's days_from_civil), and
    whether the date is real (years 1..9999, months 1..12, a day of that month). Dates that are
    not real get meaningless numbers, never an error."""
    month_known = pc.and_(pc.greater_equal(month, 1), pc.less_equal(month, 12))
    leap = pc.or_(
        pc.and_(pc.equal(_remainder(year, 4), 0), pc.not_equal(_remainder(year, 100), 0)),
        pc.equal(_remainder(year, 400), 0),
    )
    month_days = pc.take(_MONTH_DAYS, pc.if_else(month_known, pc.subtract(month, 1), 0))
    month_days = pc.add(month_days, pc.cast(pc.and_(leap, pc.equal(month, 2)), pa.int64()))
    real = pc.and_(
        pc.and_(pc.greater_equal(year, 1), pc.less_equal(year, 9999)),
        pc.and_(month_known, pc.and_(pc.greater_equal(day, 1), pc.less_equal(day, month_days))),
    )
    march_year = pc.subtract(year, pc.cast(pc.less_equal(month, 2), pa.int64()))  # years start in March
    era = pc.divide(march_year, 400)
    year_of_era = pc.subtract(march_year, pc.multiply(era, 400))
    shifted_month = pc.if_else(pc.greater(month, 2), pc.subtract(month, 3), pc.add(month, 9))
    day_of_year = pc.add(pc.divide(pc.add(pc.multiply(shifted_month, 153), 2), 5), pc.subtract(day, 1))
    day_of_era = pc.add(
        pc.add(pc.multiply(year_of_era, 365), pc.divide(year_of_era, 4)),
        pc.subtract(day_of_year, pc.divide(year_of_era, 100)),
    )
    return pc.subtract(pc.add(pc.multiply(era, 146_097), day_of_era), 719_468), real


# --------------------------------------------------------------------------------------------
# Typed inputs
# --------------------------------------------------------------------------------------------


def _from_nulls(array: pa.Array, t: DataType) -> _Converted:
    return _Converted(pa.nulls(len(array), to_arrow(t)))


def _refused(array: pa.Array, t: DataType) -> _Converted:
    """Every value refused: a type coerce_value takes for no column type (times, durations,
    bytes, nested values), or not for this one."""
    return _Converted(pa.nulls(len(array), to_arrow(t)), pc.is_valid(array))


def _from_booleans(array: pa.Array, t: DataType) -> _Converted:
    if t.is_string:
        return _text_to_string(pc.cast(array, pa.string()), t)  # true / false
    return _Converted(array) if t.name == "BOOLEAN" else _refused(array, t)


def _from_integers(array: pa.Array, t: DataType) -> _Converted:
    if t.is_string:
        return _text_to_string(pc.cast(array, pa.string()), t)
    if t.name in ("LARGEINT", "DECIMAL"):
        return _from_decimals(pc.cast(array, pa.decimal128(38, 0)), t)  # every 64-bit integer fits
    if t.is_integer:
        return _integers_to_integer(array, t)
    if t.is_float:
        return _double_to_float(pc.cast(array, pa.float64(), safe=False), t)  # float(int): correctly rounded
    return _refused(array, t)


def _integers_to_integer(array: pa.Array, t: DataType) -> _Converted:
    width, low, high = array.type.bit_width, *integer_range(t)
    signed = pa.types.is_signed_integer(array.type)
    source_low, source_high = (-(2 ** (width - 1)), 2 ** (width - 1) - 1) if signed else (0, 2**width - 1)
    if low <= source_low and source_high <= high:  # every value fits (INT from int8, BIGINT from int64, ...)
        return _Converted(pc.cast(array, to_arrow(t)))
    if array.type != pa.uint64():
        return _int64_to_integer(pc.cast(array, pa.int64()), t)
    small = pc.less_equal(array, pa.scalar(2**63 - 1, pa.uint64()))
    converted = _int64_to_integer(pc.cast(_null_unless(small, array), pa.int64()), t)
    return _Converted(converted.values, _either(converted.bad, _bad(array, small)))


def _int64_to_integer(wide: pa.Array, t: DataType) -> _Converted:
    """int64 values as an integer type: a value outside its range is refused."""
    if t.name == "LARGEINT":
        return _Converted(pc.cast(wide, to_arrow(t)))
    low, high = integer_range(t)
    if low <= -(2**63) and high >= 2**63 - 1:
        return _Converted(wide)
    ok = pc.and_(pc.greater_equal(wide, low), pc.less_equal(wide, high))
    return _Converted(pc.cast(_null_unless(ok, wide), to_arrow(t)), _bad(wide, ok))


def _from_floats(array: pa.Array, t: DataType) -> _Converted:
    wide = pc.cast(array, pa.float64())  # float16 / float32 widen exactly
    if t.is_float:
        return _double_to_float(wide, t)
    if t.is_integer:
        return _double_to_integer(wide, t)
    if t.name == "DECIMAL":
        return _double_to_decimal(wide, t)
    return _refused(array, t)


def _double_to_float(wide: pa.Array, t: DataType) -> _Converted:
    """Doubles as FLOAT / DOUBLE: finite only. FLOAT holds the float32 nearest to the double
    (struct.pack('<f') in the reference, a C cast here), which must be finite too."""
    values = wide if t.name == "DOUBLE" else pc.cast(wide, pa.float32(), safe=False)
    return _Converted(values, _bad(wide, pc.is_finite(values)))


def _double_to_integer(wide: pa.Array, t: DataType) -> _Converted:
    """Doubles as an integer type: finite, integral and within the range, whose bounds are taken
    as the doubles nearest inside them (2**63 - 1 is no double; 10**38 - 1 neither)."""
    low, high = integer_range(t)
    integral = pc.and_(pc.is_finite(wide), pc.equal(pc.floor(wide), wide))
    in_range = pc.and_(pc.greater_equal(wide, _double_inside(low)), pc.less_equal(wide, _double_inside(high)))
    ok = pc.and_(integral, in_range)
    kept = _null_unless(ok, wide)
    # float64 -> decimal128 is exact for integral doubles; -> int64 for those in range
    values = pc.cast(kept, to_arrow(t)) if t.name == "LARGEINT" else pc.cast(pc.cast(kept, pa.int64()), to_arrow(t))
    return _Converted(values, _bad(wide, ok))


def _double_inside(bound: int) -> float:
    """The double nearest to `bound` on the side of zero (the bound itself when it is one)."""
    nearest = float(bound)
    return math.nextafter(nearest, 0.0) if abs(int(nearest)) > abs(bound) else nearest


def _double_to_decimal(wide: pa.Array, t: DataType) -> _Converted:
    """Doubles as DECIMAL the way the reference reads them: their shortest repr, exactly. Arrow's
    float-to-text gives the same shortest round-trip digits as Python's repr."""
    finite = pc.is_finite(wide)
    converted = _text_to_decimal(pc.cast(_null_unless(finite, wide), pa.string()), t)
    return _Converted(converted.values, _either(converted.bad, _bad(wide, finite)))


def _from_decimals(array: pa.Array, t: DataType) -> _Converted:
    if t.is_string:
        return _text_to_string(_decimal_texts(array), t)
    if t.is_integer:
        return _decimal_to_integer(array, t)
    if t.name == "DECIMAL":
        return _decimal_to_decimal(array, t)
    if t.is_float:
        # Arrow's decimal-to-double is not correctly rounded; fast_float reading the text is.
        return _double_to_float(pc.cast(pc.cast(array, pa.string()), pa.float64()), t)
    return _refused(array, t)


def _decimal_texts(array: pa.Array) -> pa.Array:
    """Plain notation with the type's scale (`typed_text`). Arrow writes a value below 1e-6
    scientifically (1E-10); those few are written by the reference."""
    texts = pc.cast(array, pa.string())
    scientific = pc.match_substring(texts, "E")
    if not pc.any(scientific).as_py():
        return texts
    values = texts.to_pylist()
    for index in pc.indices_nonzero(scientific).to_pylist():
        values[index] = typed_text(array[index].as_py())
    return pa.array(values, pa.string())


def _decimal_to_integer(array: pa.Array, t: DataType) -> _Converted:
    low, high = integer_range(t)
    ok = pc.and_(_no_digits_below(array, 0), _decimal_between(array, low, high, inclusive=True))
    return _Converted(pc.cast(_null_unless(ok, array), to_arrow(t)), _bad(array, ok))


def _decimal_to_decimal(array: pa.Array, t: DataType) -> _Converted:
    """The reference's `_to_decimal`: below 10**(p-s) in magnitude, no non-zero digit beyond s."""
    bound = 10 ** (t.precision - t.scale)
    ok = pc.and_(_no_digits_below(array, t.scale), _decimal_between(array, -bound, bound, inclusive=False))
    return _Converted(pc.cast(_null_unless(ok, array), to_arrow(t)), _bad(array, ok))


def _no_digits_below(array: pa.Array, scale: int) -> pa.Array:
    """Whether each value has no non-zero digit beyond `scale` fraction digits: truncating it there
    (an unsafe cast truncates) and widening it back gives it unchanged."""
    source = array.type
    if source.scale <= scale:
        return pc.is_valid(array)
    truncated = pc.cast(array, _decimal_type(source, scale), safe=False)
    return pc.equal(pc.cast(truncated, source), array)


def _decimal_type(source: pa.DataType, scale: int) -> pa.DataType:
    """A decimal type of `source`'s width and precision with another scale."""
    make = pa.decimal256 if pa.types.is_decimal256(source) else pa.decimal128
    return make(source.precision, scale)


def _decimal_between(array: pa.Array, low: int, high: int, inclusive: bool) -> pa.Array:
    """low <= value <= high (or strictly). A bound beyond every value of the array's type is no
    condition (and could not be written in that type)."""
    largest = decimal.Decimal(10) ** (array.type.precision - array.type.scale)  # above every value
    above, below = (pc.greater_equal, pc.less_equal) if inclusive else (pc.greater, pc.less)
    ok = pc.is_valid(array)
    if high < largest:
        ok = pc.and_(ok, below(array, pa.scalar(decimal.Decimal(high), array.type)))
    if -low < largest:
        ok = pc.and_(ok, above(array, pa.scalar(decimal.Decimal(low), array.type)))
    return ok


def _from_dates(array: pa.Array, t: DataType) -> _Converted:
    """Dates as DATE, or as DATETIME at midnight; dates Python cannot hold (years beyond
    1..9999, which as_py refuses) are refused. Into text: 2024-01-01."""
    if not (t.is_temporal or t.is_string):
        return _refused(array, t)
    days = pc.cast(array, pa.date32(), safe=False)
    number = pc.cast(days, pa.int32())
    ok = pc.and_(pc.greater_equal(number, _FIRST_DAY), pc.less_equal(number, _LAST_DAY))
    dates = _null_unless(ok, days)
    if t.is_string:
        text = _text_to_string(pc.cast(dates, pa.string()), t)
        return _Converted(text.values, _either(text.bad, _bad(array, ok)))
    values = dates if t.name == "DATE" else pc.cast(dates, pa.timestamp("us"))
    return _Converted(values, _bad(array, ok))


_MICROS = {"s": 1_000_000, "ms": 1_000, "us": 1}
_FIRST_MICRO = _FIRST_DAY * _MICROS_PER_DAY
_LAST_MICRO = (_LAST_DAY + 1) * _MICROS_PER_DAY - 1


def _from_timestamps(array: pa.Array, t: DataType) -> _Converted:
    """Timestamps as the reference takes datetimes: a zoned one is its UTC time, made naive;
    DATETIME keeps microseconds (nanoseconds are floored, as a pandas Timestamp's fields are);
    DATE takes only midnight; text is the UTC time as alterflow shows it (`typed_text`)."""
    if not (t.is_temporal or t.is_string):
        return _refused(array, t)
    micros, ok = _utc_micros(array)
    if t.is_string:
        moments = pc.cast(_null_unless(ok, micros), pa.timestamp("us")).to_pylist()  # text per value: rare
        text = _text_to_string(pa.array([None if m is None else typed_text(m) for m in moments], pa.string()), t)
        return _Converted(text.values, _either(text.bad, _bad(array, ok)))
    if t.name == "DATETIME":
        return _Converted(pc.cast(_null_unless(ok, micros), pa.timestamp("us")), _bad(array, ok))
    days = _floor_divide(micros, _MICROS_PER_DAY)
    ok = pc.and_(ok, pc.equal(pc.multiply(days, _MICROS_PER_DAY), micros))
    return _Converted(pc.cast(pc.cast(_null_unless(ok, days), pa.int32()), pa.date32()), _bad(array, ok))


def _utc_micros(array: pa.Array) -> tuple[pa.Array, pa.Array]:
    """Microseconds since 1970-01-01 UTC (the stored values of a zoned timestamp are UTC) and
    whether the time is within years 1..9999 (nanosecond timestamps always are)."""
    raw = pc.cast(array, pa.int64())
    if array.type.unit == "ns":
        return _floor_divide(raw, 1_000), pc.is_valid(raw)
    factor = _MICROS[array.type.unit]
    ok = pc.and_(pc.greater_equal(raw, -(-_FIRST_MICRO // factor)), pc.less_equal(raw, _LAST_MICRO // factor))
    return pc.multiply(_null_unless(ok, raw), factor), ok
